// The protocol between the local job target (lib/jobs/local-job.ts), which writes a command line for the
// job runner's CLI (bin/invoke.ts), and that CLI, which parses it, runs the job and writes a result state
// the target reads back through terraform_remote_state. Both sides used to spell the flags, the quoting,
// the job's env var names and the state's outputs separately; a rename on one side then broke deploys
// only at apply time. Here each is written once, so the compiler and one round-trip test hold them
// together. The CLI is user-visible (`npm run invoke`, README): flags, usage text and messages are its
// interface, not implementation details.
import * as fs from "fs";
import * as path from "path";
import { parseArgs } from "util";
import { command } from "../../shared/shell-quote";
import { PROJECT_ROOT } from "../bundling/bundle";
import { DEFAULT_ENTRYPOINT, DEFAULT_TIMEOUT_SEC, JobResult, parseEntrypoint } from "./run-job";

/** The job env_vars of the Job contract: nothing else from the invoking environment reaches the handler. */
export const JOB_ENV_VARS = ["VM_IP", "SSH_USER", "SSH_KEY", "SSH_PORT", "SSH_HOST_KEY_SHA256"] as const;
export type JobEnvVar = (typeof JOB_ENV_VARS)[number];

/** Event fields whose string values are scrubbed from the output, besides SSH_KEY. */
const SECRET_FIELD = /pass(word)?|secret|token|private_?key/i;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const JOB_NAME = /^[A-Za-z0-9._-]{1,100}$/;
const INSTALLER_NAME = /^[a-z0-9][a-z0-9-]*$/;
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
  "result-file": { type: "string", arg: "PATH", help: ['also write the final {"phase","message"} object to PATH (atomically)'] },
  "result-tfstate": { type: "string", arg: "PATH", help: ["also write it as the outputs of a Terraform state file (for terraform_remote_state)"] },
  "event-env": { type: "string", arg: "NAME", help: ["read the event (JSON) from environment variable NAME"] },
  "secret-env": {
    type: "string",
    multiple: true,
    arg: "F=VAR",
    help: ["set event field F from environment variable VAR (e.g. db_password=TF_VAR_pg_password),", "so a secret is on no command line and in no file; repeatable"],
  },
  name: { type: "string", arg: "NAME", help: ["the job's name, shown in progress and in a failure"] },
  entrypoint: { type: "string", arg: "M.F", help: [`module.function to call (default ${DEFAULT_ENTRYPOINT})`] },
  "handlers-dir": { type: "string", arg: "DIR", help: ["where <installer> folders are (default handlers/ of this project)"] },
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
  ...Object.entries(OPTIONS).flatMap(([flag, o]) => usageLines(flag === "help" ? "-h, --help" : `--${flag} ${o.arg}`, o.help)),
  "",
  `The job gets only these variables from the environment: ${JOB_ENV_VARS.join(", ")}.`,
  `Progress is printed to stdout; the last stdout line is {"phase": "Succeeded"|"Failed", "message": ...}.`,
  "Exit code: 0 Succeeded, 1 Failed, 2 bad usage.",
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
  readonly secretEnv?: readonly SecretEnv[];
  readonly name?: string;
  readonly entrypoint?: string;
  readonly handlersDir?: string;
}

