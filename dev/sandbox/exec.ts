// Root commands inside the target without SSH: nsenter into the namespaces of the container's systemd.
// Tests use this for set-up and fault injection (stop sshd, fill the dpkg lock, kill postgres), so it
// must work exactly when SSH does not.
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { childEnv, killGroup } from "./run";

export interface RootExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RootExecOptions {
  timeoutMs?: number;
  /** Written to the command's stdin (then closed): file contents, SQL, secrets that must not be in argv. */
  input?: string;
}

/** A clean root login environment, not the test runner's (its PATH, HOME, npm_* variables). */
const TARGET_ENV = [
  "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  "HOME=/root",
  "LANG=C.UTF-8",
  "TERM=dumb",
  "USER=root",
  "LOGNAME=root",
];

function nsenterArgs(initPid: number, command: string): string[] {
  return [
    "--target",
    String(initPid),
    "--mount",
    "--uts",
    "--ipc",
    "--net",
    "--pid",
    "--root",
    "--wd",
    "--",
    "/usr/bin/env",
    "-i",
    ...TARGET_ENV,
    "/bin/sh",
    "-c",
    command,
  ];
}

export interface Spawned {
  done: Promise<RootExecResult>;
  kill(): void;
}

/**
 * Starts `command` as root in the target. nsenter runs in a process group of its own, and its forked
 * child (the command, inside the target's pid namespace) keeps that group, so kill() reaches the
 * command and whatever it started in the foreground, not only nsenter.
 */
export function spawnInTarget(initPid: () => number, command: string, opts: RootExecOptions = {}): Spawned {
  let pid: number | undefined;
  let timedOut = false;
  const done = new Promise<RootExecResult>((resolve, reject) => {
    let init: number;
    try {
      init = initPid();
    } catch (e) {
      reject(e);
      return;
    }
    const child = spawn("nsenter", nsenterArgs(init, command), {
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
      env: childEnv(),
    });
    pid = child.pid;
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const timer = opts.timeoutMs
      ? setTimeout(() => {
          timedOut = true;
          killGroup(pid);
        }, opts.timeoutMs)
      : undefined;
    child.on("error", (e) => {
      if (timer) clearTimeout(timer);
      reject(new Error(`could not run nsenter into the sandbox (init pid ${init}): ${e.message}`));
    });
    child.on("close", (code, signal) => {
      if (timer) clearTimeout(timer);
      if (timedOut) {
        reject(
          new Error(
            `root command in the sandbox timed out after ${opts.timeoutMs} ms and was killed: ` +
              `${command.slice(0, 200)}` +
              (stderr.trim() ? ` (stderr: ${stderr.trim().slice(-500)})` : ""),
          ),
        );
        return;
      }
      // A signal death is reported like a shell does (128 + n), never as success. os is imported above,
      // not required here: this runs after a test ended too, when jest no longer allows a require.
      const sigNo = signal ? (constants.signals[signal] ?? 0) : 0;
      resolve({ code: code ?? 128 + sigNo, stdout, stderr });
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(opts.input ?? "");
  });
  return {
    done,
    kill: () => killGroup(pid),
  };
}
