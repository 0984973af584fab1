// `cdktf deploy` end to end, cdktf.out synthesized in one folder and applied with plain terraform from a
// copy in another: state and results land beside the copy.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { runCdktf, writeCdktfProject } from "../../dev/demo/project";
import type { Sandbox } from "../../dev/sandbox/index";
import { tempDir } from "../support/synth";
import { env, host } from "./support/deploy";
import { describeE2E, dpkgStatus, sandboxPerSuite } from "./support/e2e";

describeE2E("cdktf.out travels: synthesized in one folder, deployed from a copy in another", () => {
  let sb: Sandbox;
  sandboxPerSuite((s) => (sb = s));

  test("terraform apply in the copy's stack folder runs the jobs and writes state and results there, none in the first folder", async () => {
    const parent = tempDir("travel");
    const first = path.join(parent, "first");
    const copy = path.join(parent, "copy");
    const key = path.join(parent, "keys", "vm_key");
    fs.mkdirSync(path.dirname(key));
    fs.copyFileSync(sb.privateKeyPath, key);
    fs.chmodSync(key, 0o600);
    // The key given relative to the project, as a user writes it.
    writeCdktfProject(first, {
      stackName: "e2e-travel",
      jobTarget: "local",
      installers: { packages: { packages: ["jq"] } },
      vms: [{ ...host("t", sb), privateKeyPath: "../keys/vm_key" }],
    });
    const synth = await runCdktf(first, ["synth"], { env });
    expect(synth.code).toBe(0);
    fs.cpSync(first, copy, { recursive: true });
    fs.rmSync(first, { recursive: true });
    const stackDir = path.join(copy, "cdktf.out", "stacks", "e2e-travel");
    const terraform = (...args: string[]) =>
      spawnSync("terraform", args, {
        cwd: stackDir,
        env: { ...process.env, ...env, TF_IN_AUTOMATION: "1" },
        encoding: "utf8",
      });
    expect(terraform("init", "-input=false").status).toBe(0);
    const apply = terraform("apply", "-auto-approve", "-input=false", "-no-color");
    expect(apply.stderr).toBe("");
    expect(apply.status).toBe(0);
    const outputs = JSON.parse(terraform("output", "-json").stdout);
    expect(JSON.parse(outputs.t_packages_result.value)).toMatchObject({ status: "ok" });
    expect((await dpkgStatus(sb, ["jq"])).jq).toBe("install ok installed");
    // State and results live in the copy; the first folder was never recreated.
    expect(fs.existsSync(path.join(copy, "terraform.e2e-travel.tfstate"))).toBe(true);
    expect(fs.readdirSync(path.join(copy, ".vm-install", "e2e-travel"))).toContain("t-install-packages.tfstate");
    expect(fs.existsSync(first)).toBe(false);
  }, 600000);
});
