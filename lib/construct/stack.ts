// The whole deployment: the providers it needs, the secrets as sensitive variables, and one
// VmInstallation per configured VM, its jobs on the configured target.

import * as path from "node:path";
import type { Construct } from "constructs";
import { NubesProvider } from "../../providers/generated/nubes/provider/index";
import { SlessProvider } from "../../providers/generated/sless/provider/index";
import { ValidationError } from "../shared/validate";
import { Annotations, App, TerraformOutput, TerraformStack, TerraformVariable } from "./cdktf";
import { readCloudInit } from "./config/cloud-init";
import { CONTEXT_KEY } from "./config/parse";
import { describeRollout, planRollout, type RolloutPlan, type Wave } from "./config/rollout";
import type { VmInstallConfig } from "./config/types";
import { hostKeyFile } from "./delivered-host-keys";
import type { CatalogEntry } from "./installers/catalog";
import type { JobTargetFactory } from "./jobs/job-spec";
import { localJobTarget } from "./jobs/local-job";
import { type GatedVm, rolloutGate } from "./jobs/rollout-gate";
import { resultsFolder, secretTriggerJobs } from "./jobs/secret-trigger";
import { slessJobTarget } from "./jobs/sless-job";
import { TerraformData } from "./jobs/terraform-data";
import { caFile, warnSharedCertificateNames } from "./postgres-ca";
import { stackCaOutput } from "./postgres-ca-output";
import { ROLLOUT_FAILURES_OUTPUT } from "./resource-names";
import { warnLocalStateSecrets } from "./risky-settings";
import { configureBackend } from "./state-backend";
import { unheldParallelismMessage, unknownParallelismMessage } from "./terraform-parallelism";
import { TerraformPaths } from "./terraform-paths";
import { type SecretRule, VmInstallation } from "./vm-installation";

/**
 * Each VM's own cloud-init document (vms[].cloudInit), read and checked at synth; every problem of every
 * VM in one ValidationError, as the configuration's own are reported.
 */
function readCloudInits(config: VmInstallConfig, paths: TerraformPaths): (Record<string, unknown> | undefined)[] {
  const problems: string[] = [];
  const documents = config.vms.map((vm, i) => {
    if (vm.cloudInit === undefined) return undefined;
    const read = readCloudInit(paths.resolve(vm.cloudInit), vm.user);
    problems.push(...read.problems.map((p) => `vms[${i}].cloudInit (${vm.cloudInit}): ${p}`));
    return read.document;
  });
  if (problems.length > 0) throw new ValidationError(`cdktf.json context.${CONTEXT_KEY}`, problems);
  return documents;
}

/** The VMs of `wave` and of the waves before it, with their jobs in run order, as the gate reads them. */
function gatedVms(plan: RolloutPlan, wave: Wave, installations: Map<string, VmInstallation>): GatedVm[] {
  return plan.waves
    .filter((w) => w.number <= wave.number)
    .flatMap((w) => w.vms)
    .map((name) => ({ name, jobs: installations.get(name)!.jobs }));
}

/** A secret variable's error when it is unset or empty. */
function unsetVariableMessage(name: string, description: string): string {
  const holds = description.replace(/\s*\(TF_VAR_[^)]*\)$/, "");
  return `vm-install: TF_VAR_${name} is not set (${holds}); export TF_VAR_${name}=... and run the command again.`;
}

/** The version constraint every version meets: sless.providerVersion "" (any). */
const ANY_VERSION = ">= 0.0.0";

export interface VmInstallStackProps {
  /** The validated configuration (lib/construct/config parseConfig). */
  readonly config: VmInstallConfig;
  /** Folder that relative key paths and the local target's results are resolved from. @default process.cwd() */
  readonly baseDir?: string;
  /** The installers, in run order; the config must have been parsed with the same list. @default the catalog */
  readonly installers?: readonly CatalogEntry[];
  /**
   * Whether the local jobs' secret triggers are as the secrets are now (lib/construct/synth-preparation.ts);
   * "unknown" stops every plan with one line naming the command that writes them. @default "current"
   */
  readonly secretTriggers?: "current" | "unknown";
  /**
   * Whether the Terraform running this stack holds `parallelism` (lib/construct/terraform-parallelism.ts):
   * "not-held" stops every plan naming the option to pass; "unknown" is a synth warning. @default "held"
   */
  readonly parallelism?: "held" | "not-held" | "unknown";
}

