// `cdktf deploy` end to end, two VMs in one stack: each VM's jobs in order, different VMs' jobs in
// parallel, a change on one VM reruns only its jobs.
import { runCdktf } from "../../dev/demo/project";
import type { Sandbox } from "../../dev/sandbox/index";
import { tempDir } from "../support/synth";
import { deploy, env, host, indexOf, jobsRun } from "./support/deploy";
import { bootFrom, describeE2E, dpkgStatus } from "./support/e2e";
import { postgresByJob } from "./support/snapshots";

describeE2E("cdktf deploy, local target, two VMs", () => {
  let a: Sandbox;
  let b: Sandbox;
  beforeAll(async () => {
    // PostgreSQL is there already (deploy.test and plain-cdktf install it by a deploy): the subject here is
    // the jobs' order, and its job is the second in each VM's chain either way.
    const pg = await postgresByJob();
    [a, b] = await Promise.all([bootFrom(pg), bootFrom(pg)]);
  }, 900000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  }, 120000);

  test("both get their software; different VMs' jobs run in parallel, one VM's in order; a change on one VM reruns only its jobs", async () => {
    const dir = tempDir("deploy-two");
    const ctx = (aPackages: string[]) => ({
      stackName: "e2e-two",
      jobTarget: "local",
      installers: { packages: { packages: ["jq"] }, postgres: { enabled: true, passwordVariable: "pg_password" } },
      vms: [{ ...host("a", a), installers: { packages: { packages: aPackages } } }, host("b", b)],
    });
    const run = await deploy(dir, "e2e-two", ctx(["jq"]));
    expect(run.code).toBe(0);
    expect(jobsRun(run)).toEqual(["a_packages", "a_postgres", "b_packages", "b_postgres"]);
    for (const vm of ["a", "b"]) {
      expect(JSON.parse(run.outputs[`${vm}_packages_result`]).status).toBe("ok");
      expect(JSON.parse(run.outputs[`${vm}_postgres_result`]).status).toBe("ok");
      // In order on one VM.
      expect(indexOf(run, new RegExp(`${vm}_postgres(?: \\([^)]*\\))?: Creating`))).toBeGreaterThan(
        indexOf(run, new RegExp(`${vm}_packages(?: \\([^)]*\\))?: Creation complete`)),
      );
    }
    // In parallel across VMs: both first jobs start before either finishes.
    const firstDone = Math.min(
      indexOf(run, /a_packages(?: \([^)]*\))?: Creation complete/),
      indexOf(run, /b_packages(?: \([^)]*\))?: Creation complete/),
    );
    expect(indexOf(run, /a_packages(?: \([^)]*\))?: Creating/)).toBeLessThan(firstDone);
    expect(indexOf(run, /b_packages(?: \([^)]*\))?: Creating/)).toBeLessThan(firstDone);
    for (const sb of [a, b])
      expect(await dpkgStatus(sb, ["jq", "postgresql"])).toEqual({
        jq: "install ok installed",
        postgresql: "install ok installed",
      });

    const changed = await deploy(dir, "e2e-two", ctx(["jq", "unzip"]));
    expect(changed.code).toBe(0);
    expect(jobsRun(changed)).toEqual(["a_packages", "a_postgres"]);
    expect((await dpkgStatus(a, ["unzip"])).unzip).toBe("install ok installed");
    expect(await dpkgStatus(b, ["unzip"])).toEqual({});
    expect((await runCdktf(dir, ["destroy", "--auto-approve"], { env })).code).toBe(0);
  }, 900000);
});
