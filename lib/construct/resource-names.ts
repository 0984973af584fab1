// How a VM's resources, jobs and outputs are named: written once, for the stack that creates them and
// for the commands that find them again in the deployed state (status, trust, the benches).

/** A VM name as Terraform identifiers take it ("web-1" -> "web_1"): the prefix of its resources and outputs. */
export function resourcePrefix(vm: string): string {
  return vm.replace(/-/g, "_");
}

/** The job's name on the platform and in progress lines: "<vm>-<handler>". */
export function jobName(vm: string, handler: string): string {
  return `${vm}-${handler}`;
}

/** The logical id of the nubes_vc_vm_v3 a VM of kind "nubes" is. */
export function vmResourceId(vm: string): string {
  return `${resourcePrefix(vm)}_vm`;
}

/** The logical id of the terraform_data replaced with every new VM of kind "nubes" (its trigger is the VM's id). */
export function vmGenerationId(vm: string): string {
  return `${resourcePrefix(vm)}_vm_generation`;
}

/** The logical id of a VM's installer job. */
export function installerJobId(vm: string, installerKey: string): string {
  return `${resourcePrefix(vm)}_${installerKey}`;
}

/** The output that holds a VM's installer result. */
export function resultOutputName(vm: string, installerKey: string): string {
  return `${resourcePrefix(vm)}_${installerKey}_result`;
}

/**
 * The logical ids of a VM's host key: the first-contact probe job and the terraform_data recording its
 * key, the output that shows the key the jobs require (the pin, the delivered key or that record), and
 * the terraform_data holding the key delivered to a Nubes VM (hostKeys "delivered").
 */
export function hostKeyIds(vm: string): { probe: string; record: string; output: string; delivered: string } {
  const prefix = resourcePrefix(vm);
  return {
    probe: `${prefix}_host_key_probe`,
    record: `${prefix}_host_key`,
    output: `${prefix}_host_key_sha256`,
    delivered: `${prefix}_delivered_host_key`,
  };
}

/** The variable through which `npm run trust` gives the host key an operator accepted (VM name -> "SHA256:..."). */
export const ACCEPTED_HOST_KEYS_VARIABLE = "accepted_host_keys";

/** The output that holds the address a VM's jobs connect to. */
export function addressOutputName(vm: string): string {
  return `${resourcePrefix(vm)}_address`;
}

/** The logical id of the terraform_data gating the waves after wave `wave` (1 first). */
export function rolloutGateId(wave: number): string {
  return `rollout_wave_${wave}`;
}

/** The output listing the VMs whose failure the rollout tolerated, with their messages. */
export const ROLLOUT_FAILURES_OUTPUT = "rollout_failures";
