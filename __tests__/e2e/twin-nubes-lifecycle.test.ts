// nubes_vc_vm_v3's lifecycle settings in the twin, through real Terraform: destroy with delete_mode
// state_only leaves the VM running (as the real provider does), resume_if_exists adopts it on the next
// create and false refuses it, suspend powers it off; a VM gone from the twin is planned anew; only the
// access ports take connections.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as net from "node:net";
import * as path from "node:path";
import { getSandbox, listSandboxes, stopSandbox } from "../../dev/sandbox/index";
import { removeVapp } from "../../dev/twin/nubes/records";
import { sandboxNameOf } from "../../dev/twin/nubes/vm-settings";
import { REQUIRED_PROVIDERS, TwinTerraform } from "../twin/terraform";
import { describeE2E } from "./support/e2e";

function config(vm: string, keyPath: string): string {
  return `${REQUIRED_PROVIDERS}
provider "nubes" {}
variable "delete_mode" { default = "state_only" }
variable "resume" { default = true }
variable "ports" {
  type    = list(string)
  default = ["22"]
}
resource "nubes_vapp" "a" {
  resource_name = "twin-life"
  vapp_name     = "twin-life-${vm}"
  vdc_uid       = "vdc"
  nsxt_uid      = "nsxt"
  delete_mode   = var.delete_mode
}
resource "nubes_vc_vm_v3" "vm" {
  resource_name            = "${vm}"
  vapp_uid                 = nubes_vapp.a.id
  vm_name                  = "${vm}"
  vm_cpu                   = 1
  vm_ram                   = 1
  image_vm                 = "Ubuntu_22-20G"
  user_login               = "ubuntu"
  user_public_key          = chomp(file(${JSON.stringify(`${keyPath}.pub`)}))
  access_port_list         = jsonencode(var.ports)
  need_add_zabbix_template = false
  delete_mode              = var.delete_mode
  resume_if_exists         = var.resume
}
output "address" { value = nubes_vc_vm_v3.vm.state_out_flat["externalConnect"] }
`;
}

/** Whether a TCP connection to address:port opens within 2 s. */
function connects(address: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: address, port, timeout: 2000 });
    const done = (ok: boolean) => {
      sock.destroy();
      resolve(ok);
    };
    sock.on("connect", () => done(true));
    sock.on("timeout", () => done(false));
    sock.on("error", () => done(false));
  });
}

describeE2E("nubes_vc_vm_v3 in the twin: delete_mode and resume_if_exists", () => {
  const tf = new TwinTerraform();
  const vm = `tl${randomBytes(3).toString("hex")}`;
  const sandbox = sandboxNameOf(vm);
  const key = path.join(tf.dir, "vm_key");
  const listing = () => listSandboxes().find((s) => s.name === sandbox);
  const apply = (vars: string[] = []) => tf.run(["apply", "-auto-approve", "-input=false", ...vars]);
  /** An apply or destroy that must succeed: a failure throws with Terraform's own words (a bare exit code told nothing). */
  const applied = (vars: string[] = []) => tf.ok(["apply", "-auto-approve", "-input=false", ...vars]);
  const destroyed = (vars: string[] = []) => tf.ok(["destroy", "-auto-approve", "-input=false", ...vars]);
  const address = () => JSON.parse(tf.ok(["output", "-json"])).address.value as string;

  beforeAll(() => {
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", key]);
    tf.write(config(vm, key));
    tf.ok(["init", "-input=false"]);
  }, 120_000);

  afterAll(async () => {
    await stopSandbox(sandbox);
    removeVapp(`twin-life-${vm}`);
  });

  test("state_only: destroy forgets the VM and leaves it running; the next create adopts it", () => {
    applied();
    const first = { address: address(), createdAt: listing()?.createdAt };
    expect(listing()).toMatchObject({ alive: true, status: "running" });
    destroyed();
    expect(listing()).toMatchObject({ alive: true, status: "running", createdAt: first.createdAt });
    applied();
    expect({ address: address(), createdAt: listing()?.createdAt }).toEqual(first);
  }, 300_000);

  test("access_port_list: only the listed TCP ports take connections from outside; a change is applied in place", async () => {
    const server = getSandbox(sandbox).rootSpawn("exec python3 -m http.server 8080 --bind 0.0.0.0");
    try {
      const vmAddress = address();
      expect(await connects(vmAddress, 22)).toBe(true);
      expect(await connects(vmAddress, 8080)).toBe(false);
      const r = apply(['-var=ports=["22","8080"]']);
      expect(r.output).toContain("Resources: 0 added, 1 changed, 0 destroyed.");
      expect(await connects(vmAddress, 8080)).toBe(true);
      applied();
      expect(await connects(vmAddress, 8080)).toBe(false);
    } finally {
      server.kill();
    }
  }, 300_000);

  test("resume_if_exists = false refuses a running VM of the same name, saying what to do", () => {
    destroyed();
    const r = apply(["-var=resume=false"]);
    expect(r.code).not.toBe(0);
    const said = r.output.replace(/\s+/g, " ");
    expect(said).toContain(`Error: nubes_vc_vm_v3: a VM named ${vm} already exists (sandbox ${sandbox})`);
    expect(said).toContain("Set resume_if_exists = true to adopt it, or choose another vm_name.");
  }, 300_000);

  test("suspend: destroy powers the VM off", () => {
    applied(["-var=delete_mode=suspend"]);
    destroyed(["-var=delete_mode=suspend"]);
    expect(listing()).toMatchObject({ alive: false });
  }, 300_000);

  test("a powered-off VM is not resumed but replaced by a new one; a VM deleted outside Terraform is planned again", async () => {
    const before = listing()?.createdAt;
    applied(["-var=delete_mode=delete"]);
    expect(listing()).toMatchObject({ alive: true, status: "running" });
    expect(listing()?.createdAt).not.toBe(before);
    await stopSandbox(sandbox);
    const plan = tf.run(["plan", "-input=false", "-var=delete_mode=delete"]);
    expect(plan.output).toMatch(/nubes_vc_vm_v3\.vm will be created/);
    destroyed(["-var=delete_mode=delete"]);
  }, 300_000);
});
