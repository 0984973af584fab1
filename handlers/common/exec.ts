// Running commands on the VM. Installers talk to a `Remote`, never to ssh2 directly, so tests can hand
// them a scripted double and the rules that matter (sudo as a whole, a command line any login shell
// passes on, data on stdin, no exit status is a failure, secrets scrubbed) live in one place.

import type { Duplex } from "node:stream";
import { UNIX_USER } from "../../lib/shared/names";
import { secrets as defaultSecrets, type SecretScrubber } from "../../lib/shared/secrets";
import { quote } from "../../lib/shared/shell-quote";
import { formatDuration } from "./progress";

// The rules, in full:
//   - a privileged command runs through sudo as a whole: `sudo -n sh -c '<quoted>'`. `sudo A && B` would
//     run B unprivileged, and a bare `sudo` could stop to ask for a password nobody will type;
//   - every command, privileged or not, reaches sh through `sh -c` in a form any login shell passes on
//     unchanged (sshd runs the line with the user's shell, which may be fish or csh: commandLine);
//   - data (SQL, passwords) goes on stdin, never on a command line, where `ps` on the VM would show it;
//   - an exit without a status (channel died, signal) is a failure, never "exit 0";
//   - every known secret is scrubbed from captured output and from error text.
export interface RunOptions {
  /** Run as root: the whole command goes to `sudo -n sh -c`. @default false */
  sudo?: boolean;
  /** Run as this user instead of root (`sudo -n -u <user> sh -c`, e.g. "postgres"); implies sudo. */
  user?: string;
  /** Bytes for the command's stdin, followed by EOF. Without it stdin is closed at once. */
  stdin?: string | Buffer;
  /** Give up (and close the channel) after this long. @default 300000 (5 min) */
  timeoutMs?: number;
  /** Throw a CommandError on a non-zero exit. @default true */
  check?: boolean;
  /** Variables exported for the command, e.g. {LC_ALL: "C"}. They show in `ps`: never secrets. */
  env?: Record<string, string>;
  /** How errors and progress name the command. @default the command itself, shortened */
  label?: string;
  /**
   * The command changes the VM: check mode refuses it (check-mode.ts). Long steps (runLong) always are.
   * @default false
   */
  mutates?: boolean;
}

export interface RunResult {
  /** Exit status; always a number (an exit without one throws instead). */
  code: number;
  /** Captured output, UTF-8, scrubbed of known secrets. */
  stdout: string;
  stderr: string;
  durationMs: number;
}

/** What installers need from a VM: run one command and get its result. */
export interface Remote {
  run(command: string, opts?: RunOptions): Promise<RunResult>;
  /**
   * A long step (apt-get, dpkg repair, a service restart), run as root detached on the VM and followed
   * to its end across lost connections (resilient-connection.ts). Absent: run it with sudo in the channel.
   */
  runDetached?(command: string, opts?: RunOptions): Promise<RunResult>;
  /**
   * A TCP stream to host:port as the VM itself reaches it (an SSH direct-tcpip channel), for a protocol
   * the job speaks itself (the SCRAM login check). Read-only for check mode: opening it changes nothing.
   * Rejects with a TunnelRefused when sshd or the VM refuses it. Absent: the transport has no such thing.
   */
  tunnel?(host: string, port: number, opts?: { timeoutMs?: number }): Promise<Duplex>;
}

/** The VM's sshd would not open the TCP channel: `forwarding` when it is not allowed at all (reason 1). */
export class TunnelRefused extends Error {
  constructor(
    message: string,
    readonly forwarding: boolean,
  ) {
    super(message);
    this.name = "TunnelRefused";
  }
}

/** An open connection to the VM as the kit holds it: SshSession is one, tests give a scripted double. */
export interface Connection extends Remote {
  readonly target: string;
  readonly hostKeySha256: string;
  close(): Promise<void>;
}

/** `remote.runDetached` where the remote has it, else `run` with sudo: the same result either way. */
export function runLong(remote: Remote, command: string, opts: RunOptions = {}): Promise<RunResult> {
  const marked = { ...opts, mutates: true };
  return remote.runDetached ? remote.runDetached(command, marked) : remote.run(command, { ...marked, sudo: true });
}

