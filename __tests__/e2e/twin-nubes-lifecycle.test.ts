// nubes_vc_vm_v3's lifecycle settings in the twin, through real Terraform: destroy with delete_mode
// state_only leaves the VM running (as the real provider does), resume_if_exists adopts it on the next
// create and false refuses it, suspend powers it off; a VM gone from the twin is planned anew; only the
// access ports take connections.
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { PROJECT_ROOT } from "../../construct/entry-points";
import { runCdktf, writeCdktfProject } from "../../demo/project";
import type { StatusRow } from "../../operator/status/status-rows";
import { getSandbox, listSandboxes, stopSandbox } from "../../sandbox/index";
import { TWIN_CDKTF_FLAGS, twinDeployEnv } from "../../twin/deploy-env";
import { installTwin } from "../../twin/install";
import { removeVapp } from "../../twin/nubes/records";
import { sandboxNameOf } from "../../twin/nubes/vm-settings";
import { tempDir } from "../support/synth";
import { REQUIRED_PROVIDERS, TwinTerraform } from "../twin/terraform";
import { describeE2E, dpkgStatus } from "./support/e2e";
import { type TcpForwarder, tcpForwarder } from "./support/tcp-forwarder";

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
  const destroy = (vars: string[] = []) => tf.run(["destroy", "-auto-approve", "-input=false", ...vars]);
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
    expect(apply().code).toBe(0);
    const first = { address: address(), createdAt: listing()?.createdAt };
    expect(listing()).toMatchObject({ alive: true, status: "running" });
    expect(destroy().code).toBe(0);
    expect(listing()).toMatchObject({ alive: true, status: "running", createdAt: first.createdAt });
    expect(apply().code).toBe(0);
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
      expect(apply().code).toBe(0);
      expect(await connects(vmAddress, 8080)).toBe(false);
    } finally {
      server.kill();
    }
  }, 300_000);

  test("resume_if_exists = false refuses a running VM of the same name, saying what to do", () => {
    expect(destroy().code).toBe(0);
    const r = apply(["-var=resume=false"]);
    expect(r.code).not.toBe(0);
    const said = r.output.replace(/\s+/g, " ");
    expect(said).toContain(`Error: nubes_vc_vm_v3: a VM named ${vm} already exists (sandbox ${sandbox})`);
    expect(said).toContain("Set resume_if_exists = true to adopt it, or choose another vm_name.");
  }, 300_000);

  test("suspend: destroy powers the VM off", () => {
    expect(apply(["-var=delete_mode=suspend"]).code).toBe(0);
    expect(destroy(["-var=delete_mode=suspend"]).code).toBe(0);
    expect(listing()).toMatchObject({ alive: false });
  }, 300_000);

  test("a powered-off VM is not resumed but replaced by a new one; a VM deleted outside Terraform is planned again", async () => {
    const before = listing()?.createdAt;
    expect(apply(["-var=delete_mode=delete"]).code).toBe(0);
    expect(listing()).toMatchObject({ alive: true, status: "running" });
    expect(listing()?.createdAt).not.toBe(before);
    await stopSandbox(sandbox);
    const plan = tf.run(["plan", "-input=false", "-var=delete_mode=delete"]);
    expect(plan.output).toMatch(/nubes_vc_vm_v3\.vm will be created/);
    expect(destroy(["-var=delete_mode=delete"]).code).toBe(0);
  }, 300_000);
});

/**
 * A fixed address in front of a twin VM: whatever VM of that name runs now is behind it, so the stack's
 * configuration does not change when the VM is replaced and only the VM's id can tell the jobs to run again.
 */
function fixedAddress(sandboxName: string): Promise<TcpForwarder> {
  return tcpForwarder(() => listSandboxes().find((s) => s.name === sandboxName && s.alive)?.address);
}

/** `npm run status -- --json` in the project folder, as an operator runs it. */
function statusRows(dir: string, env: Record<string, string>, exitCode = 0): StatusRow[] {
  const r = spawnSync(
    process.execPath,
    ["-r", path.join(PROJECT_ROOT, "bin", "ts-register.js"), path.join(PROJECT_ROOT, "bin", "status.ts"), "--json"],
    {
      cwd: dir,
      env: { ...process.env, ...env },
      encoding: "utf8",
    },
  );
  if (r.status !== exitCode) throw new Error(`npm run status exited ${r.status}: ${r.stderr}\n${r.stdout}`);
  return JSON.parse(r.stdout);
}

