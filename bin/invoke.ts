// `npm run invoke -- <installer> ...`: runs one installer job locally, bundled exactly as the stack bundles
// it and run exactly as the platform runs it (lib/runner), against whatever VM the SSH_* variables name.
// Progress goes to stdout as it comes; the last stdout line is the job's outcome as one JSON object, so
// scripts read one line and people read the rest.
import * as fs from "fs";
import * as path from "path";
import { parseArgs } from "util";
import { bundleHandler, PROJECT_ROOT } from "../lib/bundling/bundle";
import { DEFAULT_ENTRYPOINT, DEFAULT_TIMEOUT_SEC, JobResult, parseEntrypoint, runJob } from "../lib/runner/run-job";

const EXIT_SUCCEEDED = 0;
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

/** The job env_vars of the Job contract: nothing else from the invoking environment reaches the handler. */
export const JOB_ENV_VARS = ["VM_IP", "SSH_USER", "SSH_KEY", "SSH_PORT", "SSH_HOST_KEY_SHA256"] as const;
/** Event fields whose string values are scrubbed from the output, besides SSH_KEY. */
const SECRET_FIELD = /pass(word)?|secret|token|private_?key/i;

const USAGE = `usage: npm run invoke -- <installer> [options]
       npm run invoke -- --dir DIR [options]

  <installer>           bundle handlers/<installer>/handler.ts (as the stack does) and run it
  --dir DIR             run an already-bundled job directory instead
  --event JSON          the event, one JSON object (default {})
  --event-file FILE     read the event from FILE; "-" reads stdin
  --timeout SEC         kill the job after SEC seconds (default ${DEFAULT_TIMEOUT_SEC})
  --ssh-key-file PATH   read SSH_KEY from PATH instead of the environment
  --result-file PATH    also write the final {"phase","message"} object to PATH (atomically)
  --result-tfstate PATH also write it as the outputs of a Terraform state file (for terraform_remote_state)
  --event-env NAME      read the event (JSON) from environment variable NAME
  --secret-env F=VAR    set event field F from environment variable VAR (e.g. db_password=TF_VAR_pg_password),
                        so a secret is on no command line and in no file; repeatable
  --name NAME           the job's name, shown in progress and in a failure
  --entrypoint M.F      module.function to call (default ${DEFAULT_ENTRYPOINT})
  --handlers-dir DIR    where <installer> folders are (default handlers/ of this project)
  -h, --help            this text

The job gets only these variables from the environment: ${JOB_ENV_VARS.join(", ")}.
Progress is printed to stdout; the last stdout line is {"phase": "Succeeded"|"Failed", "message": ...}.
Exit code: 0 Succeeded, 1 Failed, 2 bad usage.`;

class UsageError extends Error {}

