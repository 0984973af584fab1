// The dpkg repair on the VM: look (one unprivileged probe), plan and script it (dpkg-repair.ts, pure),
// run the script as one detached root step, look again. Apt.ensureDpkgHealthy runs this once per run.

import { isLockError } from "./apt-output";
import { inTransaction, recordedStep, type TransactionRecorder } from "./apt-transaction";
import { DPKG_HEALTH_LOOK, type DpkgHealth, needsRepair, parseDpkgHealth } from "./dpkg-health";
import {
  describeDamage,
  describeRepair,
  planRepair,
  repairFailureMessage,
  repairScript,
  repairSources,
  wouldRemove,
} from "./dpkg-repair";
import { CommandError, type Remote, runLong } from "./exec";
import type { Progress } from "./progress";

export interface RepairContext {
  remote: Remote;
  settings: { lockTimeoutSec: number; installTimeoutSec: number };
  /** Check mode: the repair a real run would make is only recorded. */
  check: boolean;
  progress?: Progress;
  /** Apt.withLock: runs `op` again while it fails on a busy lock, then names the holder. */
  withLock<T>(what: string, op: () => Promise<T>): Promise<T>;
  /** Receives the line for the result's `changes` ("repaired dpkg (...): ..."). */
  repaired(line: string): void;
  /**
   * Where what the repair's own dpkg runs installed goes (Apt's recorder: the job's inventory), as for an
   * install: the packages apt-get -f install brings are this job's doing. None: the repair keeps no record.
   */
  record?: TransactionRecorder;
  /** dpkg's health as already read (after apt-get update, nobody holding a lock): no look of its own first. */
  seen?: DpkgHealth;
}

/** Messages stay English (parsed) while the VM's own locale settings stay as they are. */
const QUERY_ENV = { LC_ALL: "C" };
const INSTALL_ENV = { DEBIAN_FRONTEND: "noninteractive", LC_MESSAGES: "C", LANGUAGE: "" };

async function look(remote: Remote): Promise<DpkgHealth> {
  return parseDpkgHealth(
    (await remote.run(DPKG_HEALTH_LOOK.script, { env: QUERY_ENV, label: "dpkg --audit", timeoutMs: 60_000 })).stdout,
  );
}

export async function repairDpkg(ctx: RepairContext): Promise<void> {
  const before = ctx.seen ?? (await look(ctx.remote));
  if (!needsRepair(before)) return;
  const damage = describeDamage(before);
  if (ctx.check) {
    ctx.repaired(`repaired dpkg (${damage}): ${describeRepair(planRepair(before))}`);
    return;
  }
  ctx.progress?.info(`dpkg needs repair (${damage}): ${describeRepair(planRepair(before))}`);
  // A busy lock sends the whole round again, looked at afresh: its holder may have changed what is left.
  let attempt = 0;
  const ran = await ctx.withLock("dpkg repair", async () => {
    const plan = planRepair(attempt++ === 0 ? before : await look(ctx.remote));
    // A maintainer script left running is waited for as long as a lock would be.
    const { record } = ctx;
    const script = repairScript(plan, {
      lockTimeoutSec: ctx.settings.lockTimeoutSec,
      waitSec: ctx.settings.lockTimeoutSec,
      record: !!record,
    });
    const run = () =>
      runLong(ctx.remote, record ? inTransaction(script) : script, {
        env: INSTALL_ENV,
        label: "dpkg repair",
        timeoutMs: ctx.settings.installTimeoutSec * 1000,
      });
    try {
      // Recorded after each attempt, whatever its outcome (a busy lock may stop it after dpkg installed some).
      const r = record ? (await recordedStep(ctx.remote, run, record, "the dpkg repair")).result : await run();
      return { plan, output: `${r.stdout}\n${r.stderr}`, exit: undefined as number | undefined };
    } catch (err) {
      if (!(err instanceof CommandError) || err.code === null || isLockError(`${err.stderr}\n${err.stdout}`)) throw err;
      return { plan, output: `${err.stdout}\n${err.stderr}`, exit: err.code };
    }
  });
  const after = await look(ctx.remote);
  if (!needsRepair(after) && ran.exit === undefined) {
    ctx.repaired(`repaired dpkg (${damage}): ${describeRepair(ran.plan, repairSources(ran.output))}`);
    return;
  }
  let removes: string[] | undefined;
  if (/remove is disabled|Packages need to be removed/.test(ran.output)) {
    const sim = await ctx.remote.run("apt-get -s -f install -q", {
      check: false,
      env: QUERY_ENV,
      label: "apt-get -s -f install",
      timeoutMs: 60_000,
    });
    removes = wouldRemove(sim.stdout);
  }
  const target = "target" in ctx.remote ? String((ctx.remote as { target: unknown }).target) : "the VM";
  throw new Error(repairFailureMessage({ target, after, output: ran.output, exit: ran.exit, removes }));
}
