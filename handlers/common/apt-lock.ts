// Waiting for apt's locks. Two kinds of holder, two kinds of wait:
//   - the VM's first boot or apt's own periodic work (cloud-init, apt-daily, apt-daily-upgrade,
//     unattended-upgrades; lock-holders.ts says which): waited for as long as the first-boot clock allows
//     (the job's time budget, apt.first_boot_wait_sec), looked at every few seconds, each look naming it;
//   - anything else: the bounded wait of old, lock_attempts runs of apt-get (each waiting
//     lock_timeout_sec itself) lock_retry_delay_sec apart, then an error naming the holder.
import { AptLockError, isLockError, parseAptHolderNote } from "./apt-output";
import { CommandError, type Remote } from "./exec";
import { type FirstBootClock, pollUntil } from "./first-boot";
import { describeHolders, type LockHolder, readLockHolders } from "./lock-holders";
import { formatDuration, type Progress } from "./progress";

export interface LockWaitSettings {
  lockTimeoutSec: number;
  lockAttempts: number;
  lockRetryDelaySec: number;
}

export interface LockWaitContext {
  remote: Remote;
  settings: LockWaitSettings;
  clock: FirstBootClock;
  progress?: Progress;
  sleep: (ms: number) => Promise<void>;
}

/** The holders, or none when reading them failed (the lock error itself still stands). */
async function holdersNow(ctx: LockWaitContext, aptSaid = ""): Promise<LockHolder[]> {
  // A failed read leaves the lock error to speak for itself; running out of time is not swallowed.
  const holders = await readLockHolders(ctx.remote).catch((err) => {
    if (err instanceof CommandError) return [] as LockHolder[];
    throw err;
  });
  const note = parseAptHolderNote(aptSaid);
  if (holders.length === 0 && note) holders.push(note);
  return holders;
}

const firstBootHolders = (holders: LockHolder[]) => holders.filter((h) => h.firstBoot);

/**
 * While the first boot holds an apt lock: look every few seconds, naming the holder, until it lets go.
 * Throws AptLockError naming the holder and the setting to raise when the clock runs out first.
 */
export async function waitForFirstBootLocks(ctx: LockWaitContext, what: string, seen?: LockHolder[]): Promise<void> {
  if (!ctx.clock.enabled) return;
  let last = seen ?? [];
  let first = seen !== undefined;
  const freed = await pollUntil(
    ctx.clock,
    async () => {
      if (!first) last = await holdersNow(ctx);
      first = false;
      const busy = firstBootHolders(last);
      if (busy.length === 0) return { done: true };
      return { waiting: `the apt lock the first boot holds (${what}): ${describeHolders(busy)}` };
    },
    ctx.progress,
  );
  if (freed) return;
  throw new AptLockError(
    `${what}: the apt/dpkg lock stayed held by the VM's first boot or apt's own periodic work: ` +
      `${describeHolders(firstBootHolders(last))}; ` +
      `${ctx.clock.limitWords()}. It goes on on the VM; run the job again (raise run_id) once it is over.`,
    last,
  );
}

/**
 * Runs `op` (an apt command) and, while it fails because a lock is busy: waits for the first boot when
 * the first boot holds it (not counted as an attempt), else runs it again after lockRetryDelaySec, up to
 * lockAttempts runs, then throws AptLockError naming the holder's pid, command and unit.
 */
export async function withLock<T>(ctx: LockWaitContext, what: string, op: () => Promise<T>): Promise<T> {
  const { lockAttempts, lockRetryDelaySec, lockTimeoutSec } = ctx.settings;
  for (let attempt = 1; ; ) {
    try {
      return await op();
    } catch (err) {
      if (!(err instanceof CommandError) || !isLockError(`${err.stderr}\n${err.stdout}`)) throw err;
      const holders = await holdersNow(ctx, `${err.stderr}\n${err.stdout}`);
      if (ctx.clock.enabled && firstBootHolders(holders).length) {
        await waitForFirstBootLocks(ctx, what, holders);
        continue;
      }
      const who = holders.length ? describeHolders(holders) : "no holder found any more (it was freed just now)";
      if (attempt >= lockAttempts) {
        throw new AptLockError(
          `${what}: the apt/dpkg lock stayed busy through ${lockAttempts} attempt${lockAttempts === 1 ? "" : "s"} ` +
            `(each waiting ${lockTimeoutSec}s, ${lockRetryDelaySec}s apart): ${who}. ` +
            "That is not the VM's first boot nor apt's own periodic work (those are waited for as long as the " +
            "job may take): wait for that process to finish or stop it, then run the job again (raise run_id); " +
            "apt.lock_attempts and apt.lock_timeout_sec wait longer.",
          holders,
        );
      }
      attempt++;
      const next = `attempt ${attempt}/${lockAttempts} in ${formatDuration(lockRetryDelaySec * 1000)}`;
      ctx.progress?.info(`${what}: lock busy: ${who}; ${next}`);
      await ctx.sleep(lockRetryDelaySec * 1000);
    }
  }
}
