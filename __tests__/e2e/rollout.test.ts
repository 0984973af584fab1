// A rollout in waves end to end: six sandbox VMs as existing hosts, the local target, install-packages of one
// small package. A bad package list stops at the canary with the rest untouched; fixed, the waves roll in
// order; a VM broken by hand is tolerated within maxFailures and stops its wave without; a rerun of one VM
// replaces only its jobs.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { parseRerunArgs, rerunTargets } from "../../bin/rerun";
import { type CdktfRun, existingHost, readOutputs, runCdktf, writeCdktfProject } from "../../dev/demo/project";
import { type Sandbox, startSandbox } from "../../dev/sandbox/index";
import { parseConfig } from "../../lib/construct/config/parse";
import { PROJECT_ROOT } from "../../lib/entry-points";
import { tempDir } from "../support/synth";
import { describeE2E, dpkgStatus, root } from "./support/e2e";

const STACK = "e2e-waves";
const NO_SUCH_PACKAGE = "vm-install-no-such-package";
const VMS = ["w1", "w2", "w3", "w4", "w5", "w6"];
const WAVES = [["w1"], ["w2", "w3"], ["w4", "w5", "w6"]];

/** Jobs whose terraform_data was (re)created in this run, by logical id (outcomes and gates are not jobs). */
function jobsRun(run: CdktfRun): string[] {
  const created = [...run.output.matchAll(/terraform_data\.([a-z0-9_]+)(?: \([^)]*\))?: Creating\.\.\./g)];
  return [...new Set(created.map((m) => m[1]).filter((id) => !/_outcome$|^rollout_wave_/.test(id)))].sort();
}

/** Where in the output a job's resource reached `event` ("Creating" or "Creation complete"). */
function when(run: CdktfRun, vm: string, event: string): number {
  const m = new RegExp(`terraform_data\\.${vm}_packages(?: \\([^)]*\\))?: ${event}`).exec(run.output);
  if (!m) throw new Error(`${vm}_packages: no "${event}" in the deploy output:\n${run.output.slice(-3000)}`);
  return m.index;
}

/** The output as one line: Terraform wraps its messages in boxes. */
const words = (run: CdktfRun) => run.output.replace(/[\s│]+/g, " ");

