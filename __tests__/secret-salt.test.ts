// The secret triggers' salt is the deployment's own (issue 32 finding 6): random, made once, kept in the
// Terraform state; two deployments with the same stack name, backend, VM and password get different triggers,
// while every run and every working copy of one deployment keeps its trigger. Through bin/cdktf and real
// Terraform on the synthesized stack (offline: the local target needs only built-ins).
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { writeCdktfProject } from "../dev/demo/project";
import { deploymentSalt, saltInState } from "../lib/construct/jobs/secret-salt";
import { ENTRY_POINTS } from "../lib/entry-points";
import { tempDir, testKeyPair } from "./support/synth";

const PASSWORD = "the same password, long";
/** Two projects with every default alike: what used to give two deployments the same salt. */
const project = {
  jobTarget: "local",
  installers: { postgres: { enabled: true, passwordVariable: "pg_password" } },
  vms: [{ name: "db", kind: "existing", address: "192.0.2.1", privateKeyPath: testKeyPair().privateKeyPath }],
};
const RESULTS = path.join(".vm-install", "vm-install");
const TRIGGER = path.join(RESULTS, "db-install-postgres.secret-trigger");
const SALT = path.join(RESULTS, "deployment-salt");
const STATE = "terraform.vm-install.tfstate";

function env(): NodeJS.ProcessEnv {
  const rc = path.join(tempDir("tfrc"), "terraformrc");
  fs.writeFileSync(rc, "");
  return {
    ...process.env,
    TF_CLI_CONFIG_FILE: rc,
    CHECKPOINT_DISABLE: "1",
    TF_IN_AUTOMATION: "1",
    TF_VAR_pg_password: PASSWORD,
  };
}

/** bin/cdktf synth in `dir` (which writes the salt and the triggers first), the project written there if new. */
function synth(dir: string): void {
  if (!fs.existsSync(path.join(dir, "cdktf.json"))) writeCdktfProject(dir, project);
  const run = spawnSync("bash", [ENTRY_POINTS.cdktfWrapper, "synth"], { cwd: dir, env: env(), encoding: "utf8" });
  expect({ status: run.status, stderr: run.stderr.slice(-2000) }).toEqual({ status: 0, stderr: expect.any(String) });
}

/** Terraform on the synthesized stack, only the salt's record targeted (no job runs). */
function terraform(dir: string, args: string[]) {
  const cwd = path.join(dir, "cdktf.out", "stacks", "vm-install");
  if (!fs.existsSync(path.join(cwd, ".terraform")))
    execFileSync("terraform", ["init", "-input=false"], { cwd, env: env(), stdio: "pipe" });
  const run = spawnSync(
    "terraform",
    [...args, "-input=false", "-no-color", "-target=terraform_data.vm_install_secret_salt"],
    {
      cwd,
      env: env(),
      encoding: "utf8",
    },
  );
  return { status: run.status, output: `${run.stdout}${run.stderr}`.replace(/\s+/g, " ") };
}

const read = (dir: string, file: string) => fs.readFileSync(path.join(dir, file), "utf8");

describe("a salt per deployment", () => {
  const first = tempDir("salt-a");
  const second = tempDir("salt-b");

  test("two deployments with equal settings and passwords get different salts and triggers; each is 64 hex, 0600", () => {
    synth(first);
    synth(second);
    expect(read(first, TRIGGER)).not.toBe(read(second, TRIGGER));
    for (const dir of [first, second]) {
      expect(read(dir, SALT)).toMatch(/^[0-9a-f]{64}\n$/);
      expect(fs.statSync(path.join(dir, SALT)).mode & 0o777).toBe(0o600);
    }
    expect(read(first, SALT)).not.toBe(read(second, SALT));
  }, 120000);

  test("the first deploy keeps the salt in the state; a rerun keeps the deployment's trigger", () => {
    const trigger = read(first, TRIGGER);
    const apply = terraform(first, ["apply", "-auto-approve"]);
    expect(apply.status).toBe(0);
    const state = JSON.parse(read(first, STATE));
    expect(saltInState(state)).toBe(read(first, SALT).trim());
    synth(first);
    expect(read(first, TRIGGER)).toBe(trigger);
    expect(terraform(first, ["plan", "-detailed-exitcode"]).status).toBe(0);
  }, 120000);

  test("a working copy without the cache reads the salt back from the state: the same trigger, nothing to rerun", () => {
    const copy = tempDir("salt-copy");
    writeCdktfProject(copy, project);
    fs.copyFileSync(path.join(first, STATE), path.join(copy, STATE));
    synth(copy);
    expect(read(copy, SALT)).toBe(read(first, SALT));
    expect(read(copy, TRIGGER)).toBe(read(first, TRIGGER));
  }, 120000);

  test("a plan stops when the cache is not the state's salt, and when there is none (a run that did not prepare it)", () => {
    fs.writeFileSync(path.join(first, SALT), `${"0".repeat(64)}\n`);
    const other = terraform(first, ["plan"]);
    expect(other.status).toBe(1);
    expect(other.output).toContain("is not the one this deployment's state keeps");
    expect(other.output).toContain("delete the file and deploy again");
    fs.rmSync(path.join(first, SALT));
    const none = terraform(first, ["plan"]);
    expect(none.status).toBe(1);
    expect(none.output).toContain("No secret salt at");
    // Deleted, the cache is read back from the state by the next run, as the message says.
    synth(first);
    expect(saltInState(JSON.parse(read(first, STATE)))).toBe(read(first, SALT).trim());
    expect(terraform(first, ["plan", "-detailed-exitcode"]).status).toBe(0);
  }, 120000);

  test("a destroy ends the deployment: the record and the cache go, and the next deploy makes a new salt", () => {
    const before = read(first, SALT);
    expect(terraform(first, ["destroy", "-auto-approve"]).status).toBe(0);
    expect(saltInState(JSON.parse(read(first, STATE)))).toBeUndefined();
    expect(fs.existsSync(path.join(first, SALT))).toBe(false);
    synth(first);
    expect(read(first, SALT)).not.toBe(before);
  }, 120000);
});

test("a shared backend that cannot be read stops the run, saying so; no salt is made up in its place", () => {
  const dir = tempDir("salt-pg");
  const results = path.join(dir, RESULTS);
  const saved = process.env.PG_CONN_STR;
  // Nothing listens here: the backend cannot be read, as without its credentials.
  process.env.PG_CONN_STR = "postgres://nobody@127.0.0.1:9/none?sslmode=disable&connect_timeout=2";
  try {
    expect(() =>
      deploymentSalt(dir, results, { stackName: "vm-install", backend: { type: "pg", schemaName: "vm_install" } }),
    ).toThrow(
      /^reading the deployment's secret salt from the pg backend: terraform init -input=false -no-color failed \(.*\); set the backend's credentials as for a deploy/,
    );
  } finally {
    if (saved === undefined) delete process.env.PG_CONN_STR;
    else process.env.PG_CONN_STR = saved;
  }
  expect(fs.existsSync(path.join(dir, SALT))).toBe(false);
}, 60000);
