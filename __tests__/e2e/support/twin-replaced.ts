// A replaced Nubes VM in the twin, for every cause (a changed image, `terraform apply -replace`, the VM
// deleted outside Terraform): the next deploy probes the new machine, records its key and runs every
// installer on it. One suite per job target (twin-nubes-replaced-*.test.ts), so the two run side by side,
// each with the causes it is given.
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { runCdktf, writeCdktfProject } from "../../../dev/demo/project";
import { getSandbox, listSandboxes, stopSandbox } from "../../../dev/sandbox/index";
import { TWIN_CDKTF_FLAGS, twinDeployEnv } from "../../../dev/twin/deploy-env";
import { installTwin } from "../../../dev/twin/install";
import { removeVapp } from "../../../dev/twin/nubes/records";
import { sandboxNameOf } from "../../../dev/twin/nubes/vm-settings";
import { PROJECT_ROOT } from "../../../lib/entry-points";
import type { StatusRow } from "../../../lib/operator/status/status-rows";
import { tempDir } from "../../support/synth";
import { describeE2E, dpkgStatus } from "./e2e";
import { type TcpForwarder, tcpForwarder } from "./tcp-forwarder";

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

/** The ways a VM is replaced: a changed image, `terraform apply -replace`, the VM deleted outside Terraform. */
export type ReplaceCause = "image" | "replace" | "deleted";

// A replaced VM, for every cause, is a new machine with a new host key and nothing installed: the next
// deploy must probe it, record its key and run every installer on it, with the address read from
// state_out_flat and with a fixed address alike, for either job target (one file each). One stack holds
// both kinds of address, so each cause is one deploy; install-packages of one small package is the
// installer that proves it. Every cause reaches the jobs the same way, whatever their target: the VM's id
// becomes unknown, which replaces vm_generation (lib/construct/vm-installation.ts), named in each job's
// replace_triggered_by. So each cause is proven once, and each target with at least one cause (issue 31).
export function describeReplacedVm(jobTarget: "sless" | "local", causes: ReplaceCause[]): void {
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
    const causeTest = (cause: ReplaceCause, name: string, fn: () => Promise<void>, timeout: number) => {
      if (causes.includes(cause)) test(name, fn, timeout);
    };
    // The image of the last deploy: a cause other than "image" keeps it.
    let image = "Ubuntu_22-20G";
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
    const deploy = async (next = image) => {
      image = next;
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
      const run = await deploy();
      expect({ code: run.code, tail: run.code === 0 ? "" : run.output.slice(-3000) }).toEqual({ code: 0, tail: "" });
      await expectLearnedAnew();
    }, 900_000);

    causeTest(
      "image",
      "a changed image replaces each VM: the next deploy probes the new one, records its key and installs on it",
      async () => {
        const run = await deploy("Ubuntu_24-20G");
        expect({ code: run.code, tail: run.code === 0 ? "" : run.output.slice(-3000) }).toEqual({ code: 0, tail: "" });
        await expectLearnedAnew();
      },
      900_000,
    );

    causeTest(
      "replace",
      "terraform apply -replace of each VM: the same apply learns and installs the new ones",
      async () => {
        const r = await terraformApply([
          "-auto-approve",
          "-input=false",
          ...[flat, fixed].map((vm) => `-replace=nubes_vc_vm_v3.${vm}_vm`),
        ]);
        expect({ code: r.code, tail: r.code === 0 ? "" : r.output.slice(-3000) }).toEqual({ code: 0, tail: "" });
        await expectLearnedAnew();
      },
      900_000,
    );

    causeTest(
      "deleted",
      "each VM deleted outside Terraform: the next deploy creates, learns and installs new ones",
      async () => {
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
        const run = await deploy();
        expect({ code: run.code, tail: run.code === 0 ? "" : run.output.slice(-3000) }).toEqual({ code: 0, tail: "" });
        await expectLearnedAnew();
        // And the VM that stays is left alone: nothing reruns.
        const again = await deploy();
        expect(again.output).toContain("No changes.");
      },
      900_000,
    );
  });
}