// A replaced VM, for every cause (a changed image, `terraform apply -replace`, the VM deleted outside
// Terraform), is a new machine with a new host key and nothing installed: the next deploy must probe it,
// record its key and run every installer on it, with the address read from state_out_flat and with a
// fixed address alike, for both job targets. One stack holds both kinds of address, so each cause is one
// deploy; install-packages of one small package is the installer that proves it.
for (const jobTarget of ["sless", "local"] as const) {
  describeE2E(`a replaced nubes VM is learned and installed anew (${jobTarget} target)`, () => {
    const stack = `e2e-replace-${jobTarget}`;
    const dir = tempDir(`twin-replace-${jobTarget}`);
    const tag = randomBytes(2).toString("hex");
    const flat = `rf${tag}${jobTarget[0]}`;
    const fixed = `rx${tag}${jobTarget[0]}`;
    const twin = installTwin(path.join(dir, ".twin"));
    // This machine's plugin cache holds another checkout's twin of the same providers (cdktf turns the
    // cache on by default, and each checkout's launcher differs): the deploys must not take it.
    const foreignCache = path.join(dir, "foreign-plugin-cache");
    const env = { TF_PLUGIN_CACHE_DIR: foreignCache, ...twinDeployEnv(twin), CHECKPOINT_DISABLE: "1" };
    let forwarder: { port: number; close(): void };
    const seen: Record<string, { hostKey: string; createdAt?: string }> = {};

    const ctx = (image: string) => ({
      stackName: stack,
      jobTarget,
      nubes: { vdcUid: "twin-vdc", nsxtUid: "twin-nsxt", deleteMode: "delete" },
      installers: { packages: { enabled: true, packages: ["jq"] } },
      vms: [flat, fixed].map((name) => ({
        name,
        // What a new VM does to the first-contact record (a delivered key comes from state again).
        hostKeys: "first-contact",
        image,
        publicKeyPath: path.join(dir, "vm_key.pub"),
        privateKeyPath: path.join(dir, "vm_key"),
        ...(name === fixed ? { address: "127.0.0.1", sshPort: forwarder.port } : {}),
      })),
    });
    const deploy = async (image: string) => {
      writeCdktfProject(dir, ctx(image));
      return runCdktf(
        dir,
        ["deploy", "--auto-approve", ...TWIN_CDKTF_FLAGS, "--outputs-file", path.join(dir, "outputs.json")],
        { env },
      );
    };
    const terraform = (args: string[]) =>
      spawnSync("terraform", [`-chdir=${path.join(dir, "cdktf.out", "stacks", stack)}`, ...args, "-no-color"], {
        env: { ...process.env, ...env },
        encoding: "utf8",
      });
    // Not spawnSync: the fixed address's forwarder runs in this process and must go on serving the jobs.
    const terraformApply = (args: string[]) =>
      new Promise<{ code: number; output: string }>((resolve) =>
        execFile(
          "terraform",
          [`-chdir=${path.join(dir, "cdktf.out", "stacks", stack)}`, "apply", ...args, "-no-color"],
          { env: { ...process.env, ...env }, maxBuffer: 64 << 20 },
          (err, stdout, stderr) =>
            resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
        ),
      );
    const outputs = (): Record<string, string> => {
      const r = terraform(["output", "-json"]);
      return Object.fromEntries(
        Object.entries(JSON.parse(r.stdout) as Record<string, { value: string }>).map(([k, v]) => [k, v.value]),
      );
    };

    /** Each VM is a new one, its key recorded, jq installed on it, and outputs and status show its results. */
    async function expectLearnedAnew(): Promise<void> {
      // The stack's providers come straight from this test's own mirror, never through a plugin cache:
      // cdktf turns one on by default, shared by the machine, and each init from another checkout re-points
      // its entry to that checkout's twin (measured: `terraform output` after a deploy then failed with
      // "the cached package ... does not match any of the checksums recorded in the dependency lock file").
      const providers = path.join(dir, "cdktf.out", "stacks", stack, ".terraform", "providers");
      for (const [source, version] of Object.entries(twin.providers)) {
        const installed = path.join(providers, source, version);
        if (!fs.existsSync(installed)) continue; // the local target uses no sless
        for (const platform of fs.readdirSync(installed)) {
          const entry = path.join(installed, platform);
          const from = fs.lstatSync(entry).isSymbolicLink() ? path.resolve(installed, fs.readlinkSync(entry)) : entry;
          expect({ source, from }).toEqual({
            source,
            from: expect.stringMatching(new RegExp(`^(${twin.mirror}|${providers})/`)),
          });
        }
      }
      const out = outputs();
      const rows = statusRows(dir, env);
      for (const vm of [flat, fixed]) {
        const sandbox = sandboxNameOf(vm);
        const sb = getSandbox(sandbox);
        const createdAt = listSandboxes().find((s) => s.name === sandbox)?.createdAt;
        const before = seen[vm];
        if (before) {
          expect({ vm, createdAt }).not.toEqual({ vm, createdAt: before.createdAt });
          expect({ vm, hostKey: sb.hostKeySha256 }).not.toEqual({ vm, hostKey: before.hostKey });
        }
        seen[vm] = { hostKey: sb.hostKeySha256, createdAt };
        expect({ vm, recorded: out[`${vm}_host_key_sha256`] }).toEqual({ vm, recorded: sb.hostKeySha256 });
        expect({ vm, result: JSON.parse(out[`${vm}_packages_result`]) }).toMatchObject({
          vm,
          result: { status: "ok", installed: ["jq"], host_key_sha256: sb.hostKeySha256 },
        });
        expect({ vm, jq: (await dpkgStatus(sb, ["jq"])).jq }).toEqual({ vm, jq: "install ok installed" });
        expect(rows.find((r) => r.vm === vm && r.installer === "install-packages")).toMatchObject({
          status: "ok",
          hostKey: sb.hostKeySha256,
        });
      }
    }

    beforeAll(async () => {
      for (const [source, version] of Object.entries(twin.providers)) {
        const pkg = path.join(foreignCache, source, version, "linux_amd64");
        fs.mkdirSync(pkg, { recursive: true });
        const name = source.split("/").at(-1);
        fs.writeFileSync(
          path.join(pkg, `terraform-provider-${name}_v${version}`),
          "#!/bin/sh\necho another checkout's twin >&2\nexit 1\n",
          { mode: 0o755 },
        );
      }
      forwarder = await fixedAddress(sandboxNameOf(fixed));
      execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", path.join(dir, "vm_key")]);
    });

    afterAll(async () => {
      const run = await runCdktf(dir, ["destroy", "--auto-approve", ...TWIN_CDKTF_FLAGS], { env });
      for (const vm of [flat, fixed]) await stopSandbox(sandboxNameOf(vm));
      for (const vm of [flat, fixed]) removeVapp(`vm-install-${vm}`);
      forwarder?.close();
      if (run.code !== 0) throw new Error(`destroy failed:\n${run.output.slice(-3000)}`);
    }, 600_000);

    test("the first deploy learns each VM's key and installs on it", async () => {
      const run = await deploy("Ubuntu_22-20G");
      expect({ code: run.code, tail: run.code === 0 ? "" : run.output.slice(-3000) }).toEqual({ code: 0, tail: "" });
      await expectLearnedAnew();
    }, 900_000);

    test("a changed image replaces each VM: the next deploy probes the new one, records its key and installs on it", async () => {
      const run = await deploy("Ubuntu_24-20G");
      expect({ code: run.code, tail: run.code === 0 ? "" : run.output.slice(-3000) }).toEqual({ code: 0, tail: "" });
      await expectLearnedAnew();
    }, 900_000);

    test("terraform apply -replace of each VM: the same apply learns and installs the new ones", async () => {
      const r = await terraformApply([
        "-auto-approve",
        "-input=false",
        ...[flat, fixed].map((vm) => `-replace=nubes_vc_vm_v3.${vm}_vm`),
      ]);
      expect({ code: r.code, tail: r.code === 0 ? "" : r.output.slice(-3000) }).toEqual({ code: 0, tail: "" });
      await expectLearnedAnew();
    }, 900_000);

    test("each VM deleted outside Terraform: the next deploy creates, learns and installs new ones", async () => {
      for (const vm of [flat, fixed]) await stopSandbox(sandboxNameOf(vm));
      // Refreshed, the state has no VM, while the outputs (Terraform re-evaluates them only where it
      // applies) still hold the old VM's results: status goes by the state and shows none of them.
      const refresh = await terraformApply(["-refresh-only", "-auto-approve", "-input=false"]);
      expect({ code: refresh.code, tail: refresh.code === 0 ? "" : refresh.output.slice(-3000) }).toEqual({
        code: 0,
        tail: "",
      });
      const rows = statusRows(dir, env, 2);
      for (const vm of [flat, fixed]) {
        expect(rows.find((r) => r.vm === vm && r.installer === "install-packages")).toMatchObject({
          status: "not run",
          summary: expect.stringContaining(`${vm} is not in the Terraform state`),
        });
      }
      const run = await deploy("Ubuntu_24-20G");
      expect({ code: run.code, tail: run.code === 0 ? "" : run.output.slice(-3000) }).toEqual({ code: 0, tail: "" });
      await expectLearnedAnew();
      // And the VM that stays is left alone: nothing reruns.
      const again = await deploy("Ubuntu_24-20G");
      expect(again.output).toContain("No changes.");
    }, 900_000);
  });
}
