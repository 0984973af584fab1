// A job the stack runs (--name) that cannot start fails as a job: its Failed result in the result file and
// one stderr line naming the job and the cdktf.json setting at fault, never this command's usage text,
// which inside Terraform's provisioner error told a deployer to run a command they never typed.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_ROOT } from "../../lib/entry-points";
import { JOB_ENV_VARS } from "../../lib/jobs/invoke-args";
import { cleanupFixtures, jobDir, tempDir } from "./fixtures";

afterAll(cleanupFixtures);

function invoke(args: string[], extraEnv: Record<string, string> = {}) {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of JOB_ENV_VARS) delete env[name];
  const r = spawnSync(process.execPath, ["-r", "./bin/ts-register.js", "bin/invoke.ts", ...args], {
    cwd: PROJECT_ROOT,
    env: { ...env, ...extraEnv },
    encoding: "utf8",
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const SETTING = "vms[db].privateKeyPath (vm_key)";

describe("a job the stack runs that cannot start", () => {
  test("a missing key file: exit 1, one line naming the job, the setting and what to do, the result recorded", () => {
    const dir = tempDir();
    const missing = path.join(dir, "vm_key");
    const result = path.join(dir, "results", "db-install-packages.tfstate");
    const job = jobDir("exports.install = async () => ({});");
    const r = invoke(
      ["--dir", job, "--name", "db-install-packages", "--ssh-key-file", missing, "--result-tfstate", result],
      { SSH_KEY_SETTING: SETTING },
    );
    expect(r.code).toBe(1);
    const line = `[db-install-packages] Failed: ${SETTING}: ${missing} does not exist; make it with ssh-keygen -t ed25519 -N '' -f ${missing}, or give the VM's login key there instead`;
    expect(r.stderr).toBe(`${line}\n`);
    expect(r.stdout + r.stderr).not.toMatch(/usage|--ssh-key-file/);
    const state = JSON.parse(fs.readFileSync(result, "utf8"));
    expect(state.outputs.phase.value).toBe("Failed");
    expect(state.outputs.message.value).toBe(line.slice("[db-install-packages] Failed: ".length));
    expect(fs.statSync(path.dirname(result)).mode & 0o777).toBe(0o700);
  });

  test("a person at the command line (no --name) still gets the usage error, naming the option", () => {
    const r = invoke(["--dir", jobDir("exports.install = async () => ({});"), "--ssh-key-file", "/nonexistent/key"]);
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(/--ssh-key-file \/nonexistent\/key: \/nonexistent\/key does not exist/);
    expect(r.stderr).toContain("usage: npm run invoke");
  });
});
