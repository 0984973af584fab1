// Running host programs without a shell (ip, nft, ssh-keygen, debootstrap) and the PATH they need.
// Node built-ins only: the sandbox must work from a bare checkout with nothing but the lockfile's dependencies.
import { type SpawnOptions, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  input?: string;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /** Called with each line of stderr (and stdout when `echoStdout`) as it arrives: progress for long builds. */
  onLine?: (line: string) => void;
  echoStdout?: boolean;
}

/** Feeds whole lines of a chunked stream to `sink`, holding back a partial last line until it ends. */
function lineSplitter(sink: (l: string) => void): (chunk: string) => void {
  let pending = "";
  return (chunk: string) => {
    pending += chunk;
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const l of lines) sink(l);
  };
}

/** Runs a program without a shell (arguments are never re-parsed) and collects its output. Never rejects
 * for a non-zero exit: callers decide what a failure means. Rejects when the program cannot start or times out. */
export function run(cmd: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const spawnOpts: SpawnOptions = {
      stdio: ["pipe", "pipe", "pipe"],
      env: opts.env ?? process.env,
      // Own process group, so a timeout can kill the whole pipeline the program started.
      detached: opts.timeoutMs !== undefined,
    };
    const child = spawn(cmd, args, spawnOpts);
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const emitErr = opts.onLine ? lineSplitter(opts.onLine) : undefined;
    const emitOut = opts.onLine && opts.echoStdout ? lineSplitter(opts.onLine) : undefined;
    child.stdout!.setEncoding("utf8");
    child.stderr!.setEncoding("utf8");
    child.stdout!.on("data", (d: string) => {
      stdout += d;
      emitOut?.(d);
    });
    child.stderr!.on("data", (d: string) => {
      stderr += d;
      emitErr?.(d);
    });
    child.on("error", (err) => {
      if (timer) clearTimeout(timer);
      reject(new Error(`could not start ${cmd}: ${err.message}`));
    });
    child.on("close", (code, signal) => {
      if (timer) clearTimeout(timer);
      if (timedOut) {
        reject(
          new Error(
            `${cmd} ${args.join(" ").slice(0, 200)} timed out after ${opts.timeoutMs} ms and was killed` +
              (stderr ? `; stderr: ${tail(stderr)}` : ""),
          ),
        );
        return;
      }
      resolve({ code: code ?? (signal ? 128 + (signalNumber(signal) ?? 0) : 1), stdout, stderr });
    });
    if (opts.timeoutMs !== undefined) {
      timer = setTimeout(() => {
        timedOut = true;
        killGroup(child.pid);
      }, opts.timeoutMs);
    }
    child.stdin!.on("error", () => undefined); // a program that exits without reading stdin is not an error here
    child.stdin!.end(opts.input ?? "");
  });
}

/** Like `run` but a non-zero exit is an Error naming the command and its stderr. */
export async function runOk(cmd: string, args: string[], opts: RunOptions = {}): Promise<RunResult> {
  const r = await run(cmd, args, opts);
  if (r.code !== 0) {
    throw new Error(`${cmd} ${args.join(" ")} failed (exit ${r.code}): ${tail(r.stderr || r.stdout) || "no output"}`);
  }
  return r;
}

export function killGroup(pid: number | undefined, signal: NodeJS.Signals = "SIGKILL"): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

function signalNumber(signal: NodeJS.Signals): number | undefined {
  const n = (require("node:os") as typeof import("os")).constants.signals[signal];
  return typeof n === "number" ? n : undefined;
}

/** The last few lines of some output, for error messages that stay readable. */
export function tail(text: string, lines = 8): string {
  return text.trim().split("\n").slice(-lines).join(" | ");
}

/** Looks a program up on PATH (plus the sbin directories a non-login root shell may lack). */
export function which(cmd: string): string | undefined {
  const dirs = (process.env.PATH ?? "")
    .split(":")
    .concat(["/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/bin", "/bin"]);
  for (const d of dirs) {
    if (!d) continue;
    const p = path.join(d, cmd);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  return undefined;
}

/** PATH for child processes: root tools live in sbin, which `sudo` or a CI shell may leave out. */
export function childEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const base = process.env.PATH ?? "/usr/bin:/bin";
  const parts = base.split(":");
  for (const d of ["/usr/local/sbin", "/usr/sbin", "/sbin"]) if (!parts.includes(d)) parts.push(d);
  return { ...process.env, PATH: parts.join(":"), LC_ALL: "C", ...extra };
}
