// The gate after one wave of a rollout: a terraform_data the next wave's jobs depend on. It records each
// VM's first failure and its postconditions hold the failure budget, so a wave over budget stops the
// rollout in Terraform's own graph, naming the failed VMs and their messages.
import type { Construct } from "constructs";
import { Fn, Op } from "../cdktf";
import type { RolloutPlan, Wave } from "../config/rollout";
import { rolloutGateId } from "../resource-names";
import type { InstallerJob } from "./job-spec";
import { JOB_SUCCEEDED } from "./sless-job";
import { TerraformData } from "./terraform-data";

/** A VM's jobs in run order, as the gate reads them. */
export interface GatedVm {
  readonly name: string;
  readonly jobs: readonly { readonly name: string; readonly job: InstallerJob }[];
}

/**
 * The VM's first failure, "" when every job succeeded: conditionals over the jobs in run order, so a later
 * job that did not run because of it never hides the cause.
 */
function firstFailure(vm: GatedVm): string {
  return vm.jobs.reduceRight<string>(
    (rest, { name, job }) =>
      Fn.conditional(
        Op.neq(job.phase ?? "", JOB_SUCCEEDED),
        Fn.format("%s: %s", [name, Fn.element(Fn.split("\n", job.message), 0)]),
        rest,
      ),
    "",
  );
}

/**
 * The gate after `wave`. With no budget (strict: every job fails the apply by itself) it only orders the
 * waves; with one, its input maps each VM of this wave and the earlier ones to its first failure and its
 * postconditions compare the counts with the wave's budget and the rollout's.
 */
export function rolloutGate(
  scope: Construct,
  wave: Wave,
  plan: RolloutPlan,
  vms: readonly GatedVm[],
  previous?: TerraformData,
): TerraformData {
  const id = rolloutGateId(wave.number);
  const jobs = vms.flatMap((vm) => (wave.vms.includes(vm.name) ? vm.jobs.map((j) => j.job) : []));
  const gate = new TerraformData(scope, id, {
    // Replaced with any job of its wave, so a rerun is judged again before the next wave goes on.
    triggersReplace: { jobs: `\${join(",", [${jobs.map((j) => `${j.address}.id`).join(", ")}])}` },
    input: plan.tolerant ? Object.fromEntries(vms.map((vm) => [vm.name, firstFailure(vm)])) : undefined,
    dependsOn: [...(previous ? [previous] : []), ...jobs],
  });
  gate.overrideLogicalId(id);
  if (plan.tolerant) gate.addOverride("lifecycle.postcondition", budgetChecks(wave, plan));
  return gate;
}

/** The wave's budget and the rollout's, each a postcondition over the failures the gate recorded. */
function budgetChecks(wave: Wave, plan: RolloutPlan): { condition: string; error_message: string }[] {
  const members = JSON.stringify(wave.vms);
  const inWave = `[for vm in ${members} : vm if self.output[vm] != ""]`;
  const all = `[for vm, failure in self.output : vm if failure != ""]`;
  const listed = (names: string) => `\${join("; ", [for vm in ${names} : format("%s (%s)", vm, self.output[vm])])}`;
  const later = `the waves after it were not started; fix the cause and deploy again`;
  return [
    {
      condition: `\${length(${inWave}) <= ${wave.budget}}`,
      error_message:
        `rollout stopped at wave ${wave.number} of ${plan.waves.length}: \${length(${inWave})} of ` +
        `${wave.vms.length} VMs failed, more than rollout.maxFailures allows in a wave (${wave.budget}): ` +
        `${listed(inWave)}; ${later}.`,
    },
    {
      condition: `\${length(${all}) <= ${plan.totalBudget}}`,
      error_message:
        `rollout stopped at wave ${wave.number} of ${plan.waves.length}: \${length(${all})} VMs failed so far, ` +
        `more than rollout.maxFailures allows over the rollout (${plan.totalBudget}): ${listed(all)}; ${later}.`,
    },
  ];
}
