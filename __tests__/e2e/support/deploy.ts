// What the `cdktf deploy` end-to-end suites share: a deploy of a written cdktf.json through the real CLI,
// the jobs a run (re)created, and where a line is in its output.
import * as path from "node:path";
import { type CdktfRun, existingHost, readOutputs, runCdktf, writeCdktfProject } from "../../../dev/demo/project";
import { SECRET_SALT_ID } from "../../../lib/construct/jobs/secret-salt";

export const PASSWORD = `pw with 'single' "double" $dollar \\back spaces`;
export const env = { TF_VAR_pg_password: PASSWORD };

export const host = existingHost;

/**
 * Jobs whose terraform_data was (re)created in this run, by logical id (a job's outcome record, a secret's
 * length check or the deployment's secret salt record is not a job).
 */
export function jobsRun(run: CdktfRun): string[] {
  const created = [...run.output.matchAll(/terraform_data\.([a-z0-9_]+)(?: \([^)]*\))?: Creating\.\.\./g)].map(
    (m) => m[1],
  );
  return [...new Set(created.filter((id) => !/_(check|outcome)$/.test(id) && id !== SECRET_SALT_ID))].sort();
}

export function indexOf(run: CdktfRun, pattern: RegExp): number {
  const m = pattern.exec(run.output);
  if (!m) throw new Error(`not in the deploy output: ${pattern}\n${run.output.slice(-3000)}`);
  return m.index;
}

export async function deploy(
  dir: string,
  stack: string,
  ctx: unknown,
  secrets: Record<string, string> = env,
): Promise<CdktfRun & { outputs: Record<string, string> }> {
  writeCdktfProject(dir, ctx);
  const run = await runCdktf(dir, ["deploy", "--auto-approve", "--outputs-file", path.join(dir, "outputs.json")], {
    env: secrets,
  });
  return { ...run, outputs: run.code === 0 ? readOutputs(dir, stack) : {} };
}