interface Invocation {
  readonly dir?: string;
  readonly installer?: string;
  readonly handlersDir: string;
  readonly entrypoint: string;
  readonly event: Record<string, unknown>;
  readonly env: Record<string, string>;
  readonly secrets: string[];
  readonly timeoutSec: number;
  readonly resultFile?: string;
  readonly resultTfstate?: string;
  readonly name?: string;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
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

async function parseInvocation(argv: string[]): Promise<Invocation | "help"> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        dir: { type: "string" },
        event: { type: "string" },
        "event-file": { type: "string" },
        timeout: { type: "string" },
        "ssh-key-file": { type: "string" },
        "result-file": { type: "string" },
        "result-tfstate": { type: "string" },
        "event-env": { type: "string" },
        "secret-env": { type: "string", multiple: true },
        name: { type: "string" },
        entrypoint: { type: "string" },
        "handlers-dir": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values: o, positionals } = parsed;
  if (o.help) return "help";

  if (positionals.length > 1) throw new UsageError(`one installer at a time (got ${positionals.join(", ")})`);
  const installer = positionals[0];
  if (installer !== undefined && o.dir !== undefined) throw new UsageError("give an installer name or --dir, not both");
  const handlersDir = path.resolve(o["handlers-dir"] ?? path.join(PROJECT_ROOT, "handlers"));
  if (installer === undefined && o.dir === undefined) {
    const known = installersIn(handlersDir);
    throw new UsageError(`name an installer${known.length ? ` (${known.join(", ")})` : ""} or pass --dir DIR`);
  }
  if (installer !== undefined) {
    if (!/^[a-z0-9][a-z0-9-]*$/.test(installer) || !fs.existsSync(path.join(handlersDir, installer, "handler.ts"))) {
      const known = installersIn(handlersDir);
      throw new UsageError(`unknown installer ${JSON.stringify(installer)}: there is no ${path.join(handlersDir, installer, "handler.ts")}; known: ${known.join(", ") || "none"}`);
    }
  }
  let dir: string | undefined;
  if (o.dir !== undefined) {
    dir = path.resolve(o.dir);
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new UsageError(`--dir ${o.dir}: no such directory`);
  }

  const entrypoint = o.entrypoint ?? DEFAULT_ENTRYPOINT;
  try {
    parseEntrypoint(entrypoint);
  } catch (err) {
    throw new UsageError(`--entrypoint: ${(err as Error).message}`);
  }

  if ([o.event, o["event-file"], o["event-env"]].filter((v) => v !== undefined).length > 1) {
    throw new UsageError("give one of --event, --event-file, --event-env");
  }
  let event: Record<string, unknown> = {};
  if (o.event !== undefined) {
    event = parseEvent(o.event, "--event");
  } else if (o["event-env"] !== undefined) {
    const name = o["event-env"];
    const text = process.env[name];
    if (text === undefined) throw new UsageError(`--event-env ${name}: the variable is not set`);
    event = parseEvent(text, `--event-env ${name}`);
  } else if (o["event-file"] !== undefined) {
    const file = o["event-file"];
    let text: string;
    try {
      text = file === "-" ? await readStdin() : fs.readFileSync(file, "utf8");
    } catch (err) {
      throw new UsageError(`--event-file ${file}: cannot read it (${(err as Error).message})`);
    }
    event = parseEvent(text, file === "-" ? "the event on stdin (--event-file -)" : `--event-file ${file}`);
  }

  let timeoutSec = DEFAULT_TIMEOUT_SEC;
  if (o.timeout !== undefined) {
    timeoutSec = Number(o.timeout);
    if (!Number.isFinite(timeoutSec) || timeoutSec <= 0 || timeoutSec > 2147483) {
      throw new UsageError(`--timeout ${o.timeout}: expected a positive number of seconds (at most 2147483)`);
    }
  }

  const env: Record<string, string> = {};
  for (const name of JOB_ENV_VARS) {
    const v = process.env[name];
    if (v !== undefined && v !== "") env[name] = v;
  }
  if (o["ssh-key-file"] !== undefined) {
    try {
      env.SSH_KEY = fs.readFileSync(o["ssh-key-file"], "utf8");
    } catch (err) {
      throw new UsageError(`--ssh-key-file ${o["ssh-key-file"]}: cannot read it (${(err as Error).message})`);
    }
  }

  let resultFile: string | undefined;
  if (o["result-file"] !== undefined) {
    resultFile = path.resolve(o["result-file"]);
    const parent = path.dirname(resultFile);
    if (!fs.existsSync(parent) || !fs.statSync(parent).isDirectory()) {
      throw new UsageError(`--result-file ${o["result-file"]}: directory ${parent} does not exist`);
    }
  }

  const secrets = eventSecrets(event);
  for (const spec of o["secret-env"] ?? []) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=([A-Za-z_][A-Za-z0-9_]*)$/.exec(spec);
    if (!m) throw new UsageError(`--secret-env ${spec}: expected FIELD=VARIABLE, e.g. db_password=TF_VAR_pg_password`);
    const value = process.env[m[2]];
    if (value === undefined || value === "") {
      throw new UsageError(`--secret-env ${spec}: ${m[2]} is not set; export ${m[2]}=... before running (it holds the event's ${m[1]})`);
    }
    event[m[1]] = value;
    secrets.push(value);
  }
  if (env.SSH_KEY) secrets.push(env.SSH_KEY);
  const resultTfstate = o["result-tfstate"] === undefined ? undefined : path.resolve(o["result-tfstate"]);
  if (resultTfstate) fs.mkdirSync(path.dirname(resultTfstate), { recursive: true });
  if (o.name !== undefined && !/^[A-Za-z0-9._-]{1,100}$/.test(o.name)) throw new UsageError(`--name ${o.name}: letters, digits, . _ - only`);
  return { dir, installer, handlersDir, entrypoint, event, env, secrets, timeoutSec, resultFile, resultTfstate, name: o.name };
}

