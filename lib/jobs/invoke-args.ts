// The job runner's command line: the flag table, the usage text, parsing argv into InvokeArgs and
// building argv (and the /bin/sh line) back from them. The local job target builds with the same table the
// CLI parses with, so a flag renamed on one side only does not compile, and a value the CLI would refuse
// fails at synth rather than at apply. The CLI is user-visible (`npm run invoke`, docs/job-runner.md): flags, usage
// text and messages are its interface, not implementation details.
import { parseArgs } from "node:util";
import { entryPoints, PROJECT_ROOT } from "../entry-points";
import { JOB_ENV_VARS } from "../shared/job-env";
import { command } from "../shared/shell-quote";
import { DEFAULT_ENTRYPOINT, DEFAULT_TIMEOUT_SEC, LOG_RUNS_KEPT, parseEntrypoint } from "./job-contract";

export { JOB_ENV_VARS, type JobEnvVar } from "../shared/job-env";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const JOB_NAME = /^[A-Za-z0-9._-]{1,100}$/;
/** setTimeout's limit (2^31-1 ms), in seconds. */
const MAX_TIMEOUT_SEC = 2147483;

/**
 * Every option of the CLI, in usage order: the flag (the key, without "--"), parseArgs' type, the
 * argument's name and the usage line(s). Both the parser and the command-line builder index this table
 * with typed keys, so a flag misspelt or renamed on one side only does not compile.
 */
const OPTIONS = {
  dir: { type: "string", arg: "DIR", help: ["run an already-bundled job directory instead"] },
  event: { type: "string", arg: "JSON", help: ["the event, one JSON object (default {})"] },
  "event-file": { type: "string", arg: "FILE", help: ['read the event from FILE; "-" reads stdin'] },
  timeout: { type: "string", arg: "SEC", help: [`kill the job after SEC seconds (default ${DEFAULT_TIMEOUT_SEC})`] },
  "ssh-key-file": { type: "string", arg: "PATH", help: ["read SSH_KEY from PATH instead of the environment"] },
  "result-file": {
    type: "string",
    arg: "PATH",
    help: ['also write the final {"phase","message"} object to PATH (atomically)'],
  },
  "result-tfstate": {
    type: "string",
    arg: "PATH",
    help: ["also write it as the outputs of a Terraform state file (what the local target reads back)"],
  },
  "log-dir": {
    type: "string",
    arg: "DIR",
    help: [
      "also keep the job's progress in DIR/<name>-<UTC time>.log (0600, secrets scrubbed;",
      `the last ${LOG_RUNS_KEPT} runs of each job are kept)`,
    ],
  },
  "event-env": { type: "string", arg: "NAME", help: ["read the event (JSON) from environment variable NAME"] },
  "secret-env": {
    type: "string",
    multiple: true,
    arg: "F=VAR",
    help: [
      "set event field F from environment variable VAR (e.g. db_password=TF_VAR_pg_password),",
      "so a secret is on no command line and in no file; repeatable",
    ],
  },
  "secret-file": {
    type: "string",
    multiple: true,
    arg: "F=PATH#P",
    help: [
      "set event field F from string property P of the JSON file PATH (e.g.",
      "tls_ca_key=.vm-install/web/postgres-ca.json#key: the stack's CA); repeatable",
    ],
  },
  name: { type: "string", arg: "NAME", help: ["the job's name, shown in progress and in a failure"] },
  "job-slots": {
    type: "string",
    arg: "N:DIR",
    help: [
      "run only while fewer than N runners hold a slot file in DIR, else wait (a stack's",
      "parallelism, held by its local jobs whatever -parallelism Terraform was given)",
    ],
  },
  entrypoint: { type: "string", arg: "M.F", help: [`module.function to call (default ${DEFAULT_ENTRYPOINT})`] },
  "handlers-dir": {
    type: "string",
    arg: "DIR",
    help: ["where <installer> folders are (default handlers/ of this project)"],
  },
  help: { type: "boolean", short: "h", arg: "", help: ["this text"] },
} as const;
type Flag = keyof typeof OPTIONS;

function usageLines(left: string, help: readonly string[]): string[] {
  return help.map((line, i) => `  ${(i === 0 ? left : "").padEnd(21)} ${line}`);
}

const USAGE_HEAD = `usage: npm run invoke -- <installer> [options]
       npm run invoke -- --dir DIR [options]`;

export const USAGE = [
  USAGE_HEAD,
  "",
  ...usageLines("<installer>", ["bundle handlers/<installer>/handler.ts (as the stack does) and run it"]),
  ...Object.entries(OPTIONS).flatMap(([flag, o]) =>
    usageLines(flag === "help" ? "-h, --help" : `--${flag} ${o.arg}`, o.help),
  ),
  "",
  `The job gets only these variables from the environment: ${JOB_ENV_VARS.join(", ")}.`,
  `Progress is printed to stdout; the last stdout line is {"phase": "Succeeded"|"Failed", "message": ...}.`,
].join("\n");

