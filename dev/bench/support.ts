// What every benchmark here shares: a fresh sandbox per measured run (stopped even on ^C), one installer
// job timed through the job runner exactly as the platform would run it, and writing the results file.
// Rounds, rotation and medians: rounds.ts; the results file: results.ts.

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { CommonResult } from "../../handlers/common/installer-result";
import { bundleHandler } from "../../lib/construct/bundling/bundle";
import { runJob } from "../../lib/jobs/run-job";
import type { CheckTarget } from "../../lib/operator/check/check-targets";
import { type DriftRow, runChecks } from "../../lib/operator/check/run-checks";
import { jobEnvFor, type Sandbox, startSandbox } from "../sandbox/index";
import { timeRawSteps } from "./raw-sequences";
import { type BenchResult, summaryLines, writeResult } from "./results";
import { median, type RoundRecord, type RoundsOutcome, type SideSpec } from "./rounds";

export { roundsArg } from "./rounds";

/** A fresh scratch folder for one measured project (cdktf's output, state), left for a look afterwards. */
export function benchDir(label: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `vm-install-${label}-`));
}

const live = new Set<Sandbox>();
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.once(sig, () => {
    Promise.allSettled([...live].map((sb) => sb.stop())).finally(() => process.exit(130));
  });
}

/** Runs `fn` on a fresh sandbox (boot and teardown outside any measurement) and always stops it. */
export async function withSandbox<T>(fn: (sb: Sandbox) => Promise<T>): Promise<T> {
  const sb = await startSandbox();
  live.add(sb);
  try {
    return await fn(sb);
  } finally {
    live.delete(sb);
    await sb.stop();
  }
}

/** Runs `fn` on `n` fresh sandboxes booted at once (boot and teardown outside any measurement); stops them all. */
export async function withSandboxes<T>(n: number, fn: (sbs: Sandbox[]) => Promise<T>): Promise<T> {
  const booted = await Promise.allSettled(Array.from({ length: n }, () => startSandbox()));
  const sbs = booted.flatMap((b) => (b.status === "fulfilled" ? [b.value] : []));
  for (const sb of sbs) live.add(sb);
  try {
    const failed = booted.find((b): b is PromiseRejectedResult => b.status === "rejected");
    if (failed) throw new Error(`withSandboxes: ${n - sbs.length} of ${n} sandboxes did not boot: ${failed.reason}`);
    return await fn(sbs);
  } finally {
    for (const sb of sbs) live.delete(sb);
    await Promise.allSettled(sbs.map((sb) => sb.stop()));
  }
}

export interface TimedJob {
  /** Wall time from spawning the job's process to its outcome. */
  ms: number;
  result: HandlerResult;
}

/** A handler's result: the common shape, then its own fields (each bench checks those it reads). */
export type HandlerResult = CommonResult & Record<string, unknown>;

/** One installer job through the runner on `sb`; throws with the job's message unless it Succeeded. */
export async function timeJob(
  sb: Sandbox,
  handler: string,
  event: unknown,
  secrets: string[] = [],
  env: Record<string, string> = {},
): Promise<TimedJob> {
  const dir = bundleHandler({ handler }).dir;
  const jobEnv = jobEnvFor(sb, env);
  const started = performance.now();
  const out = await runJob({ dir, env: jobEnv, event, timeoutSec: 900, secrets: [jobEnv.SSH_KEY, ...secrets] });
  const ms = performance.now() - started;
  if (out.phase !== "Succeeded") throw new Error(`${handler} failed on ${sb.name}: ${out.message}`);
  return { ms, result: JSON.parse(out.message) };
}

/** Exit non-zero with the error, after stopping any sandbox still up. */
export function runMain(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    async (err) => {
      process.stderr.write(`bench failed: ${(err as Error).stack ?? err}\n`);
      await Promise.allSettled([...live].map((sb) => sb.stop()));
      process.exit(1);
    },
  );
}

/** Prints the summary, writes dev/bench/results/<bench>.json and says where. */
export function report(result: BenchResult, fmt: (ms: number) => string): void {
  process.stdout.write(`\n${summaryLines(result, fmt).join("\n")}\n`);
  const file = writeResult(result);
  process.stdout.write(`results: ${file}\n`);
}

