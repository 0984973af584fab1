// nubes_vc_vm_v3 in the twin: a sandbox VM (dev/sandbox/) booted with cloud-init, whose user-data makes the
// VM's login user and public key and applies cloud_init (vm-user-data.ts); found again by name by every
// later provider process. Its address is state_out_flat.externalConnect
// (and internalConnect: one network here); only access_port_list's TCP ports take connections from
// outside. destroy honours delete_mode as the real provider does.
import { randomUUID } from "node:crypto";
import { getSandbox, listSandboxes, startSandbox, stopSandbox } from "../../sandbox/index";
import { readState } from "../../sandbox/state";
import { killTree } from "../../sandbox/tree";
import type { CtyObject } from "../protocol/cty-value";
import { TwinError } from "../protocol/diagnostics";
import type { ResourceImplementation } from "../protocol/resource";
import { applyAccessPorts, parsePorts } from "./access-ports";
import { deleteModeOf, LIFECYCLE_DEFAULTS } from "./delete-mode";
import { sandboxNameOf, vmProblems } from "./vm-settings";
import { vmUserData } from "./vm-user-data";

function connectInfo(address: string, sandbox: string): Record<string, string> {
  return { externalConnect: address, internalConnect: address, sandbox };
}

/** A running sandbox of that name to adopt, after removing a dead or suspended one (its disk cannot come back). */
async function adoptable(name: string, log: (line: string) => void): Promise<string | undefined> {
  const found = listSandboxes().find((s) => s.name === name);
  if (!found) return undefined;
  if (found.alive && found.status === "running") return getSandbox(name).address;
  log(
    `VM ${name}: a stopped sandbox of that name is in the way; ` +
      "the twin cannot resume it, removing it and booting a new one",
  );
  await stopSandbox(name);
  return undefined;
}

async function createVm(planned: CtyObject, log: (line: string) => void): Promise<CtyObject> {
  const vmName = String(planned.vm_name);
  const name = sandboxNameOf(vmName);
  const running = await adoptable(name, log);
  if (running && planned.resume_if_exists === false) {
    throw new TwinError(
      `nubes_vc_vm_v3: a VM named ${vmName} already exists (sandbox ${name})`,
      "Set resume_if_exists = true to adopt it, or choose another vm_name.",
      "vm_name",
    );
  }
  let address = running;
  if (address) log(`VM ${vmName}: adopted the running sandbox ${name} at ${address}`);
  else {
    log(`VM ${vmName}: booting sandbox ${name} (user ${planned.user_login})`);
    const sb = await startSandbox({
      name,
      persistent: true,
      user: String(planned.user_login),
      cloudInit: { userData: vmUserData(planned) },
      log: (line) => log(`VM ${vmName}: ${line}`),
    }).catch((e: Error) => {
      throw new TwinError(
        `nubes_vc_vm_v3 ${vmName}: the twin could not boot its sandbox`,
        `${e.message}. Check \`npm run sandbox list\`; remove leftovers with \`npm run sandbox down ${name}\`.`,
      );
    });
    address = sb.address;
    log(`VM ${vmName}: up at ${address}, host key ${sb.hostKeySha256}`);
  }
  applyAccessPorts(name, parsePorts(planned.access_port_list));
  return { ...planned, id: `vm-${randomUUID()}`, state_out_flat: connectInfo(address, name) };
}

async function deleteVm(prior: CtyObject, log: (line: string) => void): Promise<void> {
  const vmName = String(prior.vm_name);
  const name = sandboxNameOf(vmName);
  const mode = deleteModeOf(prior);
  if (mode === "delete") await stopSandbox(name);
  else if (mode === "suspend") await killTree(readState(name)?.pid);
  log(
    `VM ${vmName}: destroy with delete_mode ${mode}: ` +
      (mode === "delete" ? "sandbox removed" : mode === "suspend" ? "sandbox powered off" : "sandbox left running"),
  );
}

export function nubesVm(log: (line: string) => void): ResourceImplementation {
  return {
    // What the VM is made from and who logs in: a change needs a new VM. cloud_init too: cloud-init runs
    // it once per instance, so a changed one would never reach the running VM.
    replaceOn: ["resource_name", "vapp_uid", "vm_name", "image_vm", "user_login", "user_public_key", "cloud_init"],
    defaults: LIFECYCLE_DEFAULTS,
    validate: vmProblems,
    create: (planned) => createVm(planned, log),
    delete: (prior) => deleteVm(prior, log),
    // Sizing is only recorded; the open ports are applied again.
    async update(_prior, planned) {
      applyAccessPorts(sandboxNameOf(String(planned.vm_name)), parsePorts(planned.access_port_list));
      return planned;
    },
    // A VM whose sandbox is gone was deleted outside Terraform: refresh drops it, the next plan creates it.
    async read(state) {
      const sandbox = readState(sandboxNameOf(String(state.vm_name)));
      return sandbox ? state : null;
    },
  };
}
