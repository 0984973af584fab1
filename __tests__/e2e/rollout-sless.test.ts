// A rollout with a failure budget on sless (the twin's sless_job, three sandbox VMs as existing hosts): a job
// in phase Failed no longer fails the apply by itself, its VM's next installer does not reach the VM, the
// failure is listed and the rollout goes on; over the budget the gate stops it.
import * as fs from "node:fs";
import * as path from "node:path";
import { type CdktfRun, existingHost, runCdktf, writeCdktfProject } from "../../dev/demo/project";
import { type Sandbox, startSandbox } from "../../dev/sandbox/index";
import { TWIN_CDKTF_FLAGS, twinDeployEnv } from "../../dev/twin/deploy-env";
import { installTwin } from "../../dev/twin/install";
import { tempDir } from "../support/synth";
import { describeE2E, dpkgStatus } from "./support/e2e";

const STACK = "e2e-waves-sless";
const VMS = ["s1", "s2", "s3"];

/** sless jobs created in this run, by logical id. */
const jobsCreated = (run: CdktfRun) =>
  [
    ...new Set([...run.output.matchAll(/sless_job\.([a-z0-9_]+)(?: \([^)]*\))?: Creation complete/g)].map((m) => m[1])),
  ].sort();

describeE2E("a rollout with a failure budget, sless jobs on the twin, three VMs", () => {
  const dir = tempDir("waves-sless");
  const twin = installTwin(path.join(dir, ".twin"));
  const env = twinDeployEnv(twin);
  let sbs: Sandbox[] = [];
  // s2's package list is broken (phase Failed), and only s2 runs a second installer, which must not reach it.
  const ctx = (maxFailures: number, runId = 1) => ({
    stackName: STACK,
    runId,
    rollout: { waves: [1, 2], maxFailures },
    installers: { packages: { packages: ["jq"] } },
    vms: VMS.map((name, i) => ({
      ...existingHost(name, sbs[i]),
      ...(name === "s2"
        ? {
            installers: {
              packages: { packages: ["vm-install-no-such-package"] },
              docker: { enabled: true, channel: "distro", compose: false },
            },
          }
        : {}),
    })),
  });
  const deploy = async (context: unknown) => {
    writeCdktfProject(dir, context);
    const outputsFile = path.join(dir, "outputs.json");
    fs.rmSync(outputsFile, { force: true });
    const run = await runCdktf(dir, ["deploy", "--auto-approve", ...TWIN_CDKTF_FLAGS, "--outputs-file", outputsFile], {
      env,
    });
    const outputs = run.code === 0 ? JSON.parse(fs.readFileSync(outputsFile, "utf8"))[STACK] : {};
    return { ...run, outputs, words: run.output.replace(/[\s│]+/g, " ") };
  };

  beforeAll(async () => {
    sbs = await Promise.all(VMS.map(() => startSandbox()));
  }, 600_000);
  afterAll(async () => {
    await Promise.all(sbs.map((sb) => sb.stop()));
  }, 300_000);

  test("maxFailures 1: s2 fails in phase Failed, its docker job gets no address, the rollout completes", async () => {
    const run = await deploy(ctx(1));
    expect(run.code).toBe(0);
    expect(jobsCreated(run)).toEqual(["s1_packages", "s2_docker", "s2_packages", "s3_packages"]);
    expect(run.outputs.rollout_failures).toEqual({
      s2: expect.stringMatching(/^s2-install-packages: install-packages failed .*vm-install-no-such-package/),
    });
    // The job after the failed one ran on the platform, refused before any SSH: no address.
    expect(run.outputs.s2.s2_docker_result).toMatch(/VM_IP/);
    expect(await dpkgStatus(sbs[1], ["docker.io"])).toEqual({});
    for (const i of [0, 2]) expect(await dpkgStatus(sbs[i], ["jq"])).toEqual({ jq: "install ok installed" });
  }, 900_000);

  test("maxFailures 0 on sless: the failed job stops the deploy by itself, naming its phase and message", async () => {
    const run = await deploy(ctx(0, 2));
    expect(run.code).not.toBe(0);
    expect(run.words).toMatch(/sless job s2-install-packages \(s2_packages\) ended in phase Failed, not Succeeded/);
  }, 900_000);
});
