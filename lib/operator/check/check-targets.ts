// What `npm run check` sends where: for each deployed VM, how to reach it from this machine and, for each
// enabled installer, the job's own event with `check: true`. Read from the configuration (user, port,
// key file, the installers' settings: the same event the deploy sent, lib/construct/installers/installer-event.ts)
// and the deployed state's outputs (the address, and the host key the jobs require). Pure: no VM, no disk.
import { keySettingName } from "../../construct/config/key-file";
import type { VmConfig, VmInstallConfig } from "../../construct/config/types";
import { hostKeySource } from "../../construct/delivered-host-keys";
import { type CatalogEntry, INSTALLERS } from "../../construct/installers/catalog";
import { installerEvent, secretVariableNames, stackCaFields } from "../../construct/installers/installer-event";
import { resultsFolder } from "../../construct/jobs/secret-trigger";
import { caFile } from "../../construct/postgres-ca";
import { addressOutputName, hostKeyIds, jobName } from "../../construct/resource-names";
import type { SecretEnv, SecretFile } from "../../jobs/invoke-args";

/** One installer of one VM, checked. */
export interface CheckJob {
  vm: string;
  installer: string;
  /** Where the installer's folder is (a test's fixture installer); absent: the project's handlers/. */
  handlersDir?: string;
  /** "<vm>-<handler>-check": the job's name in progress lines and its log file. */
  name: string;
  event: Record<string, unknown>;
  /** Secret event fields and the TF_VAR_ variables they are read from (never put in the event here). */
  secretEnv: SecretEnv[];
  /** Secret event fields read from the stack's CA file, as a deploy's runner reads them. */
  secretFile: SecretFile[];
  timeoutSec: number;
}

/** One VM: how to reach it, and its jobs in run order. `problem`: why it cannot be checked. */
export interface CheckTarget {
  vm: string;
  /** VM_IP, SSH_USER, SSH_PORT, SSH_KEY_SETTING, SSH_HOST_KEY_SHA256 as the jobs get them. */
  env: Record<string, string>;
  /** The private key file, resolved against the project folder. */
  keyFile: string;
  jobs: CheckJob[];
  /** Installers disabled in cdktf.json (reported as skipped). */
  skipped: string[];
  /** Every installer's handler in run order, for the rows' order. */
  order: string[];
  problem?: string;
}

function jobsOf(
  vm: VmConfig,
  catalog: readonly CatalogEntry[],
  stackCaFile: string,
): { jobs: CheckJob[]; skipped: string[] } {
  const enabled = catalog.filter((def) => vm.installers[def.key].enabled);
  const jobs = enabled.map((def, i) => ({
    vm: vm.name,
    installer: def.handler,
    handlersDir: def.handlersDir,
    name: `${jobName(vm.name, def.handler)}-check`,
    event: { ...installerEvent(vm, def, i > 0), check: true },
    secretEnv: Object.entries(secretVariableNames(vm, def)).map(([field, name]) => ({
      field,
      variable: `TF_VAR_${name}`,
    })),
    secretFile: Object.entries(stackCaFields(vm, def)).map(([field, property]) => ({
      field,
      file: stackCaFile,
      property,
    })),
    timeoutSec: vm.installers[def.key].waitTimeoutSec,
  }));
  return { jobs, skipped: catalog.filter((def) => !enabled.includes(def)).map((def) => def.handler) };
}

/** Why the deployed state cannot name this VM's address or host key; undefined when it can. */
function stateProblem(vm: VmConfig, outputs: Record<string, string>): string | undefined {
  if (!outputs[addressOutputName(vm.name)])
    return `${vm.name} is not in the deployed state: deploy it first (npm run deploy)`;
  if (!vm.hostKeySha256 && !outputs[hostKeyIds(vm.name).output]) {
    return (
      `the deployed state shows no host key for ${vm.name} ` +
      "(a deploy that never reached it, or one by an older version): run npm run deploy"
    );
  }
  return undefined;
}

/** Every VM of `config` as the deployed `outputs` show it; `resolveKey` makes the key path absolute. */
export function checkTargets(
  config: VmInstallConfig,
  outputs: Record<string, string>,
  resolveKey: (setting: string) => string,
  catalog: readonly CatalogEntry[] = INSTALLERS,
): CheckTarget[] {
  // The project folder's results: where the app keeps the stack's CA.
  const stackCaFile = caFile(resultsFolder(resolveKey("."), config.stackName));
  return config.vms.map((vm) => {
    const { jobs, skipped } = jobsOf(vm, catalog, stackCaFile);
    const hostKey = vm.hostKeySha256 ?? outputs[hostKeyIds(vm.name).output];
    return {
      vm: vm.name,
      env: {
        VM_IP: outputs[addressOutputName(vm.name)] ?? "",
        SSH_USER: vm.user,
        SSH_PORT: String(vm.sshPort),
        // A key problem is told in cdktf.json's words, as a deploy's job tells it.
        SSH_KEY_SETTING: keySettingName(vm.name, "privateKeyPath", vm.privateKeyPath),
        ...(hostKey ? { SSH_HOST_KEY_SHA256: hostKey, SSH_HOST_KEY_SOURCE: hostKeySource(vm) } : {}),
      },
      keyFile: resolveKey(vm.privateKeyPath),
      jobs,
      skipped,
      order: catalog.map((def) => def.handler),
      problem: jobs.length ? stateProblem(vm, outputs) : undefined,
    };
  });
}
