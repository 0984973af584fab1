// The production shape of the stack (a nubes VM, sless jobs, all three installers), unchanged, deployed
// through real `cdktf deploy` against the local twin of Nubes and sless: deployed, deployed again,
// rerun, failed, repaired and destroyed. Its VM upgrades its packages at first boot (the user's own
// cloud-init), so apt is still busy when sshd first answers, as on a fresh cloud VM.

import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { type CdktfRun, outputWords, readOutputs, runCdktf, writeCdktfProject } from "../../dev/demo/project";
import { getSandbox, listSandboxes } from "../../dev/sandbox/index";
import { TWIN_CDKTF_FLAGS, twinDeployEnv } from "../../dev/twin/deploy-env";
import { installTwin } from "../../dev/twin/install";
import { readVapp } from "../../dev/twin/nubes/records";
import { sandboxNameOf } from "../../dev/twin/nubes/vm-settings";
import { slessJobLog } from "../../dev/twin/sless/sless-job";
import { hostKeyFile, readHostKeyFile } from "../../lib/construct/delivered-host-keys";
import { resultsFolder } from "../../lib/construct/jobs/secret-trigger";
import { tempDir } from "../support/synth";
import { describeE2E } from "./support/e2e";

const STACK = "e2e-twin";

/** sless jobs (re)created in this run, in the order their creation completed. */
function jobsCompleted(run: CdktfRun): string[] {
  return [...run.output.matchAll(/sless_job\.([a-z0-9_]+)(?: \([^)]*\))?: Creation complete/g)].map((m) => m[1]);
}

/** A failed deploy in CI said only "Expected: 0, Received: 1": say what cdktf and the jobs said. */
function expectExit(run: CdktfRun, code: number): void {
  if (run.code !== code)
    throw new Error(`cdktf exited ${run.code}, not ${code}:\n${outputWords(run, STACK).slice(-4000)}`);
}

function indexOf(run: CdktfRun, pattern: RegExp): number {
  const m = pattern.exec(run.output);
  if (!m) throw new Error(`not in the deploy output: ${pattern}\n${run.output.slice(-3000)}`);
  return m.index;
}