/** What to print under a usage error: the two synopsis lines and where the rest is. */
export const USAGE_HINT = `${USAGE_HEAD}\n\nnpm run invoke -- --help lists every option.`;

/** A command line the CLI refuses; its message names the option and what is allowed. */
export class UsageError extends Error {}

/** An event field the runner sets from an environment variable, so the value is on no command line. */
export interface SecretEnv {
  readonly field: string;
  readonly variable: string;
}

/** An event field the runner sets from a property of a JSON file, so the value is in no other file. */
export interface SecretFile {
  readonly field: string;
  readonly file: string;
  readonly property: string;
}

/**
 * What a command line says, checked for shape but before anything is read from disk or the environment:
 * the form the local target builds and the parser gives back (one round trip, tested).
 */
export interface InvokeArgs {
  /** Bundle handlers/<installer>/handler.ts and run it; exclusive with `dir`. */
  readonly installer?: string;
  /** An already-bundled job directory. */
  readonly dir?: string;
  /** The event itself; at most one of event, eventFile, eventEnv. */
  readonly event?: Record<string, unknown>;
  /** A file holding the event, "-" for stdin. */
  readonly eventFile?: string;
  /** An environment variable holding the event (JSON). */
  readonly eventEnv?: string;
  readonly timeoutSec?: number;
  readonly sshKeyFile?: string;
  readonly resultFile?: string;
  readonly resultTfstate?: string;
  /** Where the job's progress is kept, one file per run. */
  readonly logDir?: string;
  readonly secretEnv?: readonly SecretEnv[];
  readonly secretFile?: readonly SecretFile[];
  readonly name?: string;
  readonly entrypoint?: string;
  readonly handlersDir?: string;
  /** At most `count` jobs sharing `dir` run at once (lib/jobs/job-slots.ts). */
  readonly jobSlots?: { readonly count: number; readonly dir: string };
}

/** An event given as text (a flag, a file, a variable): one JSON object. `where` names its source. */
export function parseEvent(text: string, where: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(
      `${where} is not valid JSON (${(err as Error).message}); ` +
        `pass one JSON object, e.g. --event '{"packages":["git"]}'`,
    );
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const got = Array.isArray(value) ? "an array" : JSON.stringify(value);
    throw new UsageError(`${where} must be a JSON object (got ${got}); e.g. --event '{"packages":["git"]}'`);
  }
  return value as Record<string, unknown>;
}

