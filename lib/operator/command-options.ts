// Every command's options, one table each: node:util parseArgs parses with it (strict) and the usage's synopsis
// and option lines are rendered from it, so a flag the parser takes is one the usage names. An unknown flag, a
// flag missing its value or given one it does not take, and an extra argument are a BadUsage naming it
// (runCommand: the message, the usage, EXIT.usage). lib/jobs/invoke-args.ts is the job runner's table.
import { parseArgs } from "node:util";
import { BadUsage } from "./exit-codes";

export interface CommandOption {
  readonly type: "string" | "boolean";
  readonly short?: string;
  /** Repeatable: the values come back as an array. */
  readonly multiple?: boolean;
  /** The value's name in the usage ("FILE"), for a string option. */
  readonly arg?: string;
}
export type CommandOptions = Readonly<Record<string, CommandOption>>;

const flagOf = (name: string, o: CommandOption) => (o.arg ? `--${name} ${o.arg}` : `--${name}`);

/** "[--json] [--junit FILE]": the options part of a synopsis line. */
export function optionsSynopsis(options: CommandOptions): string {
  return Object.entries(options)
    .map(([name, o]) => `[${flagOf(name, o)}]`)
    .join(" ");
}

const dashed = (flag: string) => `one starting with "-" goes as ${flag}=VALUE`;

/** parseArgs' complaint in this project's words, naming the flag or argument as given. */
function complaint(err: unknown, options: CommandOptions): string {
  const e = err as { code?: string; message?: string };
  const quoted = /'([^']*)'/.exec(e.message ?? "")?.[1] ?? "";
  const flag = quoted.split(" ")[0];
  const option = options[flag.replace(/^--?/, "")] as CommandOption | undefined;
  switch (e.code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return `unknown option ${flag}`;
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
      return `unexpected ${quoted}`;
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      if (option?.type === "boolean") return `${flag} takes no value`;
      return `${flag} needs a value${option?.arg ? ` (${option.arg})` : ""}; ${dashed(flag)}`;
    default:
      return e.message ?? String(err);
  }
}

/**
 * The options and positional arguments of `argv`, parsed strictly with `options`; at most `positionals`
 * positional arguments (default none). Throws BadUsage naming what is wrong.
 */
export function parseOptions<const T extends CommandOptions>(options: T, argv: readonly string[], positionals = 0) {
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: T; strict: true; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], options, strict: true, allowPositionals: true });
  } catch (err) {
    throw new BadUsage(complaint(err, options));
  }
  if (parsed.positionals.length > positionals) {
    throw new BadUsage(`unexpected ${parsed.positionals.slice(positionals).join(" ")}`);
  }
  return parsed;
}