describeE2E("cdktf deploy of the production stack against the twin of Nubes and sless", () => {
  const dir = tempDir("twin-deploy");
  const vm = `tw${randomBytes(3).toString("hex")}`;
  const sandbox = sandboxNameOf(vm);
  const twin = installTwin(path.join(dir, ".twin"));
  const env = { ...twinDeployEnv(twin), TF_VAR_pg_password: "a twin password, long enough" };
  const ctx = (patch: { runId?: number; packages?: string[] } = {}) => ({
    stackName: STACK,
    runId: patch.runId ?? 1,
    nubes: { vdcUid: "twin-vdc", nsxtUid: "twin-nsxt", deleteMode: "delete" },
    installers: {
      packages: { enabled: true, packages: patch.packages ?? ["git", "jq"] },
      docker: { enabled: true, channel: "distro", verify: "daemon", compose: false },
      postgres: { enabled: true, passwordVariable: "pg_password" },
    },
    vms: [
      {
        name: vm,
        user: "deployer",
        publicKeyPath: path.join(dir, "vm_key.pub"),
        privateKeyPath: path.join(dir, "vm_key"),
        cloudInit: path.join(dir, "first-boot.yaml"),
      },
    ],
  });
  /** The lines of every run of one of this VM's jobs the twin kept, oldest first. */
  const jobLogs = (handler: string): string[] => {
    const folder = path.dirname(slessJobLog("x"));
    return fs
      .readdirSync(folder)
      .filter((f) => f.startsWith(`${vm}-${handler}-`))
      .map((f) => path.join(folder, f))
      .sort((a, b) => fs.statSync(a).mtimeMs - fs.statSync(b).mtimeMs)
      .map((f) => fs.readFileSync(f, "utf8"));
  };
  const cdktf = async (command: "deploy" | "destroy", context: unknown) => {
    writeCdktfProject(dir, context);
    const run = await runCdktf(
      dir,
      [command, "--auto-approve", ...TWIN_CDKTF_FLAGS, "--outputs-file", path.join(dir, "outputs.json")],
      { env },
    );
    return { ...run, outputs: run.code === 0 && command === "deploy" ? readOutputs(dir, STACK) : {} };
  };

  beforeAll(() => {
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "twin-e2e", "-f", path.join(dir, "vm_key")]);
    fs.writeFileSync(path.join(dir, "first-boot.yaml"), "#cloud-config\npackage_upgrade: true\n");
  });

  afterAll(async () => {
    // A failed test may leave the VM: remove it as `destroy` would.
    if (listSandboxes().some((s) => s.name === sandbox)) await getSandbox(sandbox).stop();
  });

  test("deploy: vApp, a VM booted with the configured user and key and the delivered host key, three jobs in order, outputs", async () => {
    const run = await cdktf("deploy", ctx());
    expectExit(run, 0);
    // No probe: the first job already requires the key the stack delivered through cloud_init.
    expect(jobsCompleted(run)).toEqual([`${vm}_packages`, `${vm}_docker`, `${vm}_postgres`]);
    expect(indexOf(run, new RegExp(`sless_job\\.${vm}_packages[^\\n]*: Creating`))).toBeGreaterThan(
      indexOf(run, /nubes_vc_vm_v3\.[a-z0-9_]+[^\n]*: Creation complete/),
    );
    expect(indexOf(run, new RegExp(`sless_job\\.${vm}_docker[^\\n]*: Creating`))).toBeGreaterThan(
      indexOf(run, new RegExp(`sless_job\\.${vm}_packages[^\\n]*: Creation complete`)),
    );

    const sb = getSandbox(sandbox);
    expect(run.outputs[`${vm}_address`]).toBe(sb.address);
    const pkgs = JSON.parse(run.outputs[`${vm}_packages_result`]);
    const delivered = readHostKeyFile(hostKeyFile(resultsFolder(dir, STACK), vm))!.sha256;
    expect(pkgs).toMatchObject({ status: "ok", installed: ["git", "jq"], host_key_sha256: delivered });
    expect(sb.hostKeySha256).toBe(delivered);
    expect(JSON.parse(run.outputs[`${vm}_docker_result`])).toMatchObject({
      status: "ok",
      channel: "distro",
      users_added: ["deployer"],
    });
    expect(JSON.parse(run.outputs[`${vm}_postgres_result`])).toMatchObject({ status: "ok", db_name: "myapp" });
    // The VM accepts exactly the configured key for the configured user.
    const authorized = await sb.rootExec("cat /home/deployer/.ssh/authorized_keys");
    expect(authorized.stdout.trim()).toBe(fs.readFileSync(path.join(dir, "vm_key.pub"), "utf8").trim());
    expect(readVapp(`vm-install-${vm}`)).toMatchObject({
      vdc_uid: "twin-vdc",
      nsxt_uid: "twin-nsxt",
      status: "running",
    });

    // The first job found cloud-init upgrading the VM: it waited for it, naming cloud-init's own apt as
    // the holder of apt's lock, instead of failing on the lock; cloud-init ended well and nothing is left.
    const [first] = jobLogs("install-packages");
    expect(first).toContain("waiting for cloud-init to finish the first boot");
    expect(first).toMatch(
      /apt lock: .*is held by pid \d+ \(apt-get [^;)]*(upgrade|update)[^;)]*; unit cloud-final\.service\)/,
    );
    expect((await sb.rootExec("cloud-init status")).stdout).toMatch(/status: done/);
    expect((await sb.rootExec("dpkg --audit")).stdout).toBe("");
    expect((await sb.rootExec("apt-get -s -o Debug::NoLocking=1 dist-upgrade")).stdout).toMatch(
      /0 upgraded, 0 newly installed/,
    );
  }, 600_000);

  test("deploy again unchanged: nothing changes", async () => {
    const before = readOutputs(dir, STACK);
    const run = await cdktf("deploy", ctx());
    expectExit(run, 0);
    expect(run.output).toContain("No changes.");
    expect(jobsCompleted(run)).toEqual([]);
    expect(run.outputs).toEqual(before);
  }, 300_000);

  test("a raised runId reruns the jobs in order on the same VM", async () => {
    const address = readOutputs(dir, STACK)[`${vm}_address`];
    const run = await cdktf("deploy", ctx({ runId: 2 }));
    expectExit(run, 0);
    expect(jobsCompleted(run)).toEqual([`${vm}_packages`, `${vm}_docker`, `${vm}_postgres`]);
    expect(run.output).not.toMatch(/nubes_vc_vm_v3[^\n]*: Creating/);
    expect(run.outputs[`${vm}_address`]).toBe(address);
    expect(JSON.parse(run.outputs[`${vm}_packages_result`])).toMatchObject({
      installed: [],
      already_installed: ["git", "jq"],
    });
  }, 600_000);

  test("a failing job (only unknown packages): phase Failed in the twin, the deploy fails naming the job and its message; the fix deploys", async () => {
    const failed = await cdktf("deploy", ctx({ runId: 2, packages: ["zz-no-such-package"] }));
    expect(failed.code).not.toBe(0);
    // Terraform wraps the error message to the terminal's width, and cdktf prefixes the wrapped lines.
    const said = outputWords(failed, STACK);
    expect(said).toContain(
      `sless job ${vm}-install-packages (${vm}_packages) ended in phase Failed, not Succeeded: install-packages failed`,
    );
    expect(said).toMatch(/zz-no-such-package: unknown package/);
    // The jobs after it did not run.
    expect(failed.output).not.toMatch(new RegExp(`sless_job\\.${vm}_docker[^\\n]*: Creating`));

    const fixed = await cdktf("deploy", ctx({ runId: 2, packages: ["git", "jq", "unzip"] }));
    expectExit(fixed, 0);
    expect(JSON.parse(fixed.outputs[`${vm}_packages_result`])).toMatchObject({ status: "ok", installed: ["unzip"] });
    expect(jobsCompleted(fixed)).toEqual([`${vm}_packages`, `${vm}_docker`, `${vm}_postgres`]);
  }, 600_000);

  test("destroy with delete_mode delete removes the sandbox and the vApp", async () => {
    const run = await cdktf("destroy", ctx({ runId: 2, packages: ["git", "jq", "unzip"] }));
    expectExit(run, 0);
    expect(listSandboxes().map((s) => s.name)).not.toContain(sandbox);
    expect(readVapp(`vm-install-${vm}`)).toBeUndefined();
  }, 300_000);
});
