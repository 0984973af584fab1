// Runs a bundled job directory the way the sless platform runs a job: a fresh Node process in that
// directory, the job's env vars and nothing else, the event on stdin, one outcome (phase + message).
// Tests, benchmarks, `npm run invoke` and the local job target all come through here, so a handler that
// passes locally has been loaded and called exactly as it will be on the platform.
import { type ChildProcess, spawn } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import type { Readable } from "node:stream";
import { SecretScrubber } from "../shared/secrets";
import { DEFAULT_ENTRYPOINT, DEFAULT_TIMEOUT_SEC, type JobResult, parseEntrypoint } from "./job-contract";
import { type JobOutput, type OutputStream, type Report, streamOutput, tailText, watchForReport } from "./job-output";
import { killGroup, track, untrack } from "./process-group";

export type { JobResult } from "./job-contract";

export interface RunJobOptions {
  /** The bundled job directory (the job's source_dir); becomes the process's cwd. */
  readonly dir: string;
  /** "module.function", as the job's `entrypoint`: loads `<dir>/<module>.js`. @default "handler.install" */
  readonly entrypoint?: string;
  /** The job's env_vars. The process gets these plus PATH/HOME-like basics, not the caller's environment. */
  readonly env: Record<string, string>;
  /** The parsed event_json; must be JSON-serialisable. */
  readonly event: unknown;
  /** Kill the job after this many seconds. @default 900 (the longest wait_timeout_sec an installer has by default) */
  readonly timeoutSec?: number;
  /**
   * Each line the handler prints, as it prints it, secrets already scrubbed. Order holds within a stream;
   * stdout and stderr are separate pipes, so a stderr line may come before a stdout line printed first.
   * Every line has been delivered by the time the promise settles.
   */
  readonly onOutput?: (line: string, stream: OutputStream) => void;
  /** Known secret values (an SSH key, a password): replaced by [redacted] in streamed lines and the message. */
  readonly secrets?: readonly string[];
  /** Cancels the job: the process group is killed and the phase is Failed. */
  readonly signal?: AbortSignal;
}

const BOOTSTRAP = path.join(__dirname, "bootstrap.js");
/** Variables a process needs to work at all; a platform container has its own values for these. */
const BASIC_ENV = ["PATH", "HOME", "TMPDIR", "LANG", "TZ"] as const;
const FALLBACK_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/** Time a job gets between SIGTERM and SIGKILL, as a pod gets its grace period. */
const KILL_GRACE_MS = 2000;
/** How long to wait for output pipes after the process exits (a daemon that escaped the group may hold them). */
const PIPE_GRACE_MS = 1000;
/** Shorter values would scrub ordinary words out of every line; see makeScrubber. */
const MIN_SECRET_CHARS = 4;

/**
 * Returns a function that replaces every known secret value with [redacted], through the handlers' own
 * SecretScrubber (so both layers match the same forms: as given, trimmed, JSON-escaped, and each line of
 * a PEM key). Values under 4 characters are left alone: the runner is handed guesses (fields named like
 * passwords), and scrubbing a short one would mangle ordinary output.
 */
export function makeScrubber(secrets: readonly string[] = []): (text: string) => string {
  const scrubber = new SecretScrubber(MIN_SECRET_CHARS);
  for (const secret of secrets) if (typeof secret === "string") scrubber.add(secret);
  return (text) => scrubber.scrub(text);
}

/** The child's environment: the basics from this process (job values win), then the job's env_vars. */
function jobEnvironment(env: Record<string, string>): Record<string, string> {
  if (env === null || typeof env !== "object") throw new TypeError("runJob: env must be an object of string values");
  const out: Record<string, string> = {};
  for (const name of BASIC_ENV) {
    const v = process.env[name];
    if (v !== undefined) out[name] = v;
  }
  out.PATH ??= FALLBACK_PATH;
  for (const [name, value] of Object.entries(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new Error(
        `runJob: env var name ${JSON.stringify(name)} is invalid: ` +
          "use letters, digits and _ (not starting with a digit)",
      );
    }
    if (typeof value !== "string" || value.includes("\0")) {
      throw new Error(`runJob: env var ${name} must be a string without NUL characters (got ${typeof value})`);
    }
    out[name] = value;
  }
  return out;
}

/** A job checked and ready to start: everything runJob can refuse is refused before anything runs. */
interface PreparedJob {
  readonly dir: string;
  readonly entrypoint: string;
  readonly timeoutSec: number;
  readonly env: Record<string, string>;
  readonly nonce: string;
  /** The job's stdin: the event, and the nonce its report must carry. */
  readonly invocation: string;
}

function prepareJob(opts: RunJobOptions): PreparedJob {
  const entrypoint = opts.entrypoint ?? DEFAULT_ENTRYPOINT;
  parseEntrypoint(entrypoint);
  const dir = path.resolve(opts.dir);
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    throw new Error(
      `runJob: job directory ${dir} does not exist or is not a directory; pass the dir returned by bundleHandler`,
    );
  }
  const timeoutSec = opts.timeoutSec ?? DEFAULT_TIMEOUT_SEC;
  if (
    typeof timeoutSec !== "number" ||
    !Number.isFinite(timeoutSec) ||
    timeoutSec <= 0 ||
    timeoutSec * 1000 > 2 ** 31 - 1
  ) {
    throw new Error(
      `runJob: timeoutSec must be a positive number of seconds up to 2147483 (got ${String(timeoutSec)})`,
    );
  }
  const env = jobEnvironment(opts.env);
  const nonce = crypto.randomBytes(16).toString("hex");
  let invocation: string;
  try {
    invocation = JSON.stringify({ nonce, event: opts.event });
  } catch (err) {
    throw new Error(`runJob: the event is not JSON-serialisable: ${(err as Error).message}`);
  }
  return { dir, entrypoint, timeoutSec, env, nonce, invocation };
}