/** What a transport (ssh.ts, or a test) gives back for one command, before any interpretation. */
export interface RawExecResult {
  /** null when the channel closed without an exit status (connection lost, killed by a signal). */
  code: number | null;
  signal?: string;
  stdout: Buffer;
  stderr: Buffer;
}

/** Runs an already wrapped command line; rejects when the command could not run or timed out. */
export type RawExec = (commandLine: string, opts: { stdin?: Buffer; timeoutMs: number }) => Promise<RawExecResult>;

export const DEFAULT_TIMEOUT_MS = 300_000;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The command as sh reads it: exported variables first, then, with sudo, the whole thing quoted into one
 * `sudo -n sh -c`. `-n` makes sudo fail at once instead of waiting for a password. What goes over SSH is
 * commandLine's form of it, which no login shell can misread.
 */
export function wrapCommand(
  command: string,
  opts: { sudo?: boolean; user?: string; env?: Record<string, string> } = {},
): string {
  const exports = Object.entries(opts.env ?? {}).map(([name, value]) => {
    if (!ENV_NAME.test(name)) throw new Error(`wrapCommand: ${JSON.stringify(name)} is not a variable name`);
    return `export ${name}=${quote(value)}; `;
  });
  const script = exports.join("") + command;
  if (opts.user !== undefined) {
    if (!UNIX_USER.test(opts.user))
      throw new Error(`wrapCommand: ${JSON.stringify(opts.user)} is not a Unix user name`);
    return `sudo -n -u ${opts.user} sh -c ${quote(script)}`;
  }
  return opts.sudo ? `sudo -n sh -c ${quote(script)}` : script;
}

/**
 * A quoted word every login shell sshd may run the line with (sh, bash, zsh, fish, csh, tcsh) reads the
 * same: printable ASCII, no `!` (csh expands history even inside single quotes), no newline (csh refuses
 * one inside them), and no backslash before a backslash or a quote (fish's escapes inside single quotes).
 * quote()'s `'\''` for an embedded quote is read alike by all of them.
 */