function parseEvent(text: string, where: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${where} is not valid JSON (${(err as Error).message}); pass one JSON object, e.g. --event '{"packages":["git"]}'`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new UsageError(`${where} must be a JSON object (got ${Array.isArray(value) ? "an array" : JSON.stringify(value)}); e.g. --event '{"packages":["git"]}'`);
  }
  return value as Record<string, unknown>;
}

/** Parses the CLI's argv (without node and the script); "help" for -h/--help. Throws UsageError. */
export function parseInvokeArgs(argv: readonly string[]): InvokeArgs | "help" {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, strict: true, options: OPTIONS });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values: o, positionals } = parsed;
  if (o.help) return "help";

  if (positionals.length > 1) throw new UsageError(`one installer at a time (got ${positionals.join(", ")})`);
  const installer = positionals[0];
  if (installer !== undefined && o.dir !== undefined) throw new UsageError("give an installer name or --dir, not both");

  if (o.entrypoint !== undefined) {
    try {
      parseEntrypoint(o.entrypoint);
    } catch (err) {
      throw new UsageError(`--entrypoint: ${(err as Error).message}`);
    }
  }

  if ([o.event, o["event-file"], o["event-env"]].filter((v) => v !== undefined).length > 1) {
    throw new UsageError("give one of --event, --event-file, --event-env");
  }
  const event = o.event === undefined ? undefined : parseEvent(o.event, "--event");

  let timeoutSec: number | undefined;
  if (o.timeout !== undefined) {
    timeoutSec = Number(o.timeout);
    if (!Number.isFinite(timeoutSec) || timeoutSec <= 0 || timeoutSec > MAX_TIMEOUT_SEC) {
      throw new UsageError(`--timeout ${o.timeout}: expected a positive number of seconds (at most ${MAX_TIMEOUT_SEC})`);
    }
  }

  const secretEnv = o["secret-env"]?.map((spec): SecretEnv => {
    const [field, variable, ...rest] = spec.split("=");
    if (rest.length > 0 || variable === undefined || !ENV_NAME.test(field) || !ENV_NAME.test(variable)) {
      throw new UsageError(`--secret-env ${spec}: expected FIELD=VARIABLE, e.g. db_password=TF_VAR_pg_password`);
    }
    return { field, variable };
  });

  if (o.name !== undefined && !JOB_NAME.test(o.name)) throw new UsageError(`--name ${o.name}: letters, digits, . _ - only`);

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
    secretEnv,
    name: o.name,
    entrypoint: o.entrypoint,
    handlersDir: o["handlers-dir"],
  };
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
  add("entrypoint", args.entrypoint);
  add("handlers-dir", args.handlersDir);
  for (const s of args.secretEnv ?? []) add("secret-env", `${s.field}=${s.variable}`);
  try {
    parseInvokeArgs(argv);
  } catch (err) {
    const job = args.name === undefined ? "" : `job ${args.name}: `;
    throw new Error(`${job}the job runner (bin/invoke.ts) would refuse the command line built for it, saying: ${(err as Error).message}`);
  }
  return argv;
}

/** The program part of the runner's command line: Node, the transpile-only loader, the CLI script. */
export function invokeProgram(projectRoot: string = PROJECT_ROOT, nodePath: string = process.execPath): string[] {
  return [nodePath, "-r", path.join(projectRoot, "bin", "ts-register.js"), path.join(projectRoot, "bin", "invoke.ts")];
}

/** One /bin/sh command line running the CLI with `args`, every word quoted by shared/shell-quote. */
export function invokeCommandLine(args: InvokeArgs, projectRoot?: string, nodePath?: string): string {
  return command(...invokeProgram(projectRoot, nodePath), ...invokeArgv(args));
}

/** An invocation with everything read: what the CLI runs. */
export interface Invocation {
  readonly dir?: string;
  readonly installer?: string;
  readonly handlersDir: string;
  readonly entrypoint: string;
  readonly event: Record<string, unknown>;
  /** The job's env: JOB_ENV_VARS from the environment, SSH_KEY from --ssh-key-file. */
  readonly env: Partial<Record<JobEnvVar, string>>;
  /** Values to scrub from everything printed. */
  readonly secrets: string[];
  readonly timeoutSec: number;
  readonly resultFile?: string;
  readonly resultTfstate?: string;
  readonly name?: string;
}

/** String values under password/secret/token-like keys, at any depth: the event's secrets. */
function eventSecrets(value: unknown, key = "", out: string[] = []): string[] {
  if (typeof value === "string") {
    if (SECRET_FIELD.test(key)) out.push(value);
  } else if (Array.isArray(value)) {
    for (const v of value) eventSecrets(v, key, out);
  } else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) eventSecrets(v, k, out);
  }
  return out;
}

/** The installers under handlersDir (folders with a handler.ts), for messages. */
export function installersIn(handlersDir: string): string[] {
  try {
    return fs
      .readdirSync(handlersDir)
      .filter((n) => fs.existsSync(path.join(handlersDir, n, "handler.ts")))
      .sort();
  } catch {
    return [];
  }
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Reads what the arguments point at: the installer or directory, the event (file, stdin or variable),
 * the job env, the key, the secret fields. Creates the result state's folder. Throws UsageError.
 */
export async function resolveInvocation(
  args: InvokeArgs,
  environment: NodeJS.ProcessEnv = process.env,
  stdin: NodeJS.ReadableStream = process.stdin,
): Promise<Invocation> {
  const { installer } = args;
  const handlersDir = path.resolve(args.handlersDir ?? path.join(PROJECT_ROOT, "handlers"));
  if (installer === undefined && args.dir === undefined) {
    const known = installersIn(handlersDir);
    throw new UsageError(`name an installer${known.length ? ` (${known.join(", ")})` : ""} or pass --dir DIR`);
  }
  if (installer !== undefined) {
    if (!INSTALLER_NAME.test(installer) || !fs.existsSync(path.join(handlersDir, installer, "handler.ts"))) {
      const known = installersIn(handlersDir);
      throw new UsageError(`unknown installer ${JSON.stringify(installer)}: there is no ${path.join(handlersDir, installer, "handler.ts")}; known: ${known.join(", ") || "none"}`);
    }
  }
  let dir: string | undefined;
  if (args.dir !== undefined) {
    dir = path.resolve(args.dir);
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new UsageError(`--dir ${args.dir}: no such directory`);
  }

  // A copy: the secret fields are added to it below.
  let event: Record<string, unknown> = { ...args.event };
  if (args.eventEnv !== undefined) {
    const name = args.eventEnv;
    const text = environment[name];
    if (text === undefined) throw new UsageError(`--event-env ${name}: the variable is not set`);
    event = parseEvent(text, `--event-env ${name}`);
  } else if (args.eventFile !== undefined) {
    const file = args.eventFile;
    let text: string;
    try {
      text = file === "-" ? await readAll(stdin) : fs.readFileSync(file, "utf8");
    } catch (err) {
      throw new UsageError(`--event-file ${file}: cannot read it (${(err as Error).message})`);
    }
    event = parseEvent(text, file === "-" ? "the event on stdin (--event-file -)" : `--event-file ${file}`);
  }

  const env: Partial<Record<JobEnvVar, string>> = {};
  for (const name of JOB_ENV_VARS) {
    const v = environment[name];
    if (v !== undefined && v !== "") env[name] = v;
  }
  if (args.sshKeyFile !== undefined) {
    try {
      env.SSH_KEY = fs.readFileSync(args.sshKeyFile, "utf8");
    } catch (err) {
      throw new UsageError(`--ssh-key-file ${args.sshKeyFile}: cannot read it (${(err as Error).message})`);
    }
  }

  let resultFile: string | undefined;
  if (args.resultFile !== undefined) {
    resultFile = path.resolve(args.resultFile);
    const parent = path.dirname(resultFile);
    if (!fs.existsSync(parent) || !fs.statSync(parent).isDirectory()) {
      throw new UsageError(`--result-file ${args.resultFile}: directory ${parent} does not exist`);
    }
  }

  const secrets = eventSecrets(event);
  for (const { field, variable } of args.secretEnv ?? []) {
    const value = environment[variable];
    if (value === undefined || value === "") {
      throw new UsageError(`--secret-env ${field}=${variable}: ${variable} is not set; export ${variable}=... before running (it holds the event's ${field})`);
    }
    event[field] = value;
    secrets.push(value);
  }
  if (env.SSH_KEY) secrets.push(env.SSH_KEY);
  const resultTfstate = args.resultTfstate === undefined ? undefined : path.resolve(args.resultTfstate);
  if (resultTfstate) fs.mkdirSync(path.dirname(resultTfstate), { recursive: true });
  return {
    dir,
    installer,
    handlersDir,
    entrypoint: args.entrypoint ?? DEFAULT_ENTRYPOINT,
    event,
    env,
    secrets,
    timeoutSec: args.timeoutSec ?? DEFAULT_TIMEOUT_SEC,
    resultFile,
    resultTfstate,
    name: args.name,
  };
}

/**
 * The result state's outputs, with the values terraform_remote_state gives before the runner has
 * written the file (the job has not run yet, or its file was deleted).
 */
export const RESULT_STATE_DEFAULTS = { phase: "NotRun", message: "not run" } as const;
export type ResultOutput = keyof typeof RESULT_STATE_DEFAULTS;

/**
 * The outcome as a Terraform state holding only the RESULT_STATE_DEFAULTS outputs: what a
 * terraform_remote_state data source reads, so a local job's result reaches `cdktf output` in the same
 * shape as a sless_job's message.
 */
export function resultAsTfstate(result: Pick<JobResult, "phase" | "message">, name: string): string {
  const outputs: Record<ResultOutput, { value: string; type: "string" }> = {
    phase: { value: result.phase, type: "string" },
    message: { value: result.message, type: "string" },
  };
  return JSON.stringify({ version: 4, terraform_version: "1.0.0", serial: 1, lineage: `vm-install-${name}`, outputs, resources: [] }, null, 2);
}

/** Writes beside the target, then renames: a reader (Terraform, a script) never sees a half-written file. */
export function writeResultFile(file: string, text: string): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${Date.now()}.tmp`);
  try {
    fs.writeFileSync(tmp, text + "\n", { mode: 0o600 });
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}
