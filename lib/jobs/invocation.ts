// Resolving a parsed command line against the environment and the disk: which job directory or installer,
// the event from wherever it was given, the job's env and key, the result files' places, and the secrets
// to scrub. Each step's UsageError names the option at fault, so the CLI can say what to fix.

import * as fs from "node:fs";
import * as path from "node:path";
import { privateKeyFileProblem } from "../construct/config/key-file";
import { PROJECT_ROOT } from "../entry-points";
import { type InvokeArgs, JOB_ENV_VARS, type JobEnvVar, parseEvent, UsageError } from "./invoke-args";
import { DEFAULT_ENTRYPOINT, DEFAULT_TIMEOUT_SEC } from "./job-contract";

/** Event fields whose string values are scrubbed from the output, besides SSH_KEY. */
const SECRET_FIELD = /pass(word)?|secret|token|private_?key/i;
const INSTALLER_NAME = /^[a-z0-9][a-z0-9-]*$/;

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
  /** Absolute; created (0700) when given. */
  readonly logDir?: string;
  readonly name?: string;
}

/** String values under password/secret/token-like keys, at any depth: the event's secrets. */
export function eventSecrets(value: unknown, key = "", out: string[] = []): string[] {
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
function installersIn(handlersDir: string): string[] {
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

/** What runs: an installer that exists under handlersDir, or a directory that exists. */
function resolveSource(args: InvokeArgs, handlersDir: string): { installer?: string; dir?: string } {
  const { installer } = args;
  if (installer === undefined && args.dir === undefined) {
    const known = installersIn(handlersDir);
    throw new UsageError(`name an installer${known.length ? ` (${known.join(", ")})` : ""} or pass --dir DIR`);
  }
  if (installer !== undefined) {
    if (!INSTALLER_NAME.test(installer) || !fs.existsSync(path.join(handlersDir, installer, "handler.ts"))) {
      const known = installersIn(handlersDir);
      const missing = path.join(handlersDir, installer, "handler.ts");
      throw new UsageError(
        `unknown installer ${JSON.stringify(installer)}: there is no ${missing}; known: ${known.join(", ") || "none"}`,
      );
    }
  }
  let dir: string | undefined;
  if (args.dir !== undefined) {
    dir = path.resolve(args.dir);
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory())
      throw new UsageError(`--dir ${args.dir}: no such directory`);
  }
  return { installer, dir };
}

/** The event from --event-env, --event-file or --event; a fresh object, as the secret fields go into it. */
async function readEvent(
  args: InvokeArgs,
  environment: NodeJS.ProcessEnv,
  stdin: NodeJS.ReadableStream,
): Promise<Record<string, unknown>> {
  if (args.eventEnv !== undefined) {
    const name = args.eventEnv;
    const text = environment[name];
    if (text === undefined) throw new UsageError(`--event-env ${name}: the variable is not set`);
    return parseEvent(text, `--event-env ${name}`);
  }
  if (args.eventFile !== undefined) {
    const file = args.eventFile;
    let text: string;
    try {
      text = file === "-" ? await readAll(stdin) : fs.readFileSync(file, "utf8");
    } catch (err) {
      throw new UsageError(`--event-file ${file}: cannot read it (${(err as Error).message})`);
    }
    return parseEvent(text, file === "-" ? "the event on stdin (--event-file -)" : `--event-file ${file}`);
  }
  return { ...args.event };
}

/** JOB_ENV_VARS as set (and not empty) in the environment; SSH_KEY from --ssh-key-file when given. */
function jobEnv(args: InvokeArgs, environment: NodeJS.ProcessEnv): Partial<Record<JobEnvVar, string>> {
  const env: Partial<Record<JobEnvVar, string>> = {};
  for (const name of JOB_ENV_VARS) {
    const v = environment[name];
    if (v !== undefined && v !== "") env[name] = v;
  }
  if (args.sshKeyFile !== undefined) {
    // Named as the deployer wrote it when the stack runs the job (SSH_KEY_SETTING), else as the option.
    const problem = privateKeyFileProblem(
      path.resolve(args.sshKeyFile),
      env.SSH_KEY_SETTING ?? `--ssh-key-file ${args.sshKeyFile}`,
      false,
    );
    if (problem) throw new UsageError(problem);
    env.SSH_KEY = fs.readFileSync(args.sshKeyFile, "utf8");
  }
  return env;
}

/** Checked before the job runs: a result that could not be written would be lost after a long install. */
function resultFilePath(args: InvokeArgs): string | undefined {
  if (args.resultFile === undefined) return undefined;
  const resultFile = path.resolve(args.resultFile);
  const parent = path.dirname(resultFile);
  if (!fs.existsSync(parent) || !fs.statSync(parent).isDirectory()) {
    throw new UsageError(`--result-file ${args.resultFile}: directory ${parent} does not exist`);
  }
  return resultFile;
}

/**
 * The --secret-file field's value: the string property of the JSON file, read as this user (an owner-only
 * file the app made: the stack's CA). A missing file or property is refused, naming both.
 */
function secretFileValue(s: NonNullable<InvokeArgs["secretFile"]>[number]): string {
  const option = `--secret-file ${s.field}=${s.file}#${s.property}`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(s.file, "utf8"));
  } catch (err) {
    throw new UsageError(
      `${option}: cannot read ${path.resolve(s.file)} as JSON (${(err as Error).message.split("\n")[0]}); ` +
        "run cdktf synth or deploy in the project folder, which makes it",
    );
  }
  const value = (parsed as Record<string, unknown> | null)?.[s.property];
  if (typeof value !== "string" || value === "")
    throw new UsageError(`${option}: ${path.resolve(s.file)} holds no ${s.property} (the event's ${s.field})`);
  return value;
}

