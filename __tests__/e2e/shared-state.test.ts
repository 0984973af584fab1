// State a team can share, end to end: a sandbox's PostgreSQL, installed by this project's own
// install-postgres with remote access for the host, is the Terraform backend (`backend: {type: "pg"}`,
// the connection string in PG_CONN_STR only). A deploy from one working copy; `npm run status` from a
// second working copy (a fresh folder with the same cdktf.json) sees the same deployment; a deploy from
// the second while the first holds the state lock fails on Terraform's own lock error; the state is
// intact afterwards.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { existingHost, runCdktf, writeCdktfProject } from "../../demo/project";
import { PROJECT_ROOT } from "../../lib/bundling/bundle";
import type { Sandbox } from "../../sandbox";
import { tempDir } from "../support/synth";
import { describeE2E, dpkgStatus, runInstaller, sandboxPerSuite } from "./support/e2e";
import { holdDpkgLock } from "./support/faults";

const STACK = "e2e-shared";
const DB_PASSWORD = "state-db password, long enough";

describeE2E("shared state in PostgreSQL: two working copies, one deployment, one lock", () => {
  let sb: Sandbox;
  let env: Record<string, string>;
  const [first, second] = [tempDir("shared-a"), tempDir("shared-b")];
  const ctx = (runId: number, packages: string[]) => ({
    stackName: STACK,
    runId,
    jobTarget: "local",
    backend: { type: "pg", schemaName: "vm_install" },
    installers: { packages: { packages } },
    vms: [existingHost("app", sb)],
  });
  const deploy = (dir: string) => runCdktf(dir, ["deploy", "--auto-approve"], { env });
  const status = (dir: string) =>
    spawnSync(process.execPath, ["-r", path.join(PROJECT_ROOT, "bin", "ts-register.js"), path.join(PROJECT_ROOT, "bin", "status.ts"), "--json"], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, ...env },
    });

  sandboxPerSuite((s) => (sb = s));

  beforeAll(async () => {
    const pg = await runInstaller(
      sb,
      "install-postgres",
      {
        db_name: "tfstate",
        db_user: "terraform",
        db_password: DB_PASSWORD,
        listen_addresses: "*",
        allow_remote: true,
        allowed_cidrs: [`${sb.hostAddress}/32`],
      },
      { secrets: [DB_PASSWORD] },
    );
    expect(pg.phase).toBe("Succeeded");
    env = { PG_CONN_STR: `postgres://terraform:${encodeURIComponent(DB_PASSWORD)}@${sb.address}/tfstate?sslmode=require` };
  }, 300_000);

  test("a deploy from the first working copy keeps its state in PostgreSQL, not beside the project", async () => {
    writeCdktfProject(first, ctx(1, ["jq"]));
    const run = await deploy(first);
    expect(run.code).toBe(0);
    expect(fs.existsSync(path.join(first, `terraform.${STACK}.tfstate`))).toBe(false);
    const states = await sb.rootExec(`runuser -u postgres -- psql -X -At -d tfstate -c "select name from vm_install.states"`);
    expect(states.stdout.trim()).toBe("default");
    expect(run.output).not.toContain(DB_PASSWORD);
  }, 600_000);

  test("npm run status from a second working copy shows the same deployment", () => {
    writeCdktfProject(second, ctx(1, ["jq"]));
    const out = status(second);
    expect(out.stderr).toMatch(/cdktf synth[\s\S]*terraform init/);
    expect(out.status).toBe(0);
    const rows = JSON.parse(out.stdout);
    expect(rows.map((r: any) => [r.vm, r.installer, r.status])).toEqual([
      ["app", "install-packages", "ok"],
      ["app", "install-docker", "skipped"],
      ["app", "install-postgres", "skipped"],
    ]);
    expect(rows[0].hostKey).toBe(sb.hostKeySha256);
  }, 120_000);

  test("a deploy while another holds the state lock fails on Terraform's lock error; the state is intact", async () => {
    // The first copy's job waits on the VM's dpkg lock, so its deploy holds the state lock for as long as
    // the test keeps that one: the second deploy meets it whatever the timing of the two syntheses.
    const holder = await holdDpkgLock(sb, 300);
    writeCdktfProject(first, ctx(2, ["jq", "unzip"]));
    writeCdktfProject(second, ctx(2, ["jq", "unzip"]));
    const running = deploy(first);
    // The job's log appears when Terraform starts it, in the apply, so with the state locked.
    const logs = path.join(first, ".vm-install", STACK, "logs");
    const runsBefore = fs.readdirSync(logs).length;
    await until(async () => fs.readdirSync(logs).length > runsBefore, "the first deploy's job to start");
    const blocked = await deploy(second);
    expect(blocked.code).not.toBe(0);
    expect(blocked.output).toContain("Error acquiring the state lock");
    holder.release();
    await holder.done;
    const done = await running;
    expect(done.code).toBe(0);
    expect((await dpkgStatus(sb, ["unzip"])).unzip).toBe("install ok installed");
    // Every resource once, and the next deploy, from the second copy (which never ran a job, so has no
    // result file), has nothing to do: the results are in the shared state.
    const list = spawnSync("terraform", ["state", "list"], {
      cwd: path.join(second, "cdktf.out", "stacks", STACK),
      encoding: "utf8",
      env: { ...process.env, ...env },
    });
    const resources = list.stdout.trim().split("\n").sort();
    expect(resources).toEqual([...new Set(resources)]);
    expect(resources).toEqual(expect.arrayContaining(["terraform_data.app_packages", "terraform_data.app_packages_outcome"]));
    const again = await deploy(second);
    expect(again.code).toBe(0);
    expect(again.output).not.toMatch(/app_packages[^:]*: Creating/);
  }, 600_000);
});

/** Polls `check` every 200 ms until it holds, for at most 60 s. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
