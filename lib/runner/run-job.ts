// Runs a bundled job directory the way the sless platform runs a job: a fresh Node process in that
// directory, the job's env vars and nothing else, the event on stdin, one outcome (phase + message).
// Tests, benchmarks, `npm run invoke` and the local job target all come through here, so a handler that
// passes locally has been loaded and called exactly as it will be on the platform.
import { ChildProcess, spawn } from "child_process";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { Readable } from "stream";
import { StringDecoder } from "string_decoder";
import { SecretScrubber } from "../../shared/secrets";

export type JobPhase = "Succeeded" | "Failed";
export type OutputStream = "stdout" | "stderr";

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

export interface JobResult {
  readonly phase: JobPhase;
  /** Succeeded: JSON.stringify of the handler's result. Failed: the error message, stack trimmed. */
  readonly message: string;
  readonly durationMs: number;
}

export const DEFAULT_ENTRYPOINT = "handler.install";
export const DEFAULT_TIMEOUT_SEC = 900;

const BOOTSTRAP = path.join(__dirname, "bootstrap.js");
/** Variables a process needs to work at all; a platform container has its own values for these. */
const BASIC_ENV = ["PATH", "HOME", "TMPDIR", "LANG", "TZ"] as const;
const FALLBACK_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
/** Time a job gets between SIGTERM and SIGKILL, as a pod gets its grace period. */
const KILL_GRACE_MS = 2000;
/** How long to wait for output pipes after the process exits (a daemon that escaped the group may hold them). */
const PIPE_GRACE_MS = 1000;
/** A line longer than this is passed on in pieces, so a handler printing without newlines can't exhaust memory. */
const MAX_LINE_CHARS = 64 * 1024;
const MAX_RESULT_BYTES = 64 * 1024 * 1024;
const TAIL_LINES = 20;
const TAIL_CHARS = 4000;
/** Shorter values would scrub ordinary words out of every line; see makeScrubber. */
const MIN_SECRET_CHARS = 4;

/** Splits and checks "module.function"; throws an error naming what is wrong. */
export function parseEntrypoint(entrypoint: string): { module: string; fn: string } {
  const m = /^([A-Za-z0-9_-]+)\.([A-Za-z_$][A-Za-z0-9_$]*)$/.exec(entrypoint);
  if (!m) {
    throw new Error(
      `entrypoint ${JSON.stringify(entrypoint)} is invalid: expected "module.function" such as "handler.install" ` +
        `(module: letters, digits, _ or -, loaded as <dir>/<module>.js; no paths, no extension)`,
    );
  }
  return { module: m[1], fn: m[2] };
}

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
      throw new Error(`runJob: env var name ${JSON.stringify(name)} is invalid: use letters, digits and _ (not starting with a digit)`);
    }
    if (typeof value !== "string" || value.includes("\0")) {
      throw new Error(`runJob: env var ${name} must be a string without NUL characters (got ${typeof value})`);
    }
    out[name] = value;
  }
  return out;
}

