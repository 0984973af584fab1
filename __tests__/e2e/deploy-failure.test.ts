// `cdktf deploy` end to end, an installer that fails: the deploy fails with the handler's own message, and
// once fixed the next deploy succeeds and leaves nothing to do.
import { runCdktf } from "../../dev/demo/project";
import type { Sandbox } from "../../dev/sandbox/index";
import { tempDir } from "../support/synth";
import { deploy, env, host, jobsRun } from "./support/deploy";
import { describeE2E, sandboxPerSuite } from "./support/e2e";

describeE2E("cdktf deploy, local target, a failing installer", () => {
  let sb: Sandbox;
  sandboxPerSuite((s) => (sb = s));

  test("an unknown-only package list fails the deploy with the handler's message; fixed, the next deploy succeeds", async () => {
    const dir = tempDir("deploy-fail");
    const ctx = (packages: string[]) => ({
      stackName: "e2e-fail",
      jobTarget: "local",
      installers: { packages: { packages } },
      vms: [host("f", sb)],
    });
    const bad = await deploy(dir, "e2e-fail", ctx(["no-such-package-xyz"]));
    expect(bad.code).not.toBe(0);
    expect(bad.output).toContain("[f-install-packages] Failed:");
    expect(bad.output).toMatch(/no-such-package-xyz/);
    expect(bad.output).toContain("local-exec provisioner error");

    const good = await deploy(dir, "e2e-fail", ctx(["jq"]));
    expect(good.code).toBe(0);
    expect(jobsRun(good)).toEqual(["f_packages"]);
    expect(JSON.parse(good.outputs.f_packages_result).status).toBe("ok");
    // No broken state: a third deploy has nothing to do.
    const again = await deploy(dir, "e2e-fail", ctx(["jq"]));
    expect(again.code).toBe(0);
    expect(jobsRun(again)).toEqual([]);
    expect((await runCdktf(dir, ["destroy", "--auto-approve"], { env })).code).toBe(0);
  }, 600000);
});
