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

/** The output that holds a VM's installer result. */
export function resultOutputName(vm: string, installerKey: string): string {
  return `${resourcePrefix(vm)}_${installerKey}_result`;
}

/** The logical ids of a VM's trust on first contact: the probe job and the terraform_data recording its key. */
export function hostKeyIds(vm: string): { probe: string; record: string } {
  return { probe: `${resourcePrefix(vm)}_host_key_probe`, record: `${resourcePrefix(vm)}_host_key` };
}
