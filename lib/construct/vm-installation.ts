// One VM and its installers: a vApp and the VM (or a host that already exists), then one job per enabled
// installer, chained in catalog order so a VM sees one apt run at a time. Jobs of different VMs share
// nothing and run in parallel.

import { Construct } from "constructs";
import { Vapp } from "../../providers/generated/nubes/vapp/index";
import { VcVmV3 } from "../../providers/generated/nubes/vc-vm-v3/index";
import { Fn, type ITerraformDependable, TerraformOutput, type TerraformVariable } from "./cdktf";
import { keyFileProblems, keySettingName } from "./config/key-file";
import type { NubesConfig, VmConfig } from "./config/types";
import { hostKeySource } from "./delivered-host-keys";
import { recordHostKey } from "./first-contact";
import { type CatalogEntry, INSTALLERS } from "./installers/catalog";
import { installerEvent, secretVariableNames, stackCaFields } from "./installers/installer-event";
import { HandlerAsset } from "./jobs/handler-asset";
import {
  type InstallerJob,
  type JobConnection,
  type JobSpec,
  type JobTargetFactory,
  resourceAddress,
} from "./jobs/job-spec";
import { TerraformData } from "./jobs/terraform-data";
import {
  addressOutputName,
  hostKeyIds,
  installerJobId,
  jobName,
  resourcePrefix,
  resultOutputName,
  vmGenerationId,
  vmResourceId,
} from "./resource-names";
import { warnRiskySettings } from "./risky-settings";
import type { TerraformPaths } from "./terraform-paths";
import { type DeliveredKeyRecord, vmCloudInit } from "./vm-cloud-init";

/** One VM's settings, and what the stack shares among its VMs (job target, paths, secret variables). */
export interface VmInstallationProps {
  /** The VM and its resolved installers. */
  readonly vm: VmConfig;
  /** Nubes settings; required for a VM of kind "nubes". */
  readonly nubes?: NubesConfig;
  /** run_id of every job; the VM's own runId and runIds are added to it. */
  readonly runId: number;
  /** The previous wave's gate, which every job of this VM runs after (lib/construct/jobs/rollout-gate.ts). */
  readonly after?: ITerraformDependable;
  /** Leave failures to the rollout's gates instead of failing the apply (JobSpec.tolerateFailure). */
  readonly tolerateFailure?: boolean;
  /** Turns each installer's JobSpec into resources (sless_job, or terraform_data + local-exec). */
  readonly jobTarget: JobTargetFactory;
  /** How paths are written into the configuration (relative to the stack folder) and checked at synth. */
  readonly paths: TerraformPaths;
  /** Returns the sensitive Terraform variable with this name (shared by VMs that name the same one). */
  readonly secretVariable: (name: string, description: string, rule?: SecretRule) => TerraformVariable;
  /** The installers, in run order. @default the catalog (lib/construct/installers/catalog.ts) */
  readonly installers?: readonly CatalogEntry[];
  /** The user's cloud-init document (vms[].cloudInit, read and checked by the stack). */
  readonly cloudInit?: Record<string, unknown>;
  /** The file bin/cdktf keeps this VM's delivered host key in (absolute); read by Terraform at plan time. */
  readonly hostKeyFile?: string;
  /** The stack's CA file (absolute), made by the app at synth; the jobs whose settings ask for it read it. */
  readonly stackCaFile?: string;
}

/** What a secret's Terraform variable checks at plan time, from the rule of the event field it feeds. */
export interface SecretRule {
  readonly minLength?: number;
  /** "install-postgres's db_password", for the message. */
  readonly what: string;
}

/** An installer's secret event fields, each from the sensitive variable its setting names. */
function secretEvent(
  vm: VmConfig,
  def: CatalogEntry,
  variable: VmInstallationProps["secretVariable"],
): Record<string, TerraformVariable> {
  return Object.fromEntries(
    Object.entries(secretVariableNames(vm, def)).map(([field, name]) => {
      const fed = Object.values(def.settings).find((s) => s.event === field);
      const minLength = (fed?.rule.schema as { minLength?: number } | undefined)?.minLength;
      return [
        field,
        variable(name, `${def.handler}'s ${field} (TF_VAR_${name})`, { minLength, what: `${def.handler}'s ${field}` }),
      ];
    }),
  );
}