function parseFlags(argv: readonly string[]) {
  try {
    return parseArgs({ args: [...argv], allowPositionals: true, strict: true, options: OPTIONS });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function checkEntrypoint(entrypoint: string | undefined): void {
  if (entrypoint === undefined) return;
  try {
    parseEntrypoint(entrypoint);
  } catch (err) {
    throw new UsageError(`--entrypoint: ${(err as Error).message}`);
  }
}

function parseTimeout(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const timeoutSec = Number(text);
  if (!Number.isFinite(timeoutSec) || timeoutSec <= 0 || timeoutSec > MAX_TIMEOUT_SEC) {
    throw new UsageError(`--timeout ${text}: expected a positive number of seconds (at most ${MAX_TIMEOUT_SEC})`);
  }
  return timeoutSec;
}

function parseSecretEnv(specs: readonly string[] | undefined): SecretEnv[] | undefined {
  return specs?.map((spec): SecretEnv => {
    const [field, variable, ...rest] = spec.split("=");
    if (rest.length > 0 || variable === undefined || !ENV_NAME.test(field) || !ENV_NAME.test(variable)) {
      throw new UsageError(`--secret-env ${spec}: expected FIELD=VARIABLE, e.g. db_password=TF_VAR_pg_password`);
    }
    return { field, variable };
  });
}

function parseSecretFile(specs: readonly string[] | undefined): SecretFile[] | undefined {
  return specs?.map((spec): SecretFile => {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=(.+)#([A-Za-z_][A-Za-z0-9_]*)$/s.exec(spec);
    if (!m) {
      throw new UsageError(
        `--secret-file ${spec}: expected FIELD=PATH#PROPERTY, e.g. tls_ca_key=.vm-install/web/postgres-ca.json#key`,
      );
    }
    return { field: m[1], file: m[2], property: m[3] };
  });
}

function parseJobSlots(text: string | undefined): InvokeArgs["jobSlots"] {
  if (text === undefined) return undefined;
  const m = /^(\d{1,3}):(.+)$/.exec(text);
  if (!m || Number(m[1]) < 1 || Number(m[1]) > 256)
    throw new UsageError(`--job-slots ${text}: expected N:DIR, N from 1 to 256, e.g. 10:.vm-install/web/slots`);
  return { count: Number(m[1]), dir: m[2] };
}

/** Parses the CLI's argv (without node and the script); "help" for -h/--help. Throws UsageError. */
export function parseInvokeArgs(argv: readonly string[]): InvokeArgs | "help" {
  const { values: o, positionals } = parseFlags(argv);
  if (o.help) return "help";

  if (positionals.length > 1) throw new UsageError(`one installer at a time (got ${positionals.join(", ")})`);
  const installer = positionals[0];
  if (installer !== undefined && o.dir !== undefined) throw new UsageError("give an installer name or --dir, not both");
  checkEntrypoint(o.entrypoint);
  if ([o.event, o["event-file"], o["event-env"]].filter((v) => v !== undefined).length > 1) {
    throw new UsageError("give one of --event, --event-file, --event-env");
  }
  const event = o.event === undefined ? undefined : parseEvent(o.event, "--event");
  const timeoutSec = parseTimeout(o.timeout);
  const secretEnv = parseSecretEnv(o["secret-env"]);
  const secretFile = parseSecretFile(o["secret-file"]);
  if (o.name !== undefined && !JOB_NAME.test(o.name))
    throw new UsageError(`--name ${o.name}: letters, digits, . _ - only`);

  const args: { -readonly [K in keyof InvokeArgs]: InvokeArgs[K] } = {
    installer,
    dir: o.dir,
    event,
    eventFile: o["event-file"],
    eventEnv: o["event-env"],
    timeoutSec,
    sshKeyFile: o["ssh-key-file"],
    resultFile: o["result-file"],
    resultTfstate: o["result-tfstate"],
    logDir: o["log-dir"],
    secretEnv,
    secretFile,
    name: o.name,
    entrypoint: o.entrypoint,
    handlersDir: o["handlers-dir"],
    jobSlots: parseJobSlots(o["job-slots"]),
  };
  // Only the options given become keys, so the result says exactly what the command line said.
  for (const key of Object.keys(args) as (keyof InvokeArgs)[]) if (args[key] === undefined) delete args[key];
  return args;
}

/**
 * The argv that parseInvokeArgs turns back into `args`. Throws (at synth, for the local target) when the
 * CLI would refuse it, rather than leaving that to the first apply; the message is the CLI's, naming the
 * option, so the value can be fixed where it came from (the job's name, its paths, its secret variables).
 */
export function invokeArgv(args: InvokeArgs): string[] {
  const argv: string[] = args.installer === undefined ? [] : [args.installer];
  // "--flag=value" only where a value starts with "-": the parser would take "--flag -x" for a missing value.
  const add = (flag: Flag, value: string | undefined) => {
    if (value !== undefined) argv.push(...(value.startsWith("-") ? [`--${flag}=${value}`] : [`--${flag}`, value]));
  };
  add("name", args.name);
  add("dir", args.dir);
  add("event", args.event && JSON.stringify(args.event));
  add("event-file", args.eventFile);
  add("event-env", args.eventEnv);
  add("ssh-key-file", args.sshKeyFile);
  add("timeout", args.timeoutSec === undefined ? undefined : String(args.timeoutSec));
  add("result-file", args.resultFile);
  add("result-tfstate", args.resultTfstate);
  add("log-dir", args.logDir);
  add("entrypoint", args.entrypoint);
  add("handlers-dir", args.handlersDir);
  add("job-slots", args.jobSlots && `${args.jobSlots.count}:${args.jobSlots.dir}`);
  for (const s of args.secretEnv ?? []) add("secret-env", `${s.field}=${s.variable}`);
  for (const s of args.secretFile ?? []) add("secret-file", `${s.field}=${s.file}#${s.property}`);
  try {
    parseInvokeArgs(argv);
  } catch (err) {
    const job = args.name === undefined ? "" : `job ${args.name}: `;
    throw new Error(
      `${job}the job runner (bin/invoke.ts) would refuse the command line built for it, ` +
        `saying: ${(err as Error).message}`,
    );
  }
  return argv;
}

/** The program part of the runner's command line: Node, the transpile-only loader, the CLI script. */
export function invokeProgram(projectRoot: string = PROJECT_ROOT, nodePath: string = process.execPath): string[] {
  const { tsRegister, invokeCli } = entryPoints(projectRoot);
  return [nodePath, "-r", tsRegister, invokeCli];
}

/** One /bin/sh command line running the CLI with `args`, every word quoted by lib/shared/shell-quote. */
export function invokeCommandLine(args: InvokeArgs, projectRoot?: string, nodePath?: string): string {
  return command(...invokeProgram(projectRoot, nodePath), ...invokeArgv(args));
}
