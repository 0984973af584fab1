// Where a job's outcome is left for others to read: a JSON file, and a file shaped as a Terraform state
// whose outputs the local target reads back with Terraform's file() (lib/construct/jobs/local-job.ts), so a
// local job's result reaches `cdktf output` in the same shape as a sless_job's message. The local target
// reads the outputs by these names; the CLI writes them.
import * as fs from "node:fs";
import * as path from "node:path";
import type { JobResult } from "./job-contract";

/**
 * The result state's outputs, with the values the local target's <job>_outcome takes before the runner
 * has written the file (the job has not run yet, or its file was deleted).
 */
export const RESULT_STATE_DEFAULTS = { phase: "NotRun", message: "not run" } as const;
export type ResultOutput = keyof typeof RESULT_STATE_DEFAULTS;

/**
 * The outcome as a Terraform state holding only the RESULT_STATE_DEFAULTS outputs, which the local target
 * reads with jsondecode(file(...)).outputs.<name>.value, so a local job's result reaches `cdktf output` in
 * the same shape as a sless_job's message.
 */
export function resultAsTfstate(result: Pick<JobResult, "phase" | "message">, name: string): string {
  const outputs: Record<ResultOutput, { value: string; type: "string" }> = {
    phase: { value: result.phase, type: "string" },
    message: { value: result.message, type: "string" },
  };
  return JSON.stringify(
    { version: 4, terraform_version: "1.0.0", serial: 1, lineage: `vm-install-${name}`, outputs, resources: [] },
    null,
    2,
  );
}

/** Writes beside the target, then renames: a reader (Terraform, a script) never sees a half-written file. */
export function writeResultFile(file: string, text: string): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${Date.now()}.tmp`);
  try {
    fs.writeFileSync(tmp, `${text}\n`, { mode: 0o600 });
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}
