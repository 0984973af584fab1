// npm run status / npm run check with --junit FILE, as run in a project folder: the console output and
// the exit code are those of a run without it, the file is valid JUnit, and a secret the deployed outputs
// carry never reaches it. The deployed state is a hand-written local state Terraform reads offline (the
// check's VM has no address in it, so its rows are errors without any SSH); real deploys are the e2e's.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { CONTEXT_KEY } from "../lib/construct/config/parse";
import { installerJobId, resultOutputName } from "../lib/construct/resource-names";
import { PROJECT_ROOT } from "../lib/entry-points";
import { context, tempDir } from "./support/synth";

const XSD = path.join(__dirname, "fixtures", "junit", "jenkins-junit.xsd");
const STACK = "junit-cmd";
const PASSWORD = "pg-Secret-value-42";
const haveXmllint = spawnSync("xmllint", ["--version"]).status === 0;

/** A project folder whose deployed state has web-1's packages job failed with a message naming the password. */
function project(): string {
  const dir = tempDir("junit-cmd-");
  const settings = {
    stackName: STACK,
    jobTarget: "local",
    vms: [{ name: "web-1", kind: "existing", address: "192.0.2.1" }],
    installers: { postgres: { enabled: true, passwordVariable: "pw" } },
  };
  const cdktfJson = { app: "true", context: { [CONTEXT_KEY]: context(settings) } };
  fs.writeFileSync(path.join(dir, "cdktf.json"), JSON.stringify(cdktfJson));
  const stackDir = path.join(dir, "cdktf.out", "stacks", STACK);
  fs.mkdirSync(path.join(stackDir, ".terraform"), { recursive: true });
  fs.writeFileSync(path.join(stackDir, "cdk.tf.json"), "{}");
  const output = (value: string) => ({ value, type: "string" });
  const job = (installer: string) => ({
    mode: "managed",
    type: "terraform_data",
    name: installerJobId("web-1", installer),
    provider: 'provider["terraform.io/builtin/terraform"]',
    instances: [{ schema_version: 0, attributes: { id: "1", input: null, output: null, triggers_replace: null } }],
  });
  const state = {
    version: 4,
    terraform_version: "1.11.0",
    serial: 1,
    lineage: "junit-cmd",
    outputs: {
      [resultOutputName("web-1", "packages")]: output(`install-packages failed: psql said password ${PASSWORD} <bad>`),
      [resultOutputName("web-1", "docker")]: output("skipped"),
    },
    resources: [job("packages")],
  };
  fs.writeFileSync(path.join(stackDir, "terraform.tfstate"), JSON.stringify(state));
  return dir;
}

function run(command: "status" | "check", dir: string, args: string[] = []) {
  const script = path.join(PROJECT_ROOT, "bin", `${command}.ts`);
  return spawnSync(process.execPath, ["-r", path.join(PROJECT_ROOT, "bin", "ts-register.js"), script, ...args], {
    cwd: dir,
    encoding: "utf8",
    env: { ...process.env, TF_VAR_pw: PASSWORD, NO_COLOR: "1" },
  });
}

describe.each(["status", "check"] as const)("npm run %s -- --junit FILE", (command) => {
  const dir = project();
  const plain = run(command, dir);
  const report = path.join(dir, "out.xml");
  const withJunit = run(command, dir, ["--junit", report]);

  test("the console output and the exit code are as without it", () => {
    // status: an installer failed (attention); check: a check could not run (error). docs/exit-codes.md.
    expect(plain.status).toBe(command === "status" ? 2 : 1);
    expect(withJunit.status).toBe(plain.status);
    expect(withJunit.stdout).toBe(plain.stdout);
    expect(withJunit.stderr).toContain(`JUnit report written to ${report}`);
  });

  test("the report: one case per VM x installer, valid JUnit, no secret, mode 0644", () => {
    const xml = fs.readFileSync(report, "utf8");
    expect(xml.match(/<testcase /g)).toHaveLength(3);
    expect(xml).toContain('<testcase classname="web-1" name="install-docker"');
    expect(xml).not.toContain(PASSWORD);
    expect(fs.statSync(report).mode & 0o777).toBe(0o644);
    if (command === "status") expect(xml).toContain("install-packages failed: psql said password");
    if (haveXmllint) {
      const lint = spawnSync("xmllint", ["--noout", "--schema", XSD, report], { encoding: "utf8" });
      expect(lint.stderr).toMatch(/validates/);
      expect(lint.status).toBe(0);
    } else if (process.env.CI === "true") throw new Error("xmllint is missing: bash bin/setup installs libxml2-utils");
  });

  test("a path that cannot be written is named, with what to do", () => {
    const bad = path.join(dir, "no-such-folder", "r.xml");
    const r = run(command, dir, ["--junit", bad]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`cannot write the JUnit report to ${bad} (ENOENT)`);
  });
});