/**
 * A VM is never created without a key to deliver: the record is empty only when the key file was
 * missing when it was made (Terraform run without bin/cdktf). The VM is replaced with the record, as
 * cloud-init reads the key at first boot only: replacing the record (`terraform apply -replace`) is how a
 * delivered key is rotated; nothing else replaces it.
 */
function deliveryChecks(vm: VmConfig, machine: VcVmV3, key: DeliveredKeyRecord, props: VmInstallationProps): void {
  const file = props.paths.placed(props.hostKeyFile!);
  machine.addOverride("lifecycle.precondition", [
    {
      condition: `\${can(regex("^SHA256:[A-Za-z0-9+/]{43}$", ${key.sha256Ref}))}`,
      error_message:
        `${vm.name}: no host key to deliver: the state holds none for it yet and ${file} (relative to the stack ` +
        "folder) is missing or not a key. Deploy through npm run deploy or bin/cdktf, which makes it, or set " +
        'vms[].hostKeys to "first-contact" for an image without cloud-init.',
    },
  ]);
  machine.addOverride("lifecycle.replace_triggered_by", [key.address]);
}

/** A step in a VM's chain as the next job takes it (JobSpec.previous): it runs after `resource`, replaced with it. */
function chainLink(resource: TerraformData, id: string): InstallerJob {
  return { fqn: resource.fqn, address: resourceAddress(resource, id), message: "" };
}

export class VmInstallation extends Construct {
  /** The address the jobs connect to, as a Terraform expression. */
  readonly address: string;
  /** Enabled installers' jobs, in run order, each with its job name ("<vm>-<handler>"). */
  readonly jobs: { key: string; name: string; job: InstallerJob }[] = [];
  /** The host key recorded at first contact (absent when the VM's key is pinned). */
  readonly hostKeyRecord?: TerraformData;

  constructor(scope: Construct, id: string, props: VmInstallationProps) {
    super(scope, id);
    const { vm } = props;
    const prefix = resourcePrefix(vm.name);

    warnRiskySettings(this, vm, props.nubes);
    const delivered = vm.kind === "nubes" && vm.hostKeys === "delivered" ? this.deliveredHostKey(vm, props) : undefined;
    const machine =
      vm.kind === "nubes"
        ? this.createVm(vm, props.nubes!, props.paths, prefix, vmCloudInit(vm, props.paths, props.cloudInit, delivered))
        : undefined;
    if (machine && delivered) deliveryChecks(vm, machine, delivered, props);
    this.address = vm.address ?? machine!.stateOutFlat.lookup(vm.addressKey);
    const host = { address: this.address, user: vm.user, port: vm.sshPort };
    const installers = props.installers ?? INSTALLERS;
    const anyJob = installers.some((def) => vm.installers[def.key].enabled);
    const newVm = machine && anyJob ? this.vmGeneration(vm, machine) : undefined;
    const pinned = vm.hostKeySha256 !== undefined || delivered !== undefined;
    const dependsOn = [...(machine ? [machine as ITerraformDependable] : []), ...(props.after ? [props.after] : [])];
    const runId = props.runId + (vm.runId ?? 0);
    const trust = !pinned && anyJob ? recordHostKey(this, { ...props, runId, host, dependsOn, newVm }) : undefined;
    this.hostKeyRecord = trust?.record;
    // Reported by synth with every other problem, in cdktf.json's words; the runner checks the key again.
    this.node.addValidation({ validate: () => keyFileProblems(vm, props.paths, anyJob) });
    const connection = {
      ...host,
      privateKeyPath: props.paths.setting(vm.privateKeyPath),
      keySetting: keySettingName(vm.name, "privateKeyPath", vm.privateKeyPath),
      hostKeySha256: vm.hostKeySha256 ?? delivered?.sha256 ?? trust?.hostKeySha256,
      hostKeySource: hostKeySource(vm),
    };
    // Each job runs after the step before it on this VM and is replaced with it: a new VM, then the record
    // of its key (a new record, for a new VM or a key accepted by `npm run trust`, reruns every installer
    // against it), then each installer in turn.
    const first = trust ? chainLink(trust.record, hostKeyIds(vm.name).record) : newVm;
    this.installerJobs(props, installers, { connection, dependsOn, runId }, first);
    this.connectionOutputs(vm, connection.hostKeySha256);
  }