/** Writes beside the target, then renames: a reader never sees a half-written file. */
function writeResultFile(file: string, json: string): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${Date.now()}.tmp`);
  try {
    fs.writeFileSync(tmp, json + "\n", { mode: 0o600 });
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

/**
 * The outcome as a Terraform state holding only outputs `phase` and `message`: what a
 * terraform_remote_state data source reads, so a local job's result reaches `cdktf output` in the same
 * shape as a sless_job's message.
 */
export function resultAsTfstate(result: Pick<JobResult, "phase" | "message">, name: string): string {
  return JSON.stringify({
    version: 4,
    terraform_version: "1.0.0",
    serial: 1,
    lineage: `vm-install-${name}`,
    outputs: { phase: { value: result.phase, type: "string" }, message: { value: result.message, type: "string" } },
    resources: [],
  }, null, 2);
}

/** Bundles (for an installer name) and runs the job; anything that goes wrong on the way is a Failed result. */
async function invoke(inv: Invocation): Promise<Pick<JobResult, "phase" | "message">> {
  let dir: string;
  try {
    dir = inv.dir ?? bundleHandler({ handler: inv.installer!, handlersDir: inv.handlersDir }).dir;
  } catch (err) {
    return { phase: "Failed", message: (err as Error).message };
  }
  // Ctrl-C stops the job (and whatever it started) and still reports, rather than orphaning it.
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    return await runJob({
      dir,
      entrypoint: inv.entrypoint,
      env: inv.env,
      event: inv.event,
      timeoutSec: inv.timeoutSec,
      secrets: inv.secrets,
      signal: abort.signal,
      onOutput: (line) => process.stdout.write(line + "\n"),
    });
  } catch (err) {
    return { phase: "Failed", message: `running ${dir}: ${(err as Error).message}` };
  } finally {
    process.removeListener("SIGINT", onSignal);
    process.removeListener("SIGTERM", onSignal);
  }
}

export async function main(argv: string[]): Promise<number> {
  let inv: Invocation | "help";
  try {
    inv = await parseInvocation(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`invoke: ${err.message}\n\n${USAGE.split("\n\n")[0]}\n\nnpm run invoke -- --help lists every option.\n`);
    return EXIT_USAGE;
  }
  if (inv === "help") {
    process.stdout.write(USAGE + "\n");
    return EXIT_SUCCEEDED;
  }

  const label = inv.name ?? inv.installer ?? path.basename(inv.dir ?? "job");
  if (inv.name) process.stdout.write(`[${label}] starting\n`);
  const result = await invoke(inv);
  const json = JSON.stringify({ phase: result.phase, message: result.message });
  let code = result.phase === "Succeeded" ? EXIT_SUCCEEDED : EXIT_FAILED;
  const outputs: [string | undefined, string, string][] = [
    [inv.resultFile, json, "--result-file"],
    [inv.resultTfstate, resultAsTfstate(result, label), "--result-tfstate"],
  ];
  for (const [file, text, option] of outputs) {
    if (!file) continue;
    try {
      writeResultFile(file, text);
    } catch (err) {
      process.stderr.write(`invoke: could not write ${option} ${file}: ${(err as Error).message}\n`);
      code = EXIT_FAILED;
    }
  }
  process.stdout.write(json + "\n");
  // Terraform reports only "exit status 1" for a failed local-exec: say which job and why on stderr too.
  if (result.phase === "Failed" && inv.name) process.stderr.write(`[${label}] Failed: ${result.message}\n`);
  return code;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.stderr.write(`invoke: internal error: ${(err as Error).stack ?? err}\n`);
      process.exitCode = EXIT_FAILED;
    },
  );
}