export interface InstallerBenchOptions {
  /** handlers/<handler>/handler.ts */
  handler: string;
  handlerLabel: string;
  event: (sb: Sandbox) => unknown;
  /** Secret values the runner scrubs (besides the key). */
  secrets?: string[];
  env?: (sb: Sandbox) => Record<string, string>;
  /** Checks the first run's result and the VM after it; throws when the work was not done. */
  check?: (sb: Sandbox, result: HandlerResult) => Promise<void>;
  /** Checks the rerun's result (nothing to do); throws otherwise. */
  checkRerun?: (result: HandlerResult) => void;
  rawLabel: string;
  /** The baseline: one plain root shell script sent over one `ssh` session. */
  rawScript: (sb: Sandbox) => string;
  /** Checks the VM after the raw script (the same end state as the handler's). */
  rawCheck?: (sb: Sandbox) => Promise<void>;
}

/**
 * The two sides of an installer benchmark, each on its own fresh sandbox: "handler" (the bundled job
 * through the runner, then its rerun on the same VM, kept in `extra.rerun_ms`) and "raw" (the same work
 * as one root script over one ssh session). The handler's timings_ms and the time outside the handler
 * (process start, bundle load, exit: wall time minus timings_ms.total) go into each run's `extra`.
 */
export function installerSides(o: InstallerBenchOptions): SideSpec[] {
  return [
    {
      name: "handler",
      label: o.handlerLabel,
      run: () =>
        withSandbox(async (sb) => {
          const first = await timeJob(sb, o.handler, o.event(sb), o.secrets ?? [], o.env?.(sb) ?? {});
          await o.check?.(sb, first.result);
          const again = await timeJob(sb, o.handler, o.event(sb), o.secrets ?? [], o.env?.(sb) ?? {});
          o.checkRerun?.(again.result);
          const t = first.result.timings_ms as Record<string, number>;
          return {
            ms: first.ms,
            extra: {
              timings_ms: t,
              outside_handler_ms: Math.round(first.ms - (t.total ?? 0)),
              rerun_ms: Math.round(again.ms),
              rerun_timings_ms: again.result.timings_ms,
            },
          };
        }),
    },
    {
      name: "raw",
      label: o.rawLabel,
      run: () =>
        withSandbox(async (sb) => {
          const raw = await timeRawSteps(sb, o.rawScript(sb), `${o.handler} baseline`);
          await o.rawCheck?.(sb);
          return { ms: raw.ms, extra: { steps_ms: raw.steps } };
        }),
    },
  ];
}

/** Lines saying where the time goes: the handler's phases (median), what is outside them, and the raw steps. */
export function phaseLines(records: RoundRecord[]): string[] {
  const medianOf = (runs: RoundRecord[], key: string) => {
    const t = runs.map((r) => r.extra![key] as Record<string, number>);
    const keys = [...new Set(t.flatMap((x) => Object.keys(x)))];
    return keys.map((k) => `${k} ${Math.round(median(t.map((x) => x[k] ?? 0)))}`).join(", ");
  };
  const handler = records.filter((r) => r.side === "handler" && r.extra?.timings_ms);
  const raw = records.filter((r) => r.side === "raw" && r.extra?.steps_ms);
  const lines: string[] = [];
  if (handler.length) {
    lines.push(`handler phases, median ms (timings_ms): ${medianOf(handler, "timings_ms")}`);
    const outside = Math.round(median(handler.map((r) => r.extra!.outside_handler_ms as number)));
    lines.push(`handler: outside timings_ms (process start, bundle load, exit), median ${outside} ms`);
  }
  if (raw.length)
    lines.push(`raw steps, median ms (outside = ssh spawn, connect, auth, sudo, exit): ${medianOf(raw, "steps_ms")}`);
  return lines;
}

/** The "rerun" series of an installer bench: the handler side's rerun on the same VM, from each round. */
export function rerunSeries(outcome: RoundsOutcome, label: string, targetMs: number) {
  return {
    rerun: {
      label,
      ms: outcome.records.filter((r) => r.side === "handler").map((r) => r.extra!.rerun_ms as number),
      target_ms: targetMs,
    },
  };
}

/** The check jobs of `targets` run in-process, as `npm run check` runs them but without its process: the rows
 * and their wall time, the baseline a check bench sets the command against. */
export async function timeChecksInProcess(targets: CheckTarget[], dir: string, env: NodeJS.ProcessEnv) {
  const started = performance.now();
  const rows: DriftRow[] = await runChecks(targets, {
    logDir: path.join(dir, "bench-logs"),
    projectDir: dir,
    say: () => undefined,
    environment: env,
  });
  return { rows, ms: performance.now() - started };
}