  /** One job per enabled installer, chained after `previous`; an output per installer, "skipped" if disabled. */
  private installerJobs(
    props: VmInstallationProps,
    installers: readonly CatalogEntry[],
    common: { connection: JobConnection; dependsOn: ITerraformDependable[]; runId: number },
    first: InstallerJob | undefined,
  ): void {
    const { vm } = props;
    let previous = first;
    for (const def of installers) {
      const settings = vm.installers[def.key];
      const outputName = resultOutputName(vm.name, def.key);
      if (!settings.enabled) {
        new TerraformOutput(this, outputName, {
          value: "skipped",
          description: `${vm.name}: ${def.handler} (disabled)`,
        }).overrideLogicalId(outputName);
        continue;
      }
      const name = jobName(vm.name, def.handler);
      const job = props.jobTarget(this, installerJobId(vm.name, def.key), {
        name,
        asset: HandlerAsset.forHandler(this, def.handler, def.handlersDir),
        connection: common.connection,
        event: installerEvent(vm, def, this.jobs.length > 0),
        secretEvent: secretEvent(vm, def, props.secretVariable),
        stackCa: this.stackCa(vm, def, props),
        runId: common.runId + (vm.runIds?.[def.key] ?? 0),
        waitTimeoutSec: settings.waitTimeoutSec,
        dependsOn: common.dependsOn,
        previous,
        tolerateFailure: props.tolerateFailure,
        uninstallOnDestroy: vm.onDestroy === "uninstall",
      });
      this.jobs.push({ key: def.key, name, job });
      previous = job;
      new TerraformOutput(this, outputName, {
        value: job.message,
        description: `${vm.name}: ${def.handler} result (JSON)`,
      }).overrideLogicalId(outputName);
    }
  }

  /** The fields `def`'s job on `vm` takes from the stack's CA file, and that file; none when it takes none. */
  private stackCa(vm: VmConfig, def: CatalogEntry, props: VmInstallationProps): JobSpec["stackCa"] {
    const fields = stackCaFields(vm, def);
    if (!Object.keys(fields).length || !props.stackCaFile) return undefined;
    return { file: props.paths.placed(props.stackCaFile), fields };
  }

  /** The address the jobs connect to and, if there is one, the host key they require (as `npm run check` does). */
  private connectionOutputs(vm: VmConfig, hostKeySha256: string | undefined): void {
    const addressOutput = addressOutputName(vm.name);
    new TerraformOutput(this, addressOutput, {
      value: this.address,
      description: `${vm.name}: address the jobs connect to`,
    }).overrideLogicalId(addressOutput);
    if (hostKeySha256 === undefined) return;
    const keyOutput = hostKeyIds(vm.name).output;
    new TerraformOutput(this, keyOutput, {
      value: hostKeySha256,
      description: `${vm.name}: the host key the jobs require`,
    }).overrideLogicalId(keyOutput);
  }

  /**
   * A terraform_data replaced with every new VM, for every cause: its trigger is the VM's id, unknown
   * whenever the VM is (re)created, and a VM replaced in place and one deleted outside Terraform (which
   * refresh drops, so it is planned as a create) both are. What must start again on a new VM names this
   * in replace_triggered_by: naming the VM's id there would miss the second cause, as Terraform does not
   * trigger on a resource being created.
   */
  private vmGeneration(vm: VmConfig, machine: VcVmV3): InstallerJob {
    const id = vmGenerationId(vm.name);
    const generation = new TerraformData(this, "vm_generation", { triggersReplace: { vm_id: machine.id } });
    generation.overrideLogicalId(id);
    return chainLink(generation, id);
  }

