// The connection a handler works through: one SSH session at a time, replaced when it is lost, inside
// the job's time budget; a long step lost with the link is followed again, never re-run.

import type { Duplex } from "node:stream";
import { type DetachMode, detachedScript, isConnectionLoss, STEPS_DIR, stepId } from "./detached";
import {
  CommandError,
  type Connection,
  DEFAULT_TIMEOUT_MS,
  type RunOptions,
  type RunResult,
  wrapCommand,
} from "./exec";
import { formatDuration, type Progress } from "./progress";

// In full:
//   - a command issued after the session was lost reconnects first (same retry policy, and the host
//     key the first session saw is required of every later one); a read lost with the session is read
//     again once on the new one (a change is never repeated: it may have happened);
//   - a long step (runDetached) runs detached on the VM (detached.ts); when the link drops while it
//     runs, the handler reconnects and follows the same step again instead of failing or re-running it;
//   - every command's limit is cut to what is left of the job's budget (time_budget_sec), and running
//     out is reported as a timeout naming the step it hit. A detached step is never killed by that: it
//     finishes on the VM, and the next run waits for it.
/** Thrown when the job's time budget runs out; `step` is what was running. */
export class JobTimeoutError extends Error {
  constructor(
    message: string,
    readonly step: string,
  ) {
    super(message);
    this.name = "JobTimeoutError";
  }
}

/** The job's overall limit: when it started and how long it may take (undefined: no limit). */
export interface JobBudget {
  started: number;
  budgetSec?: number;
  now: () => number;
}

export interface ResilientOptions {
  /** Names the job's steps on the VM (stepId). */
  job: string;
  progress?: Progress;
  budget: JobBudget;
  /** Long steps run detached (the transport is real SSH); without it runDetached runs in the channel. */
  detach: boolean;
}

export class ResilientConnection implements Connection {
  private current: Connection & { readonly lost?: boolean };
  /** How many times the connection was replaced. */
  reconnects = 0;

  constructor(
    first: Connection,
    private readonly reconnect: () => Promise<Connection>,
    private readonly opts: ResilientOptions,
  ) {
    this.current = first;
  }

  get target(): string {
    return this.current.target;
  }

  get hostKeySha256(): string {
    return this.current.hostKeySha256;
  }

  /** Milliseconds left of the job's budget (Infinity without one). */
  remainingMs(): number {
    const { started, budgetSec, now } = this.opts.budget;
    return budgetSec === undefined ? Number.POSITIVE_INFINITY : started + budgetSec * 1000 - now();
  }

  private timeout(label: string, detachedAs?: string): JobTimeoutError {
    const { budgetSec, started, now } = this.opts.budget;
    return new JobTimeoutError(
      `timed out during "${label}": the job's time budget (time_budget_sec ${budgetSec}s, set from the job's ` +
        `wait_timeout_sec) ran out after ${formatDuration(now() - started)}` +
        (detachedAs
          ? `; the step itself was not stopped: it goes on on the VM (${STEPS_DIR}/${detachedAs}) and the next run ` +
            `waits for it`
          : "") +
        ". Raise waitTimeoutSec if the VM is this slow.",
      label,
    );
  }

  async run(command: string, opts: RunOptions = {}): Promise<RunResult> {
    return this.runLimited(command, opts);
  }

  private async runLimited(command: string, opts: RunOptions, detachedAs?: string, again = false): Promise<RunResult> {
    const label = opts.label ?? command.slice(0, 80);
    const left = this.remainingMs();
    if (left <= 0) throw this.timeout(label, detachedAs);
    const own = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const cut = left < own;
    if (this.current.lost) await this.replace(`before "${label}"`);
    try {
      return await this.current.run(command, { ...opts, timeoutMs: cut ? Math.max(1000, Math.floor(left)) : own });
    } catch (err) {
      if (cut && err instanceof CommandError && err.code === null && /timed out after/.test(err.message))
        throw this.timeout(label, detachedAs);
      // A read (not marked mutates: it changes nothing) lost with the link is read again, once, on a new
      // session: a stalled link (seen: 20 s without an answer to keepalives) must not fail a job over a look.
      if (!opts.mutates && !detachedAs && !again && this.current.lost) {
        await this.replace(`during "${label}"`);
        return this.runLimited(command, opts, detachedAs, true);
      }
      throw err;
    }
  }

  /** The current session's TCP channel (reconnecting first when it was lost); absent on a transport without one. */
  async tunnel(host: string, port: number, opts: { timeoutMs?: number } = {}): Promise<Duplex> {
    const label = `a TCP channel to ${host}:${port}`;
    const left = this.remainingMs();
    if (left <= 0) throw this.timeout(label);
    if (this.current.lost) await this.replace(`before ${label}`);
    if (!this.current.tunnel) throw new Error(`the connection to ${this.target} offers no TCP channels`);
    return this.current.tunnel(host, port, { timeoutMs: Math.min(opts.timeoutMs ?? 30_000, Math.max(1000, left)) });
  }

  /** A new session in place of the lost one (the kit's connect: retry policy, the first host key required). */
  private async replace(why: string): Promise<void> {
    this.opts.progress?.info(`the SSH connection was lost; reconnecting (${why})`);
    const old = this.current;
    this.current = await this.reconnect();
    this.reconnects++;
    await old.close().catch(() => undefined);
  }

  /**
   * Runs `command` as root, detached on the VM (see detached.ts), and follows it to its end across lost
   * connections. Same result as run() with sudo: the step's output and exit status.
   */
  async runDetached(command: string, opts: RunOptions = {}): Promise<RunResult> {
    if (!this.opts.detach) return this.run(command, { ...opts, sudo: true });
    const script = wrapCommand(command, { env: opts.env });
    const id = stepId(this.opts.job, script);
    const label = opts.label ?? command.slice(0, 80);
    let mode: DetachMode = "start";
    for (;;) {
      try {
        const result = await this.runLimited(
          detachedScript(id, script, mode),
          { ...opts, env: undefined, sudo: true, label },
          id,
        );
        this.sayWhatTheFollowerDid(label, result.stderr);
        return result;
      } catch (err) {
        if (err instanceof CommandError) this.sayWhatTheFollowerDid(label, err.stderr);
        if (!isConnectionLoss(err) || this.remainingMs() <= 0) throw err;
        this.opts.progress?.info(
          `${label}: the connection was lost while it ran; it goes on on the VM as step ${id}: reconnecting to ` +
            `follow it`,
        );
        await this.replace(`to follow ${id}`);
        mode = "follow";
      }
    }
  }

  /** The follower's own notes (it waited for or attached to an earlier run's step), as progress lines. */
  private sayWhatTheFollowerDid(label: string, stderr: string): void {
    for (const line of stderr.split("\n"))
      if (/^vm-install: (waiting for|attached to) step/.test(line))
        this.opts.progress?.info(`${label}: ${line.slice(12)}`);
  }

  close(): Promise<void> {
    return this.current.close();
  }
}
