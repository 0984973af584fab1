// nubes_vc_vm_v3's first boot in the twin, through real Terraform: the VM boots with cloud-init, whose
// user-data is what the twin assumes Nubes composes (dev/twin/nubes/vm-user-data.ts): the platform's part
// makes user_login with user_public_key, the resource's cloud_init is applied after it. A cloud_init
// cloud-init would not take fails the plan; a changed one replaces the VM.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as path from "node:path";
import { getSandbox, listSandboxes, sshRun, stopSandbox } from "../../dev/sandbox/index";
import { removeVapp } from "../../dev/twin/nubes/records";
import { sandboxNameOf } from "../../dev/twin/nubes/vm-settings";
import { REQUIRED_PROVIDERS, TwinTerraform } from "../twin/terraform";
import { describeE2E, root } from "./support/e2e";

const USER = "deploy";

function config(vm: string, keyPath: string): string {
  return `${REQUIRED_PROVIDERS}
provider "nubes" {}
variable "cloud_init" {
  type    = string
  default = null
}
resource "nubes_vapp" "a" {
  resource_name = "twin-ci"
  vapp_name     = "twin-ci-${vm}"
  vdc_uid       = "vdc"
  nsxt_uid      = "nsxt"
  delete_mode   = "delete"
}
resource "nubes_vc_vm_v3" "vm" {
  resource_name            = "${vm}"
  vapp_uid                 = nubes_vapp.a.id
  vm_name                  = "${vm}"
  vm_cpu                   = 1
  vm_ram                   = 1
  image_vm                 = "Ubuntu_22-20G"
  user_login               = "${USER}"
  user_public_key          = chomp(file(${JSON.stringify(`${keyPath}.pub`)}))
  access_port_list         = jsonencode(["22"])
  need_add_zabbix_template = false
  delete_mode              = "delete"
  cloud_init               = var.cloud_init
}
`;
}

const CLOUD_INIT = `#cloud-config
write_files:
  - path: /etc/twin-cloud-init-marker
    content: "from cloud_init\\n"
runcmd:
  - [sh, -c, "getent passwd ${USER} | cut -d: -f1 > /var/tmp/runcmd-saw-user"]
`;

describeE2E(
  "nubes_vc_vm_v3 in the twin: user_login, user_public_key and cloud_init reach the VM through cloud-init",
  () => {
    const tf = new TwinTerraform();
    const vm = `ci${randomBytes(3).toString("hex")}`;
    const sandbox = sandboxNameOf(vm);
    const key = path.join(tf.dir, "vm_key");
    const withCloudInit = (text: string) => ({ TF_VAR_cloud_init: text });

    beforeAll(() => {
      execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", key]);
      tf.write(config(vm, key));
      tf.ok(["init", "-input=false"]);
    }, 120_000);

    afterAll(async () => {
      await stopSandbox(sandbox);
      removeVapp(`twin-ci-${vm}`);
    });

    test("a cloud_init cloud-init would not take fails the plan, naming why; no VM is booted", () => {
      const r = tf.run(["plan", "-input=false"], withCloudInit("packages: [jq]\n"));
      expect(r.code).not.toBe(0);
      const said = r.output.replace(/\s+/g, " ");
      expect(said).toContain("Error: nubes_vc_vm_v3: cloud_init is not user-data cloud-init accepts");
      expect(said).toContain(
        'its first line "packages: [jq]" is none of "#cloud-config", "#!" (a script) or a MIME multipart header',
      );
      expect(listSandboxes().find((s) => s.name === sandbox)).toBeUndefined();
    }, 120_000);

    test("cloud-init makes user_login with user_public_key, then applies cloud_init", async () => {
      expect(tf.run(["apply", "-auto-approve", "-input=false"], withCloudInit(CLOUD_INIT)).code).toBe(0);
      const sb = getSandbox(sandbox);
      const done = await sb.cloudInitDone();
      expect({ code: done.code, status: /^status: (\S+)/m.exec(done.stdout)?.[1] }).toEqual({
        code: 0,
        status: "done",
      });
      expect(await root(sb, `grep -c 'Adding user ${USER}' /var/log/cloud-init.log`)).toMatch(/^[1-9]/);
      // The user-data held both parts, the platform's first.
      const parts = await root(sb, 'grep -o \'filename="[^"]*"\' /var/lib/cloud/instance/user-data.txt');
      expect(parts).toBe('filename="nubes-platform.cfg"\nfilename="cloud_init"\n');
      const r = await sshRun(
        { ...sb, privateKeyPath: key },
        "id -un; sudo -n cat /etc/twin-cloud-init-marker /var/tmp/runcmd-saw-user",
      );
      expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
        code: 0,
        stdout: `${USER}\nfrom cloud_init\n${USER}\n`,
        stderr: "",
      });
    }, 300_000);

    test("a changed cloud_init replaces the VM (cloud-init runs it once per instance)", () => {
      const r = tf.run(["plan", "-input=false"], withCloudInit(`${CLOUD_INIT}package_upgrade: false\n`));
      expect(r.code).toBe(0);
      expect(r.output).toMatch(/nubes_vc_vm_v3\.vm must be replaced/);
      expect(r.output).toMatch(/~ cloud_init\s+= .*# forces replacement/s);
      expect(tf.run(["destroy", "-auto-approve", "-input=false"], withCloudInit(CLOUD_INIT)).code).toBe(0);
    }, 300_000);
  },
);