  /**
   * The delivered host key as Terraform keeps it: a terraform_data holding what the key file held when
   * it was created, the private half sensitive. `ignore_changes` keeps that first key through every later
   * plan, whatever this working copy's file holds (another key, or none): the VM's cloud_init and the
   * pin both read this record, so neither a new synth nor another copy sharing the state changes the VM.
   * A file that is missing or not JSON gives empty strings: they change nothing once the state holds a
   * key; on a first create (Terraform without bin/cdktf) the record's postcondition fails, so the VM,
   * which needs the record, is not created.
   */
  private deliveredHostKey(vm: VmConfig, props: VmInstallationProps): DeliveredKeyRecord {
    const file = JSON.stringify(props.paths.placed(props.hostKeyFile!));
    const field = (name: string) => `try(jsondecode(file(${file})).${name}, "")`;
    const id = hostKeyIds(vm.name).delivered;
    const record = new TerraformData(this, "delivered_host_key", {
      input: {
        public: `\${${field("public")}}`,
        private: `\${sensitive(${field("private")})}`,
        sha256: `\${${field("sha256")}}`,
      },
    });
    record.overrideLogicalId(id);
    record.addOverride("lifecycle.ignore_changes", ["input"]);
    // Created without a key (Terraform run without bin/cdktf while the file was missing), it would keep
    // none for good: every plan after that says so and how to make it anew.
    record.addOverride("lifecycle.postcondition", [
      {
        condition: `\${can(regex("^SHA256:[A-Za-z0-9+/]{43}$", self.output.sha256))}`,
        error_message:
          `${vm.name}: terraform_data.${id} holds no host key to deliver: it was made while ` +
          `${props.paths.placed(props.hostKeyFile!)} (relative to the stack folder) was missing, by a Terraform ` +
          "run without bin/cdktf. Run npm run synth (bin/cdktf makes the file), then terraform apply " +
          `-replace=terraform_data.${id} in the stack folder; no VM was created with it.`,
      },
    ]);
    const output = (name: string) => `terraform_data.${id}.output.${name}`;
    return {
      address: `terraform_data.${id}`,
      public: output("public"),
      private: output("private"),
      sha256: `\${${output("sha256")}}`,
      sha256Ref: output("sha256"),
    };
  }

  private createVm(
    vm: VmConfig,
    nubes: NubesConfig,
    paths: TerraformPaths,
    prefix: string,
    cloudInit?: string,
  ): VcVmV3 {
    const vapp = new Vapp(this, "vapp", {
      resourceName: vm.vappName,
      vappName: vm.vappName,
      vdcUid: nubes.vdcUid,
      nsxtUid: nubes.nsxtUid,
      deleteMode: nubes.deleteMode,
      resumeIfExists: nubes.resumeIfExists,
    });
    vapp.overrideLogicalId(`${prefix}_vapp`);
    const machine = new VcVmV3(this, "vm", {
      resourceName: vm.name,
      vappUid: vapp.id,
      vmName: vm.name,
      vmCpu: vm.cpu,
      vmRam: vm.ram,
      vmDisk: vm.disk,
      imageVm: vm.image,
      userLogin: vm.user,
      userPublicKey: Fn.chomp(Fn.file(paths.setting(vm.publicKeyPath))),
      accessPortList: JSON.stringify(vm.accessPorts),
      needAddZabbixTemplate: vm.zabbix,
      cloudInit,
      deleteMode: nubes.deleteMode,
      resumeIfExists: nubes.resumeIfExists,
    });
    machine.overrideLogicalId(vmResourceId(vm.name));
    return machine;
  }
}
