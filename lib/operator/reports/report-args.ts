// The arguments `npm run check` and `npm run status` share: --json (rows as JSON on stdout instead of the
// table) and --junit FILE (the rows also written as a JUnit report, for CI; the console output stays).
import { optionsSynopsis, parseOptions } from "../command-options";

const REPORT_OPTIONS = {
  json: { type: "boolean" },
  junit: { type: "string", arg: "FILE" },
} as const;

export interface ReportArgs {
  json: boolean;
  junit?: string;
}

/** The usage line of `npm run <command>`. */
export function reportUsage(command: string): string {
  return `usage: npm run ${command} [-- ${optionsSynopsis(REPORT_OPTIONS)}]`;
}

/** The arguments; BadUsage naming the flag for an unknown one or --junit without its path. */
export function parseReportArgs(argv: readonly string[]): ReportArgs {
  const { values } = parseOptions(REPORT_OPTIONS, argv);
  return { json: values.json === true, ...(values.junit === undefined ? {} : { junit: values.junit }) };
}