describeE2E("a rollout in waves, local target, six VMs", () => {
  let sbs: Sandbox[] = [];
  let dir: string;
  const host = (i: number) => existingHost(VMS[i], sbs[i]);
  const ctx = (patch: { packages: string[]; maxFailures?: number; runId?: number }) => ({
    stackName: STACK,
    jobTarget: "local",
    runId: patch.runId ?? 1,
    rollout: { waves: [1, 2, 3], maxFailures: patch.maxFailures ?? 0 },
    installers: { packages: { packages: patch.packages } },
    vms: VMS.map((_, i) => host(i)),
  });
  const deploy = async (patch: Parameters<typeof ctx>[0]) => {
    writeCdktfProject(dir, ctx(patch));
    const run = await runCdktf(dir, ["deploy", "--auto-approve", "--outputs-file", path.join(dir, "outputs.json")]);
    return { ...run, outputs: run.code === 0 ? readOutputs(dir, STACK) : {} };
  };
  const dpkgDigests = () => Promise.all(sbs.map((sb) => root(sb, "sha256sum /var/lib/dpkg/status")));
  const node = (script: string, args: string[]) =>
    spawnSync(process.execPath, ["-r", path.join(PROJECT_ROOT, "bin", "ts-register.js"), script, ...args], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, FORCE_COLOR: "", NO_COLOR: "1" },
    });

  beforeAll(async () => {
    dir = tempDir("waves");
    // Booted together: six in turn would take most of the suite's time.
    sbs = await Promise.all(VMS.map(() => startSandbox()));
  }, 900_000);
  afterAll(async () => {
    await Promise.all(sbs.map((sb) => sb.stop()));
  }, 300_000);

  test("a broken package list: the canary fails, the deploy stops naming it, the other five are untouched", async () => {
    const before = await dpkgDigests();
    const run = await deploy({ packages: [NO_SUCH_PACKAGE] });
    expect(run.code).not.toBe(0);
    expect(jobsRun(run)).toEqual(["w1_packages"]);
    expect(words(run)).toMatch(new RegExp(`\\[w1-install-packages\\] Failed: .*${NO_SUCH_PACKAGE}`));
    const after = await dpkgDigests();
    expect(after.slice(1)).toEqual(before.slice(1));

    const status = node(path.join(PROJECT_ROOT, "bin", "status.ts"), ["--json"]);
    const rows = JSON.parse(status.stdout) as { vm: string; installer: string; wave: number; status: string }[];
    const packagesRows = rows.filter((r) => r.installer === "install-packages");
    expect(packagesRows.map((r) => [r.wave, r.vm, r.status])).toEqual([
      [1, "w1", "failed"],
      [2, "w2", "not reached"],
      [2, "w3", "not reached"],
      [3, "w4", "not reached"],
      [3, "w5", "not reached"],
      [3, "w6", "not reached"],
    ]);
    expect(node(path.join(PROJECT_ROOT, "bin", "status.ts"), []).stdout.split("\n")[0]).toMatch(/^WAVE +VM +/);
  }, 900_000);

  test("fixed: the next deploy rolls all three waves, each after the one before has finished", async () => {
    const run = await deploy({ packages: ["jq"] });
    expect(run.code).toBe(0);
    expect(jobsRun(run)).toEqual(VMS.map((vm) => `${vm}_packages`));
    for (let w = 1; w < WAVES.length; w++) {
      const lastDone = Math.max(...WAVES[w - 1].map((vm) => when(run, vm, "Creation complete")));
      for (const vm of WAVES[w]) expect(when(run, vm, "Creating")).toBeGreaterThan(lastDone);
    }
    for (const sb of sbs) expect(await dpkgStatus(sb, ["jq"])).toEqual({ jq: "install ok installed" });
  }, 900_000);

  test("one VM broken by hand (its apt sources removed), maxFailures 1: the rollout completes, its failure listed", async () => {
    await root(sbs[2], "mkdir -p /root/apt-saved && cp -a /etc/apt/sources.list.d /root/apt-saved/");
    await root(sbs[2], "rm -f /etc/apt/sources.list /etc/apt/sources.list.d/* && rm -rf /var/lib/apt/lists/*");
    const run = await deploy({ packages: ["jq", "tree"], maxFailures: 1 });
    expect(run.code).toBe(0);
    expect(jobsRun(run)).toEqual(VMS.map((vm) => `${vm}_packages`));
    const outputs = JSON.parse(fs.readFileSync(path.join(dir, "outputs.json"), "utf8"))[STACK];
    expect(outputs.rollout_failures).toEqual({
      w3: expect.stringMatching(/^w3-install-packages: tree was not installed/),
    });
    for (const [i, sb] of sbs.entries()) {
      expect(await dpkgStatus(sb, ["tree"])).toEqual(i === 2 ? {} : { tree: "install ok installed" });
    }
  }, 900_000);

  test("the same VM broken, maxFailures 0: the rollout stops at its wave, naming it", async () => {
    const run = await deploy({ packages: ["jq", "tree"], runId: 2 });
    expect(run.code).not.toBe(0);
    expect(jobsRun(run)).toEqual(["w1_packages", "w2_packages", "w3_packages"]);
    expect(words(run)).toMatch(
      /rollout stopped at wave 2 of 3: 1 of 2 VMs failed, .*: w3 \(w3-install-packages: tree was not installed/,
    );
  }, 900_000);

  test("repaired by hand, npm run rerun of that VM passes its wave's gate and the rollout goes on", async () => {
    await root(sbs[2], "cp -a /root/apt-saved/sources.list.d/. /etc/apt/sources.list.d/");
    writeCdktfProject(dir, ctx({ packages: ["jq", "tree"], runId: 2 }));
    const rerun = node(path.join(PROJECT_ROOT, "bin", "rerun.ts"), ["w3", "-auto-approve", "-no-color"]);
    expect(rerun.stderr).toMatch(/rerun: replacing terraform_data\.w3_packages/);
    expect(rerun.status).toBe(0);
    const created = [...rerun.stdout.matchAll(/terraform_data\.(w\d)_packages: Creating\.\.\./g)].map((m) => m[1]);
    expect(created.sort()).toEqual(["w3", "w4", "w5", "w6"]);
    expect(await dpkgStatus(sbs[2], ["tree"])).toEqual({ tree: "install ok installed" });
  }, 900_000);

  test("rerun of one VM: terraform plan replaces exactly its jobs; npm run rerun runs only them", async () => {
    const config = parseConfig(ctx({ packages: ["jq", "tree"], runId: 2 }));
    const targets = rerunTargets(config, parseRerunArgs(["w2"]));
    expect(targets).toEqual(["terraform_data.w2_packages"]);
    const stackDir = path.join(dir, "cdktf.out", "stacks", STACK);
    const plan = spawnSync(
      "terraform",
      ["plan", "-input=false", "-no-color", "-lock=false", ...targets.map((t) => `-replace=${t}`)],
      { cwd: stackDir, encoding: "utf8", env: { ...process.env, CHECKPOINT_DISABLE: "1" } },
    );
    expect(plan.status).toBe(0);
    const changed = [...plan.stdout.matchAll(/^ {2}# (\S+) (?:will|must) be (\S+)/gm)].map((m) => m[1]);
    // The job and its outcome (replaced with it); of the rest only the gates that judge it, nothing of another VM.
    expect(changed.filter((a) => !/^terraform_data\.rollout_wave_\d$/.test(a)).sort()).toEqual([
      "terraform_data.w2_packages",
      "terraform_data.w2_packages_outcome",
    ]);

    const before = await dpkgDigests();
    const logs = () => fs.readdirSync(path.join(dir, ".vm-install", STACK, "logs")).sort();
    const logsBefore = logs();
    const rerun = node(path.join(PROJECT_ROOT, "bin", "rerun.ts"), ["w2", "-auto-approve"]);
    expect(rerun.status).toBe(0);
    const newLogs = logs().filter((l) => !logsBefore.includes(l));
    expect(newLogs.map((l) => l.replace(/-\d{8}T.*$/, ""))).toEqual(["w2-install-packages"]);
    expect(await dpkgDigests()).toEqual(before);
    // Declarative: the next deploy has nothing left to do.
    const again = await deploy({ packages: ["jq", "tree"], runId: 2 });
    expect(again.code).toBe(0);
    expect(jobsRun(again)).toEqual([]);
  }, 900_000);
});