/** Turns a byte stream into lines (without the newline), passing long lines on in pieces. */
function lineReader(stream: Readable, onLine: (line: string) => void): { flush(): void } {
  const decoder = new StringDecoder("utf8");
  let buf = "";
  const emit = (line: string) => onLine(line.endsWith("\r") ? line.slice(0, -1) : line);
  stream.on("data", (chunk: Buffer) => {
    buf += decoder.write(chunk);
    let nl: number;
    while ((nl = buf.indexOf("\n")) >= 0) {
      emit(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
    while (buf.length > MAX_LINE_CHARS) {
      emit(buf.slice(0, MAX_LINE_CHARS));
      buf = buf.slice(MAX_LINE_CHARS);
    }
  });
  // Errors on a pipe whose process has died carry no information the exit status doesn't.
  stream.on("error", () => undefined);
  return {
    flush() {
      buf += decoder.end();
      if (buf.length > 0) emit(buf);
      buf = "";
    },
  };
}

/**
 * Reads the result channel: newline-separated JSON reports. Unlike output lines these are never split,
 * since a result of some hundred KB is legitimate; past MAX_RESULT_BYTES the channel is ignored.
 */
function readReports(stream: Readable, onReport: (line: string) => void): void {
  let chunks: Buffer[] = [];
  let total = 0;
  stream.on("data", (chunk: Buffer) => {
    total += chunk.length;
    if (total > MAX_RESULT_BYTES) return;
    let start = 0;
    let nl: number;
    while ((nl = chunk.indexOf(0x0a, start)) >= 0) {
      chunks.push(chunk.subarray(start, nl));
      onReport(Buffer.concat(chunks).toString("utf8"));
      chunks = [];
      start = nl + 1;
    }
    if (start < chunk.length) chunks.push(chunk.subarray(start));
  });
  stream.on("error", () => undefined);
}

// Job processes are group leaders of their own; if this process exits while some still run (a test
// runner torn down mid-job), take them along rather than leave orphans holding SSH sessions.
const live = new Set<number>();
let exitHookInstalled = false;
function track(pid: number): void {
  live.add(pid);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", () => {
      for (const p of live) killGroup(p, "SIGKILL");
    });
  }
}

function killGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // ESRCH: the group is already gone.
  }
}

function tailText(lines: string[]): string {
  let text = lines.slice(-TAIL_LINES).join("\n");
  if (text.length > TAIL_CHARS) text = "..." + text.slice(-TAIL_CHARS);
  return text;
}

/**
 * Runs `<dir>/<module>.js`'s exported function once in a fresh Node process and reports its outcome.
 * Rejects only on invalid options (entrypoint, dir, env, timeout, an event that is not serialisable);
 * whatever happens once the job runs (a throw, a crash, a timeout) is a Failed result.
 */
