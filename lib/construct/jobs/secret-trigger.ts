// The local target's secret triggers: a job reruns when one of its secrets changes, from any working copy,
// while a shared state gives no cheap guess test: the trigger is scrypt (SECRET_KDF) over the job's secrets.
// Terraform has no deterministic slow KDF and runs nothing of ours at plan, so bin/cdktf writes each trigger
// into an owner-only file the job's triggers_replace reads at plan time; the value reaches neither cdktf.out
// nor the state. The salt is the deployment's own, random and kept in its state (./secret-salt.ts), with the
// job's name: the same in each copy sharing the state, so a colleague's deploy reruns nothing.
import { createHash, scryptSync } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { writeResultFile } from "../../jobs/job-result-file";
import type { VmInstallConfig } from "../config/types";
import { type CatalogEntry, INSTALLERS } from "../installers/catalog";
import { secretVariableNames } from "../installers/installer-event";
import { jobName } from "../resource-names";
import { deploymentSalt, type StateReader } from "./secret-salt";

/** scrypt's cost; the trigger names it, so raising it reruns each job once, knowingly. */
const SECRET_KDF = { N: 2 ** 17, r: 8, p: 1, keylen: 32 } as const;

/** The local target's folder of results, logs and triggers for `stackName`, in the project folder. */
export function resultsFolder(projectDir: string, stackName: string): string {
  return path.join(projectDir, ".vm-install", stackName);
}

/** Where `job`'s secret trigger is kept (owner-only, outside cdktf.out). */
export function secretTriggerFile(resultsDir: string, job: string): string {
  return path.join(resultsDir, `${job}.secret-trigger`);
}

/** scrypt's salt for `job`: the deployment's salt (./secret-salt.ts) and the job, so no two jobs share one. */
export function secretTriggerSalt(deploymentSalt: string, job: string): string {
  return createHash("sha256")
    .update(JSON.stringify(["vm-install secret trigger v2", deploymentSalt, job]))
    .digest("hex");
}

/** The trigger for a job's secret values (in the order of their sorted field names). */
export function secretTrigger(values: readonly string[], salt: string): string {
  const { N, r, p, keylen } = SECRET_KDF;
  const key = scryptSync(JSON.stringify(values), salt, keylen, { N, r, p, maxmem: 256 * 1024 * 1024 });
  return `scrypt-N${N}-r${r}-p${p}:${key.toString("hex")}`;
}

/** The jobs that carry a secret trigger, each with its secret variables in the order the trigger takes them. */
export function secretTriggerJobs(
  config: VmInstallConfig,
  installers: readonly CatalogEntry[] = INSTALLERS,
): { job: string; variables: string[] }[] {
  if (config.jobTarget !== "local") return [];
  return config.vms.flatMap((vm) =>
    installers
      .filter((def) => vm.installers[def.key]?.enabled)
      .map((def) => {
        const names = secretVariableNames(vm, def);
        return {
          job: jobName(vm.name, def.handler),
          variables: Object.keys(names)
            .sort()
            .map((field) => names[field]),
        };
      })
      .filter((j) => j.variables.length > 0),
  );
}

/**
 * Writes the trigger of each job whose secrets `env` holds, rewriting a file only when it changed; a job
 * whose secrets are not all set keeps its last trigger (`cdktf synth` without them). The deployment's salt
 * is cached (or read back from the state) first, only when a trigger is to be written. Returns the files
 * written.
 */
export function writeSecretTriggers(
  projectDir: string,
  config: VmInstallConfig,
  env: NodeJS.ProcessEnv,
  installers?: readonly CatalogEntry[],
  readState?: StateReader,
): string[] {
  const resultsDir = resultsFolder(projectDir, config.stackName);
  const due = secretTriggerJobs(config, installers)
    .map(({ job, variables }) => ({ job, values: variables.map((v) => env[`TF_VAR_${v}`]) }))
    .filter((j): j is { job: string; values: string[] } => j.values.every((v) => v !== undefined));
  if (due.length === 0) return [];
  const salt = deploymentSalt(projectDir, resultsDir, config, readState);
  const written: string[] = [];
  for (const { job, values } of due) {
    const file = secretTriggerFile(resultsDir, job);
    const trigger = secretTrigger(values, secretTriggerSalt(salt, job));
    if (fs.existsSync(file) && fs.readFileSync(file, "utf8").trim() === trigger) continue;
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    writeResultFile(file, trigger);
    written.push(file);
  }
  return written;
}

/**
 * The trigger as Terraform reads it at plan time. Without the file (a working copy that never deployed
 * with the secrets set) it is a word no trigger equals: the job reruns rather than miss a change.
 */
export function secretTriggerExpression(file: string, variables: readonly string[]): string {
  const missing = `none: deployed without ${variables.map((v) => `TF_VAR_${v}`).join(", ")}`;
  const quoted = JSON.stringify(file);
  return `\${fileexists(${quoted}) ? trimspace(file(${quoted})) : ${JSON.stringify(missing)}}`;
}
