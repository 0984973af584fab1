// One VM and its installers: a vApp, the VM, then one job per enabled installer, chained in catalog order
// so a VM sees one apt run at a time. Jobs of different VMs share nothing and run in parallel.
import * as path from "path";
import { Construct } from "constructs";
import { Vapp } from "../providers/generated/nubes/vapp";
import { VcVmV3 } from "../providers/generated/nubes/vc-vm-v3";
import type { NubesConfig, SlessConfig, VmConfig } from "./config/types";
import { Fn, ITerraformDependable, TerraformOutput, TerraformVariable } from "./cdktf";
import { INSTALLERS } from "./installers/catalog";
import { HandlerAsset } from "./jobs/handler-asset";
import { createSlessJob, InstallerJob } from "./jobs/sless-job";

export interface VmInstallationProps {
  /** The VM and its resolved installers. */
  readonly vm: VmConfig;
  readonly nubes: NubesConfig;
  readonly sless: SlessConfig;
  /** run_id of every job. */
  readonly runId: number;
  /** Folder that relative key paths are resolved from. @default process.cwd() (where cdktf runs the app) */
  readonly baseDir?: string;
  /** Returns the sensitive Terraform variable with this name (shared by VMs that name the same one). */
  readonly secretVariable: (name: string) => TerraformVariable;
}

export class VmInstallation extends Construct {
  /** The address the jobs connect to, as a Terraform expression. */
  readonly address: string;
  /** Enabled installers' jobs, in run order. */
  readonly jobs: { key: string; job: InstallerJob }[] = [];

  constructor(scope: Construct, id: string, props: VmInstallationProps) {
    super(scope, id);
    const { vm, nubes } = props;
    const baseDir = props.baseDir ?? process.cwd();
    const prefix = vm.name.replace(/-/g, "_");

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
      userPublicKey: Fn.chomp(Fn.file(path.resolve(baseDir, vm.publicKeyPath))),
      accessPortList: JSON.stringify(vm.accessPorts),
      needAddZabbixTemplate: vm.zabbix,
      deleteMode: nubes.deleteMode,
      resumeIfExists: nubes.resumeIfExists,
    });
    machine.overrideLogicalId(`${prefix}_vm`);

    this.address = vm.address ?? machine.stateOutFlat.lookup(vm.addressKey);
    const env: Record<string, string> = {
      VM_IP: this.address,
      SSH_USER: vm.user,
      // Read by Terraform at apply time and marked sensitive: the key is never in cdktf.out or a plan.
      SSH_KEY: Fn.sensitive(Fn.file(path.resolve(baseDir, vm.privateKeyPath))),
      SSH_PORT: String(vm.sshPort),
      ...(vm.hostKeySha256 ? { SSH_HOST_KEY_SHA256: vm.hostKeySha256 } : {}),
    };

    let previous: ITerraformDependable | undefined;
    for (const spec of INSTALLERS) {
      const settings = vm.installers[spec.key];
      const outputName = `${prefix}_${spec.key}_result`;
      if (!settings.enabled) {
        new TerraformOutput(this, outputName, { value: "skipped", description: `${vm.name}: ${spec.handler} (disabled)` }).overrideLogicalId(outputName);
        continue;
      }
      const event = spec.event(settings as never, vm);
      const passwordVariable = spec.key === "postgres" ? vm.installers.postgres.passwordVariable : undefined;
      // A secret joins the event only as a Terraform reference, so cdktf.out holds var.<name>, not the value.
      const eventJson = passwordVariable
        ? Fn.jsonencode({ ...event, db_password: props.secretVariable(passwordVariable).value })
        : JSON.stringify(event);
      const asset = new HandlerAsset(this, `${spec.handler}-bundle`, { handler: spec.handler });
      const job = createSlessJob(this, `${prefix}_${spec.key.replace(/-/g, "_")}`, {
        name: `${vm.name}-${spec.handler}`,
        runtime: props.sless.runtime,
        sourceDir: asset.path,
        env,
        eventJson,
        runId: props.runId,
        waitTimeoutSec: settings.waitTimeoutSec,
        dependsOn: previous ? [machine, previous] : [machine],
      });
      this.jobs.push({ key: spec.key, job });
      previous = job;
      new TerraformOutput(this, outputName, { value: job.message, description: `${vm.name}: ${spec.handler} result (JSON)` }).overrideLogicalId(outputName);
    }
    new TerraformOutput(this, `${prefix}_address`, { value: this.address, description: `${vm.name}: address the jobs connect to` }).overrideLogicalId(`${prefix}_address`);
  }
}