export async function runJob(opts: RunJobOptions): Promise<JobResult> {
  const started = performance.now();
  const entrypoint = opts.entrypoint ?? DEFAULT_ENTRYPOINT;
  parseEntrypoint(entrypoint);
  const dir = path.resolve(opts.dir);
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    throw new Error(`runJob: job directory ${dir} does not exist or is not a directory; pass the dir returned by bundleHandler`);
  }
  const timeoutSec = opts.timeoutSec ?? DEFAULT_TIMEOUT_SEC;
  if (typeof timeoutSec !== "number" || !Number.isFinite(timeoutSec) || timeoutSec <= 0 || timeoutSec * 1000 > 2 ** 31 - 1) {
    throw new Error(`runJob: timeoutSec must be a positive number of seconds up to 2147483 (got ${String(timeoutSec)})`);
  }
  const env = jobEnvironment(opts.env);
  const nonce = crypto.randomBytes(16).toString("hex");
  let invocation: string;
  try {
    invocation = JSON.stringify({ nonce, event: opts.event });
  } catch (err) {
    throw new Error(`runJob: the event is not JSON-serialisable: ${(err as Error).message}`);
  }
  const scrub = makeScrubber(opts.secrets);

  return new Promise<JobResult>((resolve, reject) => {
    const stderrTail: string[] = [];
    const outputTail: string[] = [];
    let callbackError: unknown;
    let result: { phase: JobPhase; message: string } | undefined;
    let stopReason: string | undefined;
    let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let spawnError: Error | undefined;
    let finished = false;
    const timers: NodeJS.Timeout[] = [];

    let child: ChildProcess;
    try {
      child = spawn(process.execPath, [BOOTSTRAP, entrypoint], {
        cwd: dir,
        env,
        stdio: ["pipe", "pipe", "pipe", "pipe"],
        // Its own process group, so a timeout can kill whatever the handler started too.
        detached: true,
      });
    } catch (err) {
      const message = `could not start the job process (${process.execPath} in ${dir}): ${(err as Error).message}`;
      resolve({ phase: "Failed", message: scrub(message), durationMs: Math.round(performance.now() - started) });
      return;
    }
    if (child.pid !== undefined) track(child.pid);

    const deliver = (stream: OutputStream) => (raw: string) => {
      const line = scrub(raw);
      outputTail.push(line);
      if (outputTail.length > TAIL_LINES) outputTail.shift();
      if (stream === "stderr") {
        stderrTail.push(line);
        if (stderrTail.length > TAIL_LINES) stderrTail.shift();
      }
      if (!opts.onOutput || callbackError !== undefined) return;
      try {
        opts.onOutput(line, stream);
      } catch (err) {
        callbackError = err;
      }
    };
    const out = lineReader(child.stdout!, deliver("stdout"));
    const errOut = lineReader(child.stderr!, deliver("stderr"));
    const channel = child.stdio[3] as Readable;
    readReports(channel, (line) => {
      if (result) return;
      try {
        const r = JSON.parse(line) as { nonce?: unknown; phase?: unknown; message?: unknown };
        if (r.nonce === nonce && (r.phase === "Succeeded" || r.phase === "Failed") && typeof r.message === "string") {
          result = { phase: r.phase, message: r.message };
        }
      } catch {
        // Not the bootstrap's report: ignore it, the report is still to come.
      }
    });

    child.stdin!.on("error", () => undefined); // EPIPE when the process dies before reading the event
    child.stdin!.end(invocation);

    const stop = (reason: string) => {
      if (stopReason !== undefined || exitInfo) return;
      stopReason = reason;
      if (child.pid === undefined) return;
      killGroup(child.pid, "SIGTERM");
      timers.push(setTimeout(() => killGroup(child.pid!, "SIGKILL"), KILL_GRACE_MS));
    };
    timers.push(setTimeout(() => stop(`timed out after ${timeoutSec} s`), timeoutSec * 1000));
    const onAbort = () => stop("cancelled before it finished");
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener("abort", onAbort, { once: true });

    child.on("error", (err) => {
      spawnError ??= err;
      if (child.pid === undefined) finalize();
    });
    child.on("exit", (code, signal) => {
      exitInfo = { code, signal };
      // The platform discards the job's container when the handler returns: whatever the handler left
      // running in the background goes with it.
      if (child.pid !== undefined) {
        killGroup(child.pid, "SIGKILL");
        live.delete(child.pid);
      }
      timers.push(
        setTimeout(() => {
          for (const s of [child.stdout, child.stderr, channel]) s?.destroy();
          finalize();
        }, PIPE_GRACE_MS),
      );
    });
    child.on("close", () => finalize());

    function finalize(): void {
      if (finished) return;
      out.flush();
      errOut.flush();
      finishWith(outcome());
    }

    function outcome(): { phase: JobPhase; message: string } {
      if (result) return result;
      if (stopReason !== undefined) {
        const tail = tailText(outputTail);
        return { phase: "Failed", message: stopReason + (tail ? `; last output:\n${tail}` : "; the handler printed nothing") };
      }
      if (spawnError && !exitInfo) {
        return { phase: "Failed", message: `could not start the job process (${process.execPath} in ${dir}): ${spawnError.message}` };
      }
      const how = exitInfo?.signal ? `was killed by signal ${exitInfo.signal}` : `exited with code ${exitInfo?.code}`;
      const tail = tailText(stderrTail);
      return {
        phase: "Failed",
        message: `the job process ${how} before reporting a result (did the handler call process.exit?)` + (tail ? `; last stderr lines:\n${tail}` : "; stderr was empty"),
      };
    }

    function finishWith(r: { phase: JobPhase; message: string }): void {
      finished = true;
      for (const t of timers) clearTimeout(t);
      opts.signal?.removeEventListener("abort", onAbort);
      if (callbackError !== undefined) {
        reject(callbackError);
        return;
      }
      resolve({ phase: r.phase, message: scrub(r.message), durationMs: Math.round(performance.now() - started) });
    }
  });
}
