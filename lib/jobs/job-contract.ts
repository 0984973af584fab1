// What a job is to both of its sides, the construct that declares it and the runner that runs it: the phases
// it ends in and what the runner does when the job leaves something unsaid (entrypoint, timeout, logs kept).
// The construct library may not load the operator's runner at synth, so these live here and the runner reads them.

/** How a job ends, as a sless_job's phase says it (the local runner says the same). */
export type JobPhase = "Succeeded" | "Failed";
export const JOB_SUCCEEDED = "Succeeded" satisfies JobPhase;

/** How one run of a job ended, as the runner reports it and the local target's result file keeps it. */
export interface JobResult {
  readonly phase: JobPhase;
  /** Succeeded: JSON.stringify of the handler's result. Failed: the error message, stack trimmed. */
  readonly message: string;
  readonly durationMs: number;
}

export const DEFAULT_ENTRYPOINT = "handler.install";
/** The longest wait_timeout_sec an installer has by default. */
export const DEFAULT_TIMEOUT_SEC = 900;
/** A job's log keeps this many runs: enough to compare a failure with the runs before it. */
export const LOG_RUNS_KEPT = 5;

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