function portableWord(script: string): string | undefined {
  if (!/^[ -~]*$/.test(script) || script.includes("!") || /\\(\\|'|$)/.test(script)) return undefined;
  return quote(script);
}

/**
 * The line sent over SSH for `command`: wrapCommand's exports and sudo, with the script always given to
 * `sh -c` as one word (see portableWord), so the login shell only starts sh and its own syntax never
 * matters. A script that cannot be such a word (several lines, `!`, backslashes, non-ASCII) travels
 * base64-encoded and sh decodes and evals it (base64 is coreutils, on every Debian and Ubuntu); stdin
 * stays the command's.
 */
export function commandLine(
  command: string,
  opts: { sudo?: boolean; user?: string; env?: Record<string, string> } = {},
): string {
  const script = wrapCommand(command, { env: opts.env });
  const word = portableWord(script) ?? `'eval "$(echo ${Buffer.from(script, "utf8").toString("base64")} | base64 -d)"'`;
  if (opts.user !== undefined) {
    if (!UNIX_USER.test(opts.user))
      throw new Error(`commandLine: ${JSON.stringify(opts.user)} is not a Unix user name`);
    return `sudo -n -u ${opts.user} sh -c ${word}`;
  }
  return `${opts.sudo ? "sudo -n " : ""}sh -c ${word}`;
}

/** The last `n` non-empty lines of `text`: what a person needs from a long apt log. */
export function tail(text: string, n = 15): string {
  const lines = text
    .split("\n")
    .map((l) => l.trimEnd())
    .filter((l) => l !== "");
  return (lines.length > n ? ["...", ...lines.slice(-n)] : lines).join("\n");
}

function shorten(command: string, max = 120): string {
  const one = command.replace(/\s+/g, " ").trim();
  return one.length > max ? `${one.slice(0, max - 3)}...` : one;
}

/** A command that failed: non-zero exit (with check), no exit status, a timeout or a lost channel. */
export class CommandError extends Error {
  constructor(
    message: string,
    /** The command as given to run() (unwrapped), scrubbed. */
    readonly command: string,
    /** Exit status, or null when there was none. */
    readonly code: number | null,
    readonly stdout: string,
    readonly stderr: string,
    readonly durationMs: number,
  ) {
    super(message);
    this.name = "CommandError";
  }
}

/**
 * The error for a failed `r`, for a caller that ran with `check: false` to take the output apart first (a look's
 * frames at its end, vm-facts.ts lookAtEnd) or to name the part of the exec that failed.
 */
export function commandFailed(label: string, command: string, r: RunResult, code = r.code): CommandError {
  const output = tail(r.stderr.trim() ? r.stderr : r.stdout);
  const message = `${label} failed (exit ${code})${output ? `:\n${output}` : ""}`;
  return new CommandError(message, command, code, r.stdout, r.stderr, r.durationMs);
}

/** Why sudo refused, in terms of what to change on the VM; undefined when it was not sudo. */
function sudoHint(stderr: string, user: string): string | undefined {
  if (/sudo: (a password is required|a terminal is required)/.test(stderr)) {
    return (
      `${user} needs passwordless sudo on the VM: add "${user} ALL=(ALL) NOPASSWD:ALL" to a file in ` +
      `/etc/sudoers.d/`
    );
  }
  if (/is not in the sudoers file|is not allowed to run sudo/.test(stderr)) {
    return `${user} may not use sudo on the VM: add it to the sudo group or /etc/sudoers.d/ with NOPASSWD`;
  }
  return undefined;
}

export interface ExecRemoteOptions {
  /** How messages name the VM, e.g. "ubuntu@10.0.0.5:22". */
  target: string;
  /** The SSH login, for sudo hints. */
  user?: string;
  /** @default the process-wide registry */
  secrets?: SecretScrubber;
  now?: () => number;
}

/** A Remote over any RawExec: wrapping, timeouts, exit checks and scrubbing, transport-agnostic. */
export class ExecRemote implements Remote {
  private readonly secrets: SecretScrubber;
  private readonly now: () => number;

  constructor(
    private readonly exec: RawExec,
    private readonly opts: ExecRemoteOptions,
  ) {
    this.secrets = opts.secrets ?? defaultSecrets;
    this.now = opts.now ?? Date.now;
  }

  async run(command: string, opts: RunOptions = {}): Promise<RunResult> {
    const scrub = (s: string) => this.secrets.scrub(s);
    const label = scrub(opts.label ?? shorten(command));
    const where = this.opts.target;
    const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const line = commandLine(command, { sudo: opts.sudo, user: opts.user, env: opts.env });
    const stdin =
      opts.stdin === undefined ? undefined : Buffer.isBuffer(opts.stdin) ? opts.stdin : Buffer.from(opts.stdin, "utf8");
    const started = this.now();

    let raw: RawExecResult;
    try {
      raw = await this.exec(line, { stdin, timeoutMs });
    } catch (err) {
      const ms = this.now() - started;
      throw new CommandError(
        `${label} on ${where}: ${scrub((err as Error).message)}`,
        scrub(command),
        null,
        "",
        "",
        ms,
      );
    }
    const durationMs = this.now() - started;
    const stdout = scrub(raw.stdout.toString("utf8"));
    const stderr = scrub(raw.stderr.toString("utf8"));

    if (raw.code === null) {
      const why = raw.signal
        ? `it was killed by signal ${raw.signal}`
        : "the SSH channel closed without an exit status";
      throw new CommandError(
        `${label} on ${where} did not finish: ${why} after ` +
          `${formatDuration(durationMs)}${stderr.trim() ? `\n${tail(stderr)}` : ""}`,
        scrub(command),
        null,
        stdout,
        stderr,
        durationMs,
      );
    }
    if (raw.code !== 0 && opts.check !== false) {
      const hint =
        opts.sudo || opts.user !== undefined ? sudoHint(stderr, this.opts.user ?? "the SSH user") : undefined;
      const output = tail(stderr.trim() ? stderr : stdout);
      throw new CommandError(
        `${label} failed on ${where} (exit ${raw.code})${hint ? `: ${hint}` : ""}${output ? `:\n${output}` : ""}`,
        scrub(command),
        raw.code,
        stdout,
        stderr,
        durationMs,
      );
    }
    return { code: raw.code, stdout, stderr, durationMs };
  }
}