/** Sets the --secret-env and --secret-file fields in `event`; returns every value to scrub, the key included. */
function addSecrets(
  event: Record<string, unknown>,
  args: InvokeArgs,
  environment: NodeJS.ProcessEnv,
  sshKey: string | undefined,
): string[] {
  const secrets = eventSecrets(event);
  for (const { field, variable } of args.secretEnv ?? []) {
    const value = environment[variable];
    if (value === undefined || value === "") {
      throw new UsageError(
        `--secret-env ${field}=${variable}: ${variable} is not set; ` +
          `export ${variable}=... before running (it holds the event's ${field})`,
      );
    }
    event[field] = value;
    secrets.push(value);
  }
  for (const s of args.secretFile ?? []) {
    const value = secretFileValue(s);
    event[s.field] = value;
    secrets.push(value);
  }
  if (sshKey) secrets.push(sshKey);
  return secrets;
}

/**
 * Unlike --result-file's, the folder is made: the local target names one per stack (.vm-install/<stack>/)
 * and synth may have created none. Owner-only, as the results and logs in it (whatever the umask).
 */
function resultTfstatePath(args: InvokeArgs): string | undefined {
  const resultTfstate = args.resultTfstate === undefined ? undefined : path.resolve(args.resultTfstate);
  if (resultTfstate) fs.mkdirSync(path.dirname(resultTfstate), { recursive: true, mode: 0o700 });
  return resultTfstate;
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
  const handlersDir = path.resolve(args.handlersDir ?? path.join(PROJECT_ROOT, "handlers"));
  const { installer, dir } = resolveSource(args, handlersDir);
  const event = await readEvent(args, environment, stdin);
  const env = jobEnv(args, environment);
  const resultFile = resultFilePath(args);
  const secrets = addSecrets(event, args, environment, env.SSH_KEY);
  // Last, so a command line refused above leaves nothing behind.
  const resultTfstate = resultTfstatePath(args);
  const logDir = args.logDir === undefined ? undefined : path.resolve(args.logDir);
  if (logDir) fs.mkdirSync(logDir, { recursive: true, mode: 0o700 });
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
    logDir,
    name: args.name,
  };
}
