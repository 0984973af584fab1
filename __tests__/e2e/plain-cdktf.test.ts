// The cdktf CLI run directly (node_modules/.bin/cdktf, as `npx cdktf` runs it), not through bin/cdktf: a
// deploy of the local-target shape to a sandbox, a password rotation, an unset password and a destroy, under
// a person's umask 022, and a parallelism setting held without bin/cdktf's flag. What bin/cdktf does around
// cdktf the app now does at synth (lib/construct/synth-preparation.ts): the state and plan files owner-only
// before Terraform writes them, the secret trigger from the TF_VAR_ values cdktf withholds from the app.
import * as fs from "node:fs";
import * as path from "node:path";
import { writeCdktfProject } from "../../dev/demo/project";
import type { Sandbox } from "../../dev/sandbox/index";
import { tempDir } from "../support/synth";
import { host, jobsRun } from "./support/deploy";
import { describeE2E, sandboxPerSuite } from "./support/e2e";
import { plainCdktf } from "./support/plain-cdktf";

const STACK = "plain";
const PW1 = "plain cdktf's first password";
const PW2 = "plain cdktf's second password";

/** Files group or others can reach: open to them, with every folder above them (to `dir`) open to them too. */
function reachableByOthers(dir: string): string[] {
  const open = (p: string) => (fs.lstatSync(p).mode & 0o077) !== 0;
  return fs
    .readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((rel) => !fs.lstatSync(path.join(dir, rel)).isSymbolicLink())
    .filter((rel) => {
      const parts = rel.split(path.sep);
      return parts.every((_, i) => open(path.join(dir, ...parts.slice(0, i + 1))));
    })
    .sort();
}

const mode = (file: string) => (fs.statSync(file).mode & 0o777).toString(8);

describeE2E("the cdktf CLI run directly: deploy, password rotation, unset password, destroy", () => {
  let sb: Sandbox;
  let dir: string;
  const ctx = () => ({
    stackName: STACK,
    jobTarget: "local",
    installers: { packages: { packages: ["jq"] }, postgres: { enabled: true, passwordVariable: "pg_password" } },
    vms: [host("one", sb)],
  });
  /** Whether `password` logs in over TCP on the VM (on psql's stdin-fed environment, not its command line). */
  const logsIn = async (password: string) =>
    (
      await sb.rootExec(
        "read -r PGPASSWORD; export PGPASSWORD; psql -X -w -At -h 127.0.0.1 -U app_user -d myapp -c 'select 1'",
        { input: `${password}\n`, timeoutMs: 30_000 },
      )
    ).stdout.trim() === "1";
  const deploy = (secrets: Record<string, string>) =>
    plainCdktf(dir, ["deploy", "--auto-approve", "--outputs-file", path.join(dir, "outputs.json")], secrets);

  sandboxPerSuite((s) => (sb = s));
  beforeAll(() => {
    dir = tempDir("plain-cdktf");
    writeCdktfProject(dir, ctx());
  });

  test("deploy: the jobs run; state, its backup, the plan file and the secret trigger are owner-only", async () => {
    const run = await deploy({ TF_VAR_pg_password: PW1 });
    expect({ code: run.code, tail: run.code === 0 ? "" : run.output.slice(-3000) }).toEqual({ code: 0, tail: "" });
    expect(jobsRun(run)).toEqual(["one_packages", "one_postgres"]);
    expect(await logsIn(PW1)).toBe(true);
    const state = path.join(dir, `terraform.${STACK}.tfstate`);
    const results = path.join(dir, ".vm-install", STACK);
    expect({
      state: mode(state),
      backup: mode(`${state}.backup`),
      plan: mode(path.join(dir, "cdktf.out", "stacks", STACK, "plan")),
      trigger: mode(path.join(results, "one-install-postgres.secret-trigger")),
      results: mode(results),
    }).toEqual({ state: "600", backup: "600", plan: "600", trigger: "600", results: "700" });
    // Terraform's own files under cdktf.out (.terraform/, the lock file) are 0644 and 0755 by its umask,
    // inside a folder only the owner can enter.
    expect(reachableByOthers(dir)).toEqual(["cdktf.json", "outputs.json"]);
  }, 900_000);

  test("a changed password reruns the postgres job and the role takes it; unchanged, nothing reruns", async () => {
    const run = await deploy({ TF_VAR_pg_password: PW2 });
    expect({ code: run.code, tail: run.code === 0 ? "" : run.output.slice(-3000) }).toEqual({ code: 0, tail: "" });
    expect(jobsRun(run)).toEqual(["one_postgres"]);
    expect(await logsIn(PW2)).toBe(true);
    expect(await logsIn(PW1)).toBe(false);
    const again = await deploy({ TF_VAR_pg_password: PW2 });
    expect(again.code).toBe(0);
    expect(jobsRun(again)).toEqual([]);
  }, 900_000);

  test("parallelism 1 holds without --terraform-parallelism: two VMs' jobs one at a time", async () => {
    const par = tempDir("plain-cdktf-par");
    writeCdktfProject(par, {
      stackName: "plain-par",
      jobTarget: "local",
      parallelism: 1,
      installers: { packages: { packages: ["jq"] } },
      vms: [host("a", sb), host("b", sb)],
    });
    const run = await plainCdktf(par, ["deploy", "--auto-approve"], {});
    expect({ code: run.code, tail: run.code === 0 ? "" : run.output.slice(-3000) }).toEqual({ code: 0, tail: "" });
    expect(jobsRun(run)).toEqual(["a_packages", "b_packages"]);
    // Terraform (its default -parallelism 10) started both; the second runner waited for the one slot.
    expect(run.output).toMatch(
      /\[[ab]-install-packages\] waiting for one of the stack's 1 job slots \(parallelism 1\)/,
    );
    const destroyed = await plainCdktf(par, ["destroy", "--auto-approve"], {});
    expect(destroyed.code).toBe(0);
  }, 600_000);

  test("the password unset: the deploy stops at once naming TF_VAR_pg_password, no prompt waits", async () => {
    const started = Date.now();
    const run = await deploy({});
    expect(run.code).not.toBe(0);
    expect(run.output.replace(/\s+/g, " ")).toContain(
      "vm-install: TF_VAR_pg_password is not set (install-postgres's db_password); export TF_VAR_pg_password=...",
    );
    expect(jobsRun(run)).toEqual([]);
    expect(Date.now() - started).toBeLessThan(120_000);
  }, 300_000);

  test("destroy: clean, the state empty and still owner-only", async () => {
    const run = await plainCdktf(dir, ["destroy", "--auto-approve"], { TF_VAR_pg_password: PW2 });
    expect({ code: run.code, tail: run.code === 0 ? "" : run.output.slice(-3000) }).toEqual({ code: 0, tail: "" });
    const state = path.join(dir, `terraform.${STACK}.tfstate`);
    expect(JSON.parse(fs.readFileSync(state, "utf8")).resources).toEqual([]);
    expect({ state: mode(state), backup: mode(`${state}.backup`) }).toEqual({ state: "600", backup: "600" });
    expect(reachableByOthers(dir)).toEqual(["cdktf.json", "outputs.json"]);
  }, 300_000);
});
