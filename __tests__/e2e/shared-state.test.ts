// State a team can share, end to end: a sandbox's PostgreSQL, installed by this project's own
// install-postgres with remote access for the host, is the Terraform backend (`backend: {type: "pg"}`,
// the connection string in PG_CONN_STR only). A deploy from one working copy; `npm run status` from a
// second working copy (a fresh folder with the same cdktf.json) sees the same deployment; a deploy from
// the second while the first holds the state lock fails on Terraform's own lock error; the state is
// intact afterwards. install-postgres, on a second sandbox, from two working copies: a deploy from the
// copy that did not run it leaves it alone (the secret trigger is the same in every copy), a changed
// password from either copy reruns it.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { existingHost, runCdktf, writeCdktfProject } from "../../dev/demo/project";
import type { Sandbox } from "../../dev/sandbox/index";
import { PROJECT_ROOT } from "../../lib/entry-points";
import { jobLogs } from "../../lib/jobs/job-log";
import { tempDir } from "../support/synth";
import { describeE2E, dpkgStatus, runInstaller, sandboxPerSuite } from "./support/e2e";
import { holdDpkgLock } from "./support/faults";
import { postgresByJob } from "./support/snapshots";

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
    spawnSync(
      process.execPath,
      ["-r", path.join(PROJECT_ROOT, "bin", "ts-register.js"), path.join(PROJECT_ROOT, "bin", "status.ts"), "--json"],
      {
        cwd: dir,
        encoding: "utf8",
        env: { ...process.env, ...env },
      },
    );

  sandboxPerSuite((s) => (sb = s), 900_000, postgresByJob);
  // The postgres deployment's own VM: its install-postgres must not touch the one that holds the state.
  let db: Sandbox;
  sandboxPerSuite((s) => (db = s));

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
    env = {
      PG_CONN_STR: `postgres://terraform:${encodeURIComponent(DB_PASSWORD)}@${sb.address}/tfstate?sslmode=require`,
    };
  }, 300_000);

  test("a deploy from the first working copy keeps its state in PostgreSQL, not beside the project", async () => {
    writeCdktfProject(first, ctx(1, ["jq"]));
    const run = await deploy(first);
    expect(run.code).toBe(0);
    expect(fs.existsSync(path.join(first, `terraform.${STACK}.tfstate`))).toBe(false);
    const states = await sb.rootExec(
      `runuser -u postgres -- psql -X -At -d tfstate -c "select name from vm_install.states"`,
    );
    expect(states.stdout.trim()).toBe("default");
    expect(run.output).not.toContain(DB_PASSWORD);
    // With the state elsewhere, what the deploy wrote here is still its owner's alone.
    expect(openToOthers(first)).toEqual([]);
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
    expect(resources).toEqual(
      expect.arrayContaining(["terraform_data.app_packages", "terraform_data.app_packages_outcome"]),
    );
    const again = await deploy(second);
    expect(again.code).toBe(0);
    expect(again.output).not.toMatch(/app_packages[^:]*: Creating/);
  }, 600_000);

  test("install-postgres from two working copies: the second copy's deploy leaves it alone; a changed password from either copy reruns it", async () => {
    const [pgA, pgB] = [tempDir("shared-pg-a"), tempDir("shared-pg-b")];
    const stack = "e2e-shared-pg";
    const pgCtx = {
      stackName: stack,
      runId: 1,
      jobTarget: "local",
      backend: { type: "pg", schemaName: "vm_install_pg" },
      installers: { packages: { enabled: false }, postgres: { enabled: true, passwordVariable: "app_pw" } },
      vms: [existingHost("db", db)],
    };
    const deployWith = async (dir: string, password: string) => {
      writeCdktfProject(dir, pgCtx);
      const run = await runCdktf(dir, ["deploy", "--auto-approve"], { env: { ...env, TF_VAR_app_pw: password } });
      expect({ code: run.code, tail: run.code === 0 ? "" : run.output.slice(-2000) }).toEqual({ code: 0, tail: "" });
      expect(run.output).not.toContain(password);
      return run;
    };
    const reran = (run: { output: string }) => /terraform_data\.db_postgres(?: \([^)]*\))?: Creating/.test(run.output);
    // The job's result as the shared state keeps it: its timings and changes are those of the run that made it.
    const result = () => {
      const out = spawnSync("terraform", ["output", "-raw", "db_postgres_result"], {
        cwd: path.join(pgA, "cdktf.out", "stacks", stack),
        encoding: "utf8",
        env: { ...process.env, ...env },
      });
      expect(out.stderr).toBe("");
      return out.stdout;
    };
    const runsIn = (dir: string) => jobLogs(path.join(dir, ".vm-install", stack, "logs"), "db-install-postgres").length;
    const loginWorks = async (password: string) =>
      (
        await db.rootExec(
          `cd / && PGPASSWORD='${password}' psql -X -At -h 127.0.0.1 -U app_user -d myapp -c 'select 1'`,
        )
      ).stdout.trim();

    expect(reran(await deployWith(pgA, "first app password, long"))).toBe(true);
    const firstResult = result();
    expect(JSON.parse(firstResult)).toMatchObject({ status: "ok", db_name: "myapp", db_user: "app_user" });

    // The second copy never ran the job, and had no trigger file before its own synth: the same
    // configuration and password give the same trigger, so nothing to do.
    const unchanged = await deployWith(pgB, "first app password, long");
    expect(reran(unchanged)).toBe(false);
    expect(runsIn(pgB)).toBe(0);
    expect(result()).toBe(firstResult);

    // A new password from the second copy reruns it there, and the role takes it.
    expect(reran(await deployWith(pgB, "second app password, long"))).toBe(true);
    expect(runsIn(pgB)).toBe(1);
    const secondResult = result();
    expect(secondResult).not.toBe(firstResult);
    expect(await loginWorks("second app password, long")).toBe("1");

    // The first copy, its trigger file still the first password's, deploying with the second: nothing to do.
    expect(reran(await deployWith(pgA, "second app password, long"))).toBe(false);
    expect(result()).toBe(secondResult);
    // A new password from the first copy reruns it again.
    expect(reran(await deployWith(pgA, "third app password, long"))).toBe(true);
    expect(runsIn(pgA)).toBe(2);
    expect(await loginWorks("third app password, long")).toBe("1");
  }, 900_000);
});

/** Every file and folder under `dir` (symlinks not followed) that group or others may use, but the test's own cdktf.json. */
function openToOthers(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((rel) => rel !== "cdktf.json")
    .map((rel) => ({ rel, st: fs.lstatSync(path.join(dir, rel)) }))
    .filter(({ st }) => !st.isSymbolicLink() && (st.mode & 0o077) !== 0)
    .map(({ rel, st }) => `${rel} ${(st.mode & 0o7777).toString(8)}`);
}

/** Polls `check` every 200 ms until it holds, for at most 60 s. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
