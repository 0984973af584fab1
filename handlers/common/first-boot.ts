// How long a job waits for the VM's first boot: cloud-init finishing, and a dpkg lock held by cloud-init,
// apt's daily jobs or unattended-upgrades. Not a count of attempts: as long as the job's time budget
// allows (time_budget_sec), and at most apt.first_boot_wait_sec from the first such wait of the run.
// Waiting is polling: one short read every few seconds, each its own SSH command, so a dropped link
// costs one poll (the connection reconnects for the next) instead of the whole wait.
import { isConnectionLoss } from "./detached";
import type { Progress } from "./progress";
import type { JobBudget } from "./resilient-connection";

/** Seconds between two looks while waiting; each look prints one progress line. */
export const FIRST_BOOT_POLL_MS = 5_000;

export interface FirstBootOptions {
  /** The job's overall limit (absent: none). */
  budget?: JobBudget;
  /** apt.first_boot_wait_sec: 0 turns every first-boot wait off. */
  capSec: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  progress?: Progress;
}

/** The end of the first-boot wait, and its reason in words, shared by every wait of one run. */
export class FirstBootClock {
  private started?: number;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;

  constructor(readonly opts: FirstBootOptions) {
    this.now = opts.now ?? opts.budget?.now ?? Date.now;
    this.sleep = opts.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  get enabled(): boolean {
    return this.opts.capSec > 0;
  }

  /** Milliseconds left to wait; the first call starts the first_boot_wait_sec cap. */
  leftMs(): number {
    this.started ??= this.now();
    const cap = this.started + this.opts.capSec * 1000 - this.now();
    const { budget } = this.opts;
    if (budget?.budgetSec === undefined) return cap;
    return Math.min(cap, budget.started + budget.budgetSec * 1000 - this.now());
  }

  /** What ended the wait, and which setting makes it longer. */
  limitWords(): string {
    const { budget, capSec } = this.opts;
    const unlimited = budget?.budgetSec === undefined;
    const budgetEnd = unlimited ? Number.POSITIVE_INFINITY : budget.started + (budget.budgetSec ?? 0) * 1000;
    const capEnd = (this.started ?? this.now()) + capSec * 1000;
    if (budgetEnd <= capEnd) {
      const from = "set from the installer's waitTimeoutSec in cdktf.json: raise that";
      return `the job's time budget ran out (time_budget_sec ${budget?.budgetSec}s, ${from})`;
    }
    return `apt.first_boot_wait_sec (${capSec}s, the longest a job waits for the first boot) ran out: raise it`;
  }
}

/**
 * Looks with `look` until it returns a value; between looks says `waiting` (what is still running) with
 * the time waited so far, every FIRST_BOOT_POLL_MS. A look lost with the SSH link is simply looked again.
 * Returns undefined when the clock ran out first (the caller words the failure).
 */
export type Look<T> = { done: T } | { waiting: string };

export async function pollUntil<T>(clock: FirstBootClock, look: () => Promise<Look<T>>, progress?: Progress) {
  const since = clock.now();
  for (;;) {
    let seen: Look<T>;
    try {
      seen = await look();
    } catch (err) {
      if (!isConnectionLoss(err) || clock.leftMs() <= 0) throw err;
      seen = { waiting: "the SSH connection was lost while looking; looking again" };
    }
    if ("done" in seen) return seen.done;
    const left = clock.leftMs();
    if (left <= 0) return undefined;
    progress?.info(`waiting for ${seen.waiting} (${Math.round((clock.now() - since) / 1000)} s)`);
    await clock.sleep(Math.min(FIRST_BOOT_POLL_MS, left));
    // No look after the end: the connection refuses commands past the job's budget.
    if (clock.leftMs() <= 0) return undefined;
  }
}