export class VmInstallStack extends TerraformStack {
  readonly installations: VmInstallation[];
  private readonly secrets = new Map<string, TerraformVariable>();
  private readonly validated = new Set<string>();

  constructor(scope: Construct, id: string, props: VmInstallStackProps) {
    super(scope, id);
    const { config } = props;
    const baseDir = props.baseDir ?? process.cwd();
    // Paths to key files, results and the secret triggers run through this folder's name when cdktf.out is
    // elsewhere, and Terraform reads every string of the configuration as a template: the settings
    // cannot carry `${`, nor may this.
    if (/[$%]\{/.test(baseDir)) {
      throw new Error(
        `the project folder ${baseDir} contains "\${" or "%{", which Terraform would read as template syntax ` +
          "in the paths under it; move or rename it",
      );
    }

    // Each provider only when something uses it: a local-target stack of existing hosts has none, so it
    // validates and deploys offline.
    if (config.vms.some((vm) => vm.kind === "nubes")) this.nubesProvider(config);
    if (config.jobTarget === "sless") this.slessProvider(config);
    const paths = new TerraformPaths(path.join(path.resolve(App.of(this).outdir), "stacks", id), baseDir);
    configureBackend(this, id, config.backend, paths);
    warnLocalStateSecrets(this, config, props.installers);
    const jobTarget: JobTargetFactory =
      config.jobTarget === "sless"
        ? slessJobTarget({ runtime: config.sless.runtime })
        : localJobTarget({
            resultsDir: resultsFolder(baseDir, config.stackName),
            paths,
            parallelism: config.parallelism,
          });

    this.installations = this.rollOut(props, jobTarget, paths, baseDir);
    if (props.secretTriggers === "unknown" && secretTriggerJobs(config, props.installers).length > 0)
      this.stopForUnknownTriggers();
    // With sless jobs only Terraform's -parallelism holds the setting, and cdktf passes one only when told.
    if (props.parallelism === "not-held")
      this.stopPlan("parallelism_check", unheldParallelismMessage(config.parallelism));
    if (props.parallelism === "unknown") Annotations.of(this).addWarning(unknownParallelismMessage(config.parallelism));
    stackCaOutput(this, config, paths, caFile(resultsFolder(baseDir, config.stackName)));
    warnSharedCertificateNames(this, config);
  }

  /**
   * One VmInstallation per VM, wave by wave, each wave's jobs after the gate of the one before (a fleet in one
   * wave with no failure budget has none); returned in vms[] order.
   */
  private rollOut(
    props: VmInstallStackProps,
    jobTarget: JobTargetFactory,
    paths: TerraformPaths,
    baseDir: string,
  ): VmInstallation[] {
    const { config } = props;
    const cloudInits = readCloudInits(config, paths);
    const keysDir = resultsFolder(baseDir, config.stackName);
    const plan = planRollout(config.vms, config.rollout);
    const gated = plan.waves.length > 1 || plan.tolerant;
    const byName = new Map<string, VmInstallation>();
    let gate: TerraformData | undefined;
    for (const wave of plan.waves) {
      for (const name of wave.vms) {
        const i = config.vms.findIndex((vm) => vm.name === name);
        const vm = config.vms[i];
        const installation = new VmInstallation(this, vm.name, {
          vm,
          cloudInit: cloudInits[i],
          hostKeyFile: hostKeyFile(keysDir, vm.name),
          stackCaFile: caFile(keysDir),
          nubes: config.nubes,
          runId: config.runId,
          after: gate,
          tolerateFailure: plan.tolerant,
          jobTarget,
          paths,
          installers: props.installers,
          secretVariable: (name, description, rule) => this.secretVariable(name, description, rule),
        });
        byName.set(vm.name, installation);
      }
      if (gated) gate = rolloutGate(this, wave, plan, gatedVms(plan, wave, byName), gate);
    }
    if (gated) {
      for (const line of describeRollout(plan)) Annotations.of(this).addInfo(line);
      if (plan.tolerant) this.failuresOutput(gate!);
    }
    return config.vms.map((vm) => byName.get(vm.name)!);
  }

  /** The failures the rollout tolerated, VM -> its first failed job and message, as the last gate recorded them. */
  private failuresOutput(lastGate: TerraformData): void {
    const gate = `${lastGate.terraformResourceType}.${lastGate.friendlyUniqueId}`;
    new TerraformOutput(this, ROLLOUT_FAILURES_OUTPUT, {
      value: `\${{ for vm, failure in ${gate}.output : vm => failure if failure != "" }}`,
      description: "VMs whose failure the rollout tolerated (rollout.maxFailures), with the failed job's message",
    }).overrideLogicalId(ROLLOUT_FAILURES_OUTPUT);
  }

  // Provider addresses are settings (the sless provider is not public; Nubes may move): they replace the
  // source baked into the generated bindings.
  private nubesProvider(config: VmInstallConfig): void {
    const nubes = config.nubes!;
    this.addOverride("terraform.required_providers.nubes", {
      source: nubes.providerSource,
      version: nubes.providerVersion,
    });
    new NubesProvider(this, "nubes", {
      apiEndpoint: nubes.endpoint,
      apiToken: this.secretVariable("nubes_api_token", "Nubes API token (TF_VAR_nubes_api_token)").value,
    });
  }

  private slessProvider(config: VmInstallConfig): void {
    // `cdktf deploy` refuses a required_providers entry without a version (its manifest schema requires
    // one), so "any version" is spelled out as the constraint every version meets.
    this.addOverride("terraform.required_providers.sless", {
      source: config.sless.providerSource,
      version: config.sless.providerVersion || ANY_VERSION,
    });
    new SlessProvider(this, "sless", {
      endpoint: config.sless.endpoint,
      token: this.secretVariable("sless_token", "sless API token, a JWT (TF_VAR_sless_token)").value,
    });
  }

  /**
   * cdktf gives the app no TF_VAR_ value and this system has no /proc to read them from: a job's trigger may
   * be older than its secret, and the change would be silently ignored. Stopped at plan, before anything runs.
   */
  private stopForUnknownTriggers(): void {
    this.stopPlan(
      "secret_triggers_check",
      "vm-install: cdktf ran this app without the TF_VAR_ values (it passes none to synth, and this system " +
        "has no /proc to read them from), so a changed secret would not rerun its job: run `npm run deploy` " +
        "(or `npm run destroy`), which writes the secret triggers first.",
    );
  }

  /** Every plan stops with `message`, before anything runs. */
  private stopPlan(id: string, message: string): void {
    const stop = new TerraformData(this, id, {});
    stop.overrideLogicalId(id);
    // Never true (path.module is the stack folder, "."): a condition naming nothing of the configuration, as
    // "${false}" did, is refused at init ("Invalid precondition expression") and this message never shown.
    stop.addOverride("lifecycle.precondition", [{ condition: '${path.module == ""}', error_message: message }]);
  }

  /**
   * One sensitive string variable per name, set through TF_VAR_<name>. Not a required variable: Terraform
   * would ask for it at a prompt that a run without a terminal (cdktf piped, CI) never answers. The default is
   * "" and a validation refuses "", naming the variable, before anything runs (the value a validation error
   * shows is then always ""). A rule's
   * minimum length is checked at plan time, before any job runs, by a precondition of its own: a
   * `validation` block would do it earlier, but Terraform (1.11) prints the value of every variable its
   * condition names in the error, sensitive or not; a precondition's error shows no value.
   */
  private secretVariable(name: string, description: string, rule?: SecretRule): TerraformVariable {
    let variable = this.secrets.get(name);
    if (!variable) {
      variable = new TerraformVariable(this, name, {
        type: "string",
        sensitive: true,
        description,
        default: "",
        validation: [{ condition: `\${var.${name} != ""}`, errorMessage: unsetVariableMessage(name, description) }],
      });
      variable.overrideLogicalId(name);
      this.secrets.set(name, variable);
    }
    if (rule?.minLength && !this.validated.has(name)) {
      this.validated.add(name);
      const check = new TerraformData(this, `${name}_check`, {});
      check.overrideLogicalId(`${name}_check`);
      check.addOverride("lifecycle.precondition", [
        {
          condition: `\${length(var.${name}) >= ${rule.minLength}}`,
          error_message:
            `TF_VAR_${name} (${rule.what}) is shorter than ${rule.minLength} characters; set a longer one. ` +
            "The value is not shown.",
        },
      ]);
    }
    return variable;
  }
}
