// Runs the check jobs (check-targets.ts) from this machine through the job runner, exactly as the local
// target runs a deploy's jobs: bundled as the stack bundles them, in a fresh Node process, the key read
// from its file, secrets from TF_VAR_ variables. A VM's installers run one after another, as in a deploy;
// VMs run side by side. Each job's whole progress is kept in the logs folder; the caller hears one line
// per job. What comes back is one row per VM x installer: in sync, drift (with what would change), error.
import * as fs from "node:fs";
import * as path from "node:path";
import { bundleHandler } from "../../construct/bundling/bundle";
import { resolveInvocation } from "../../jobs/invocation";
import { JobLog } from "../../jobs/job-log";
import { runJob } from "../../jobs/run-job";
import { printable, printableLine } from "../../shared/printable-text";
import { EXIT, type ExitCode } from "../exit-codes";
import type { CheckJob, CheckTarget } from "./check-targets";

export type DriftState = "in sync" | "drift" | "error" | "skipped";

export interface DriftRow {
  vm: string;
  installer: string;
  state: DriftState;
  /** What a deploy would change, one line each (the installer's would_change). */
  wouldChange: string[];
  /** The check's summary, or the error's first line. */
  summary: string;
  warnings: string[];
  /** The job's wall time here: starting its process, the handler, reporting. */
  durationMs?: number;
  /** The handler's own time (its timings_ms.total): connecting and the commands on the VM. */
  handlerMs?: number;
  /** The job's full progress, relative to the project folder. */
  log?: string;
}

export interface RunChecksOptions {
  /** Where each job's progress is kept (one file per run, the last few kept). */
  logDir: string;
  /** The project folder: log paths in rows are relative to it. */
  projectDir: string;
  /** One line per job started and finished. */
  say: (line: string) => void;
  /** The environment secrets (TF_VAR_...) are read from. @default process.env */
  environment?: NodeJS.ProcessEnv;
}

function row(
  job: Pick<CheckJob, "vm" | "installer">,
  state: DriftState,
  summary: string,
  extra: Partial<DriftRow> = {},
): DriftRow {
  return { vm: job.vm, installer: job.installer, state, wouldChange: [], summary, warnings: [], ...extra };
}

/** An error message (a heading, then a list of problems) on one printable line, as a table cell takes it. */
function oneLine(message: string): string {
  const line = printable(message)
    .trim()
    .replace(/\s*\n\s*/g, " ");
  return printableLine(line.length > 400 ? `${line.slice(0, 397)}...` : line);
}

/**
 * The job's message as a row: a result that lists would_change, or the error it failed with. The message is
 * the VM's word: each text taken from it is one printable line.
 */
export function rowFromMessage(
  job: Pick<CheckJob, "vm" | "installer">,
  phase: string,
  message: string,
  extra: Partial<DriftRow>,
): DriftRow {
  if (phase !== "Succeeded") return row(job, "error", oneLine(message), extra);
  let result: { would_change?: unknown; summary?: unknown; warnings?: unknown; timings_ms?: { total?: unknown } };
  try {
    result = JSON.parse(message);
  } catch {
    return row(job, "error", printableLine(`the job's result is not JSON: ${message.slice(0, 200)}`), extra);
  }
  if (!Array.isArray(result.would_change))
    return row(job, "error", "the job's result has no would_change: was it bundled from an older version?", extra);
  const wouldChange = result.would_change.map((w) => printableLine(String(w)));
  const warnings = Array.isArray(result.warnings) ? result.warnings.map((w) => printableLine(String(w))) : [];
  const handlerMs = typeof result.timings_ms?.total === "number" ? result.timings_ms.total : undefined;
  return row(job, wouldChange.length ? "drift" : "in sync", printableLine(String(result.summary ?? "")), {
    ...extra,
    wouldChange,
    warnings,
    handlerMs,
  });
}

/** Secrets the job needs and the environment lacks, in words; undefined when all are there. */
function missingSecrets(job: CheckJob, environment: NodeJS.ProcessEnv): string | undefined {
  const missing = job.secretEnv.filter((s) => !environment[s.variable]);
  if (!missing.length) return undefined;
  return missing
    .map((s) => `${s.variable} is not set: export it with the value the deploy used (${job.installer}'s ${s.field})`)
    .join("; ");
}

async function runOne(target: CheckTarget, job: CheckJob, opts: RunChecksOptions): Promise<DriftRow> {
  const missing = missingSecrets(job, opts.environment ?? process.env);
  if (missing) return row(job, "error", missing);
  const log = new JobLog(opts.logDir, job.name);
  const relLog = path.relative(opts.projectDir, log.file);
  const started = Date.now();
  try {
    const inv = await resolveInvocation(
      {
        installer: job.installer,
        handlersDir: job.handlersDir,
        event: job.event,
        sshKeyFile: target.keyFile,
        secretEnv: job.secretEnv,
        secretFile: job.secretFile,
        name: job.name,
      },
      { ...(opts.environment ?? process.env), ...target.env },
    );
    const dir = bundleHandler({ handler: job.installer, handlersDir: job.handlersDir }).dir;
    const result = await runJob({
      dir,
      env: inv.env,
      event: inv.event,
      timeoutSec: job.timeoutSec,
      secrets: inv.secrets,
      onOutput: (line) => log.line(line),
    });
    log.line(JSON.stringify({ phase: result.phase, message: result.message }));
    return rowFromMessage(job, result.phase, result.message, { durationMs: result.durationMs, log: relLog });
  } catch (err) {
    log.line(`check could not run: ${(err as Error).message}`);
    return row(job, "error", oneLine((err as Error).message), { durationMs: Date.now() - started, log: relLog });
  } finally {
    log.close();
  }
}

/** One VM's installers, in order; a VM the state cannot name gets its problem on every row. */
async function checkVm(target: CheckTarget, opts: RunChecksOptions): Promise<DriftRow[]> {
  const rows: DriftRow[] = [];
  for (const job of target.jobs) {
    if (target.problem) {
      rows.push(row(job, "error", target.problem));
      continue;
    }
    opts.say(`${job.vm} ${job.installer}: checking`);
    const done = await runOne(target, job, opts);
    const what =
      done.state === "drift"
        ? `drift, ${done.wouldChange.length} would change`
        : done.state === "error"
          ? `error: ${done.summary}`
          : done.state;
    opts.say(`${job.vm} ${job.installer}: ${what} (${((done.durationMs ?? 0) / 1000).toFixed(1)}s)`);
    rows.push(done);
  }
  for (const installer of target.skipped)
    rows.push(row({ vm: target.vm, installer }, "skipped", "disabled in cdktf.json"));
  return rows.sort((a, b) => target.order.indexOf(a.installer) - target.order.indexOf(b.installer));
}

/** Every target's rows, in configuration order. */
export async function runChecks(targets: CheckTarget[], opts: RunChecksOptions): Promise<DriftRow[]> {
  fs.mkdirSync(opts.logDir, { recursive: true, mode: 0o700 });
  const perVm = await Promise.all(targets.map((t) => checkVm(t, opts)));
  return perVm.flat();
}

/** ok: nothing would change; attention: something would (terraform plan -detailed-exitcode); error: one failed. */
export function exitCode(rows: DriftRow[]): ExitCode {
  if (rows.some((r) => r.state === "error")) return EXIT.error;
  return rows.some((r) => r.state === "drift") ? EXIT.attention : EXIT.ok;
}