function couldNotStart(dir: string, err: Error): string {
  return `could not start the job process (${process.execPath} in ${dir}): ${err.message}`;
}

/** Throws when the process cannot be created at all; a later failure to start arrives as its "error" event. */
function startJob(job: PreparedJob): ChildProcess {
  const child = spawn(process.execPath, [BOOTSTRAP, job.entrypoint], {
    cwd: job.dir,
    env: job.env,
    stdio: ["pipe", "pipe", "pipe", "pipe"],
    // Its own process group, so a timeout can kill whatever the handler started too.
    detached: true,
  });
  if (child.pid !== undefined) track(child.pid);
  return child;
}

function sendEvent(child: ChildProcess, invocation: string): void {
  child.stdin!.on("error", () => undefined); // EPIPE when the process dies before reading the event
  child.stdin!.end(invocation);
}

/** How the process ended, as far as the outcome depends on it. */
interface Ending {
  /** Why the runner stopped the job (timed out, cancelled), when it did. */
  readonly stopReason?: string;
  readonly exit?: { readonly code: number | null; readonly signal: NodeJS.Signals | null };
  readonly spawnError?: Error;
}

/**
 * Settles once the process has ended and its pipes are drained. On timeout or abort the job's group gets
 * SIGTERM and, after a grace period, SIGKILL, as a pod is stopped.
 */
function waitForEnd(child: ChildProcess, timeoutSec: number, signal?: AbortSignal): Promise<Ending> {
  return new Promise((resolve) => {
    const ending: { -readonly [K in keyof Ending]: Ending[K] } = {};
    const timers: NodeJS.Timeout[] = [];
    let settled = false;
    const stop = (reason: string) => {
      if (ending.stopReason !== undefined || ending.exit) return;
      ending.stopReason = reason;
      if (child.pid === undefined) return;
      killGroup(child.pid, "SIGTERM");
      timers.push(setTimeout(() => killGroup(child.pid!, "SIGKILL"), KILL_GRACE_MS));
    };
    const onAbort = () => stop("cancelled before it finished");
    const settle = () => {
      if (settled) return;
      settled = true;
      for (const t of timers) clearTimeout(t);
      signal?.removeEventListener("abort", onAbort);
      resolve({ ...ending });
    };
    timers.push(setTimeout(() => stop(`timed out after ${timeoutSec} s`), timeoutSec * 1000));
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });

    child.on("error", (err) => {
      ending.spawnError ??= err;
      if (child.pid === undefined) settle();
    });
    child.on("exit", (code, exitSignal) => {
      ending.exit = { code, signal: exitSignal };
      // The platform discards the job's container when the handler returns: whatever the handler left
      // running in the background goes with it.
      if (child.pid !== undefined) {
        killGroup(child.pid, "SIGKILL");
        untrack(child.pid);
      }
      timers.push(
        setTimeout(() => {
          for (const s of [child.stdout, child.stderr, child.stdio[3]]) s?.destroy();
          settle();
        }, PIPE_GRACE_MS),
      );
    });
    child.on("close", settle);
  });
}

/** The handler's report when it made one; otherwise a Failed outcome saying why there is none. */
function outcome(report: Report | undefined, ending: Ending, output: JobOutput, dir: string): Report {
  if (report) return report;
  if (ending.stopReason !== undefined) {
    const tail = tailText(output.outputTail);
    return {
      phase: "Failed",
      message: ending.stopReason + (tail ? `; last output:\n${tail}` : "; the handler printed nothing"),
    };
  }
  if (ending.spawnError && !ending.exit) return { phase: "Failed", message: couldNotStart(dir, ending.spawnError) };
  const how = ending.exit?.signal
    ? `was killed by signal ${ending.exit.signal}`
    : `exited with code ${ending.exit?.code}`;
  const tail = tailText(output.stderrTail);
  const stderr = tail ? `; last stderr lines:\n${tail}` : "; stderr was empty";
  return {
    phase: "Failed",
    message: `the job process ${how} before reporting a result (did the handler call process.exit?)${stderr}`,
  };
}

/**
 * Runs `<dir>/<module>.js`'s exported function once in a fresh Node process and reports its outcome.
 * Rejects only on invalid options (entrypoint, dir, env, timeout, an event that is not serialisable) and
 * with whatever onOutput throws; whatever happens once the job runs (a throw, a crash, a timeout) is a
 * Failed result.
 */
export async function runJob(opts: RunJobOptions): Promise<JobResult> {
  const started = performance.now();
  const job = prepareJob(opts);
  const scrub = makeScrubber(opts.secrets);
  const result = (r: Report): JobResult => ({
    phase: r.phase,
    message: scrub(r.message),
    durationMs: Math.round(performance.now() - started),
  });
  let child: ChildProcess;
  try {
    child = startJob(job);
  } catch (err) {
    return result({ phase: "Failed", message: couldNotStart(job.dir, err as Error) });
  }
  const output = streamOutput({ stdout: child.stdout!, stderr: child.stderr! }, scrub, opts.onOutput);
  const channel = watchForReport(child.stdio[3] as Readable, job.nonce);
  sendEvent(child, job.invocation);
  const ending = await waitForEnd(child, job.timeoutSec, opts.signal);
  output.flush();
  if (output.callbackError !== undefined) throw output.callbackError;
  return result(outcome(channel.report(), ending, output, job.dir));
}
