// What the app prepares on the deploying machine at synth, so that `cdktf synth|deploy|diff|destroy` run
// directly is as safe as through bin/cdktf: the delivered host keys and the stack's PostgreSQL CA made, the
// local state and plan files owner-only before Terraform writes them (it keeps an existing file's mode), and
// each local job's secret trigger written from the TF_VAR_ values cdktf withholds from the app
// (cdktf-caller-environment.ts). bin/cdktf has done the triggers already when it set PREPARED_ENV.
import * as fs from "node:fs";
import * as path from "node:path";
import { type CdktfCaller, cdktfCaller, variablesOf } from "./cdktf-caller-environment";
import type { VmInstallConfig } from "./config/types";
import { writeHostKeys } from "./delivered-host-keys";
import { deploymentSalt } from "./jobs/secret-salt";
import { resultsFolder, secretTriggerJobs, writeSecretTriggers } from "./jobs/secret-trigger";
import { writeStackCa } from "./postgres-ca";
import { parallelismHeld } from "./terraform-parallelism";

/** Set by bin/cdktf for the app: its own preparation (bin/cdktf-prepare.ts) wrote the secret triggers. */
export const PREPARED_ENV = "VM_INSTALL_PREPARED";

/** The local backend's state file for `stackName` (lib/construct/state-backend.ts names it). */
export function localStateFile(projectDir: string, stackName: string): string {
  return path.join(projectDir, `terraform.${stackName}.tfstate`);
}

/**
 * `file` owner-only: made empty with mode 0600 when missing (Terraform reads an empty state as none and keeps
 * the mode when it writes), tightened and named on stderr when group or others may use it.
 */
function ownerOnly(file: string, mode: 0o600 | 0o700, say: (line: string) => void): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch {
    if (mode === 0o700) fs.mkdirSync(file, { recursive: true, mode });
    else fs.closeSync(fs.openSync(file, "wx", mode));
    return;
  }
  if (st.isSymbolicLink() || (st.mode & 0o077) === 0) return;
  fs.chmodSync(file, st.mode & 0o700);
  const was = `0${(st.mode & 0o777).toString(8)}`;
  say(`vm-install: ${file} was mode ${was}, open to group or others; made owner-only (it can hold secrets)`);
}

export interface Preparation {
  /**
   * "current": every local job's secret trigger is as its values are now, or there is none; "unknown": the
   * values could not be read here, so a trigger may be stale and a changed secret would go unnoticed.
   */
  readonly secretTriggers: "current" | "unknown";
  /** Whether the Terraform this cdktf run starts holds the `parallelism` setting (terraform-parallelism.ts). */
  readonly parallelism: "held" | "not-held" | "unknown";
}

/**
 * Prepares `projectDir` for a deploy of `config` whose stack folder is `stackDir`. `env` is the app's own
 * environment (TF_VAR_ values given to it directly count, as when a test runs main.ts).
 */
export async function prepareForTerraform(
  projectDir: string,
  stackDir: string,
  config: VmInstallConfig,
  env: NodeJS.ProcessEnv = process.env,
  say: (line: string) => void = (line) => console.error(line),
): Promise<Preparation> {
  const results = resultsFolder(projectDir, config.stackName);
  if (fs.existsSync(results)) ownerOnly(results, 0o700, say);
  writeHostKeys(projectDir, config);
  await writeStackCa(projectDir, config);
  if (config.backend.type === "local") {
    const state = localStateFile(projectDir, config.stackName);
    ownerOnly(state, 0o600, say);
    ownerOnly(`${state}.backup`, 0o600, say);
  }
  // cdktf.out travels without secrets, but Terraform writes plan files (every variable's value) and
  // .terraform/ (a backend's settings) into the stack folder.
  for (const dir of [path.dirname(path.dirname(stackDir)), stackDir]) ownerOnly(dir, 0o700, say);
  ownerOnly(path.join(stackDir, "plan"), 0o600, say);

  const caller = cdktfCaller(env);
  // bin/cdktf puts the setting on cdktf's command line itself (PREPARED_ENV says it ran).
  const parallelism =
    env[PREPARED_ENV] === "1"
      ? "held"
      : parallelismHeld(config, caller?.args, caller ? Object.fromEntries(caller.environment) : env);
  return { secretTriggers: await secretTriggersFor(projectDir, results, config, env, caller), parallelism };
}

/** Writes the local jobs' secret triggers from the values this synth can read, or says it could not. */
async function secretTriggersFor(
  projectDir: string,
  results: string,
  config: VmInstallConfig,
  env: NodeJS.ProcessEnv,
  caller: CdktfCaller | undefined,
): Promise<Preparation["secretTriggers"]> {
  if (env[PREPARED_ENV] === "1" || secretTriggerJobs(config).length === 0) return "current";
  // The salt is the deployment's, not the values': with a local state it is cached (or read back) whether or
  // not the values are known here, so the plan's check of it holds for plain `cdktf`. A shared backend is
  // read only for a deploy that has the values (and so its credentials); without them the plan names the
  // command to run.
  if (config.backend.type === "local") deploymentSalt(projectDir, results, config);
  const variables = caller && variablesOf(caller);
  const own = Object.fromEntries(Object.entries(env).filter(([name]) => name.startsWith("TF_VAR_")));
  if (!variables && Object.keys(own).length === 0) return "unknown";
  writeSecretTriggers(projectDir, config, { ...variables, ...own });
  return "current";
}
