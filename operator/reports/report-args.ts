// The arguments `npm run check` and `npm run status` share: --json (rows as JSON on stdout instead of the
// table) and --junit FILE (the rows also written as a JUnit report, for CI; the console output stays).
export interface ReportArgs {
  json: boolean;
  junit?: string;
}

/** The arguments, or what is wrong with them in words that end with the usage line. */
export function parseReportArgs(argv: readonly string[], command: string): ReportArgs | { error: string } {
  const usage = `usage: npm run ${command} [-- [--json] [--junit FILE]]`;
  const args: ReportArgs = { json: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--json") args.json = true;
    else if (arg === "--junit" || arg.startsWith("--junit=")) {
      const file = arg === "--junit" ? argv[++i] : arg.slice("--junit=".length);
      const missing = !file || file.startsWith("--");
      if (missing) return { error: `--junit needs the report's path, e.g. --junit report.xml; ${usage}` };
      args.junit = file;
    } else return { error: `unknown argument ${arg}; ${usage}` };
  }
  return args;
}
