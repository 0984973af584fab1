// The gate after one wave of a rollout: a terraform_data the next wave's jobs depend on, whose preconditions
// hold the failure budget over that wave's job phases and results. A wave over budget stops the rollout in
// Terraform's own graph, naming the failed VMs and their messages; the gate then is not (re)made.
import type { Construct } from "constructs";
import { JOB_SUCCEEDED } from "../../jobs/job-contract";
import { Fn, Op, TerraformLocal } from "../cdktf";
import type { RolloutPlan, Wave } from "../config/rollout";
import { rolloutGateId } from "../resource-names";
import type { InstallerJob } from "./job-spec";
import { TerraformData } from "./terraform-data";

/** A VM's jobs in run order, as the gate reads them. */
export interface GatedVm {
  readonly name: string;
  readonly jobs: readonly { readonly name: string; readonly job: InstallerJob }[];
}

/**
 * `text` as one line Terraform's error can show, capped: each run of controls (line breaks too), format
 * characters (bidi, zero-width) and line separators a space, by RE2's classes. A job message is the VM's
 * word, or an older job's; lib/shared/printable-text.ts, which the handlers apply, cannot run inside Terraform.
 * The backslashes are doubled: HCL reads the string once, RE2 then reads `\p{Cc}`.
 */
const oneLine = (text: string) =>
  Fn.substr(Fn.trimspace(Fn.replace(text, "/[\\\\p{Cc}\\\\p{Cf}\\\\p{Zl}\\\\p{Zp}]+/", " ")), 0, 500);

/** A result's field, "" when the message is not a JSON result (a failed job's error text, "not run"). */
const resultField = (message: string, field: string) => Fn.try([Fn.lookup(Fn.jsondecode(message), field, ""), ""]);

/**
 * The VM's first failure, "" when every job succeeded: conditionals over the jobs in run order, so a later
 * job that did not run because of it never hides the cause. A job fails by its phase (Failed, NotRun) or by
 * its result: "partial" (some package not installed) counts, as the VM is not what was asked for.
 */
function firstFailure(vm: GatedVm): string {
  return vm.jobs.reduceRight<string>((rest, { name, job }) => {
    const partial = Fn.conditional(
      Op.eq(resultField(job.message, "status"), "partial"),
      Fn.format("%s: %s", [
        name,
        oneLine(Fn.try([Fn.element(Fn.lookup(Fn.jsondecode(job.message), "warnings", []), 0), ""])),
      ]),
      rest,
    );
    if (job.phase === undefined) return partial;
    return Fn.conditional(Op.neq(job.phase, JOB_SUCCEEDED), Fn.format("%s: %s", [name, oneLine(job.message)]), partial);
  }, "");
}

/**
 * The gate after `wave`: a local value maps each VM of this wave and the earlier ones to its first failure,
 * the gate's preconditions compare the counts with the wave's budget and the rollout's, and the gate keeps
 * the map (the failures a passed rollout tolerated, for the stack's output).
 */
export function rolloutGate(
  scope: Construct,
  wave: Wave,
  plan: RolloutPlan,
  vms: readonly GatedVm[],
  previous?: TerraformData,
): TerraformData {
  const id = rolloutGateId(wave.number);
  const failures = new TerraformLocal(
    scope,
    `${id}_failures`,
    Object.fromEntries(vms.map((vm) => [vm.name, firstFailure(vm)])),
  );
  failures.overrideLogicalId(`${id}_failures`);
  const map = `local.${id}_failures`;
  const jobs = vms.flatMap((vm) => (wave.vms.includes(vm.name) ? vm.jobs.map((j) => j.job) : []));
  const gate = new TerraformData(scope, id, {
    // Replaced with any job of its wave, so a rerun is judged again before the next wave goes on.
    triggersReplace: { jobs: `\${join(",", [${jobs.map((j) => `${j.address}.id`).join(", ")}])}` },
    input: Object.fromEntries(vms.map((vm) => [vm.name, `\${${map}[${JSON.stringify(vm.name)}]}`])),
    dependsOn: [...(previous ? [previous] : []), ...jobs],
  });
  gate.overrideLogicalId(id);
  gate.addOverride("lifecycle.precondition", budgetChecks(wave, plan, map));
  return gate;
}

/** The wave's budget and the rollout's, each a precondition over the failures in `map`. */
function budgetChecks(wave: Wave, plan: RolloutPlan, map: string): { condition: string; error_message: string }[] {
  const inWave = `[for vm in ${JSON.stringify(wave.vms)} : vm if ${map}[vm] != ""]`;
  const all = `[for vm, failure in ${map} : vm if failure != ""]`;
  const listed = (names: string) => `\${join("; ", [for vm in ${names} : format("%s (%s)", vm, ${map}[vm])])}`;
  const later =
    "the waves after it were not started; fix the cause and deploy again " +
    "(a VM repaired by hand: npm run rerun -- <vm>)";
  const stopped = `rollout stopped at wave ${wave.number} of ${plan.waves.length}`;
  return [
    {
      condition: `\${length(${inWave}) <= ${wave.budget}}`,
      error_message:
        `${stopped}: \${length(${inWave})} of ${wave.vms.length} VMs failed, more than rollout.maxFailures ` +
        `allows in a wave (${wave.budget}): ${listed(inWave)}; ${later}.`,
    },
    {
      condition: `\${length(${all}) <= ${plan.totalBudget}}`,
      error_message:
        `${stopped}: \${length(${all})} VMs failed so far, more than rollout.maxFailures allows over the ` +
        `rollout (${plan.totalBudget}): ${listed(all)}; ${later}.`,
    },
  ];
}
