// One exit-code convention for every command the docs document, so a script or CI job tells "done", "done,
// and a person must look", "failed" and "called wrong" apart the same way everywhere. `npm run docs` writes the
// table into docs/exit-codes.md; runCommand is how a command's main ends with one of them.

/** The codes; 64 is sysexits(3)'s EX_USAGE, 2 what `terraform plan -detailed-exitcode` gives a change. */
export const EXIT = { ok: 0, attention: 2, error: 1, usage: 64 } as const;
export type ExitName = keyof typeof EXIT;
export type ExitCode = (typeof EXIT)[ExitName];

/** Why each code, one line each: docs/exit-codes.md's table. */
const EXIT_MEANINGS: Readonly<Record<ExitName, string>> = {
  ok: "done; nothing needs attention (`--help` too: the usage on stdout)",
  attention: "done, and a person must look: drift (`npm run check`), an installer not ok (`npm run status`)",
  error: "failed: stderr says what, where and what to do (an unreachable VM, no deployed state, a refusal)",
  usage: "bad usage, nothing done: an unknown option, a missing or extra argument, a VM not in cdktf.json",
};

/** docs/exit-codes.md's table (between the generated:exit-codes markers). */
export function exitCodesReference(): string {
  const rows = (Object.keys(EXIT) as ExitName[])
    .sort((a, b) => EXIT[a] - EXIT[b])
    .map((name) => `| ${EXIT[name]} | ${name} | ${EXIT_MEANINGS[name]} |`);
  return ["| code | meaning | when |", "| --- | --- | --- |", ...rows].join("\n");
}

/** Thrown by a command's argument handling: runCommand prints it with the usage and ends with EXIT.usage. */
export class BadUsage extends Error {}

export interface CommandSpec {
  /** The prefix of its stderr lines: "check", "status", ... */
  readonly name: string;
  /** The usage text, from "usage: " on. */
  readonly usage: string;
  /** "first": only argv[0] asks for help (later arguments belong to terraform apply). Default: anywhere. */
  readonly help?: "anywhere" | "first";
  /** What --help prints, when more than the usage (every option). */
  readonly helpText?: string;
}

const HELP = ["--help", "-h"];

/** Whether argv asks for the usage. */
function asksForHelp(argv: readonly string[], where: CommandSpec["help"] = "anywhere"): boolean {
  return where === "first" ? HELP.includes(argv[0]) : argv.some((a) => HELP.includes(a));
}

/** Prints a bad-usage message and the usage (once: a message may end with it) on stderr; EXIT.usage. */
function badUsage(spec: CommandSpec, message: string): typeof EXIT.usage {
  const usage = message.includes(spec.usage) ? "" : `${spec.usage}\n`;
  process.stderr.write(`${spec.name}: ${message}\n${usage}`);
  return EXIT.usage;
}

/**
 * Runs a command's main: --help prints the usage on stdout (EXIT.ok), a BadUsage goes to badUsage, anything else
 * thrown is an internal error (EXIT.error). The code is set as process.exitCode, so pending output and log files
 * are flushed first; `exit: true` ends the process at once (a command whose prompt or socket would keep it alive).
 */
export async function runCommand(
  spec: CommandSpec,
  argv: readonly string[],
  main: (argv: string[]) => number | Promise<number>,
  opts: { exit?: boolean } = {},
): Promise<number> {
  let code: number;
  if (asksForHelp(argv, spec.help)) {
    process.stdout.write(`${spec.helpText ?? spec.usage}\n`);
    code = EXIT.ok;
  } else {
    try {
      code = await main([...argv]);
    } catch (err) {
      if (err instanceof BadUsage) code = badUsage(spec, err.message);
      else {
        process.stderr.write(`${spec.name}: internal error: ${(err as Error).stack ?? err}\n`);
        code = EXIT.error;
      }
    }
  }
  if (opts.exit) process.exit(code);
  process.exitCode = code;
  return code;
}
