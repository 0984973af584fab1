// `cdktf deploy` end to end with the local job target: real Terraform, real jobs through the runner,
// real software on a sandbox VM given as an existing host: one VM's life from deploy to destroy. A failing
// installer, a copied cdktf.out and two VMs are in deploy-*.test.ts beside it (they run side by side).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { readOutputs, runCdktf } from "../../dev/demo/project";
import type { Sandbox } from "../../dev/sandbox/index";
import { PROJECT_ROOT } from "../../lib/entry-points";
import { tempDir } from "../support/synth";
import { deploy, env, host, indexOf, jobsRun, PASSWORD } from "./support/deploy";
import { describeE2E, dpkgStatus, sandboxPerSuite, sshUser, vmFingerprint } from "./support/e2e";
import { FACTS } from "./support/release";

describeE2E("cdktf deploy, local target, one VM with all three installers", () => {
  let sb: Sandbox;
  let dir: string;
  const ctx = (patch: { runId?: number; packages?: string[] } = {}) => ({
    stackName: "e2e-one",
    runId: patch.runId ?? 1,
    jobTarget: "local",
    installers: {
      packages: { packages: patch.packages ?? ["git", "jq"] },
      docker: { enabled: true, channel: "distro", verify: "daemon" },
      postgres: { enabled: true, passwordVariable: "pg_password" },
    },
    vms: [host("one", sb)],
  });

  sandboxPerSuite((s) => (sb = s));
  beforeAll(() => {
    dir = tempDir("deploy-one");
  });

  test("deploy: every job runs in order, progress shows, outputs carry each handler's result", async () => {
    const run = await deploy(dir, "e2e-one", ctx());
    expect(run.code).toBe(0);
    expect(jobsRun(run)).toEqual(["one_docker", "one_packages", "one_postgres"]);
    // One VM's jobs strictly one after another.
    expect(indexOf(run, /one_docker(?: \([^)]*\))?: Creating/)).toBeGreaterThan(
      indexOf(run, /one_packages(?: \([^)]*\))?: Creation complete/),
    );
    expect(indexOf(run, /one_postgres(?: \([^)]*\))?: Creating/)).toBeGreaterThan(
      indexOf(run, /one_docker(?: \([^)]*\))?: Creation complete/),
    );
    // The handlers' own progress reaches the deploy output (no sensitive value hides it).
    expect(run.output).toMatch(/one_packages.*\(local-exec\):.*\[one-install-packages\] starting/);
    expect(run.output).not.toContain("output suppressed due to sensitive value");
    expect(run.output).not.toContain(PASSWORD);

    const pkgs = JSON.parse(run.outputs.one_packages_result);
    expect(pkgs.status).toBe("ok");
    expect([...pkgs.installed, ...pkgs.already_installed].sort()).toEqual(["git", "jq"]);
    const docker = JSON.parse(run.outputs.one_docker_result);
    expect(docker).toMatchObject({ status: "ok", channel: "distro" });
    expect(docker.docker_version).toMatch(FACTS.dockerIo);
    const pg = JSON.parse(run.outputs.one_postgres_result);
    expect(pg).toMatchObject({ status: "ok", db_name: "myapp", db_user: "app_user" });
    expect(pg.pg_version).toMatch(new RegExp(`^${FACTS.pgMajor}\\.`)); // the release's own PostgreSQL
    expect(JSON.stringify(run.outputs)).not.toContain(PASSWORD);

    expect(await dpkgStatus(sb, ["git", "jq", "docker.io", "postgresql"])).toEqual({
      git: "install ok installed",
      jq: "install ok installed",
      "docker.io": "install ok installed",
      postgresql: "install ok installed",
    });
    expect((await sshUser(sb, "systemctl is-active docker postgresql")).stdout.trim().split("\n")).toEqual([
      "active",
      "active",
    ]);
    // Nothing secret in what Terraform wrote.
    for (const file of ["cdktf.out/stacks/e2e-one/cdk.tf.json", "terraform.e2e-one.tfstate"]) {
      expect(fs.readFileSync(path.join(dir, file), "utf8")).not.toContain("pw with");
    }
  }, 600000);

  test("npm run status: a row per installer from the deployed state, the host key seen, each job's log", async () => {
    const status = (...args: string[]) =>
      spawnSync(
        process.execPath,
        ["-r", path.join(PROJECT_ROOT, "bin", "ts-register.js"), path.join(PROJECT_ROOT, "bin", "status.ts"), ...args],
        {
          cwd: dir,
          encoding: "utf8",
          env: { ...process.env, FORCE_COLOR: "" },
        },
      );
    const table = status();
    expect(table.status).toBe(0);
    const lines = table.stdout.split("\n");
    expect(lines[0]).toMatch(/^VM +INSTALLER +STATUS +CHANGED +DURATION +LAST RUN +HOST KEY +SUMMARY$/);
    for (const installer of ["install-packages", "install-docker", "install-postgres"]) {
      expect(lines).toContainEqual(
        expect.stringMatching(new RegExp(`^one +${installer} +ok +yes +\\d+\\.\\ds +\\d{4}-\\d\\d-\\d\\d `)),
      );
    }
    expect(table.stdout).not.toContain("\x1b["); // piped: plain
    const rows = JSON.parse(status("--json").stdout);
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(row).toMatchObject({ vm: "one", status: "ok", changed: true, hostKey: sb.hostKeySha256 });
      const log = fs.readFileSync(path.join(dir, row.log), "utf8");
      expect(log).toContain(`[one-${row.installer}] starting`);
      expect(log).not.toContain(PASSWORD);
    }
  }, 120000);

  test("deploy again unchanged: no job runs, outputs stay", async () => {
    const before = readOutputs(dir, "e2e-one");
    expect(Object.keys(before).length).toBe(5);
    const run = await deploy(dir, "e2e-one", ctx());
    expect(run.code).toBe(0);
    expect(jobsRun(run)).toEqual([]);
    expect(run.output).toContain("No changes.");
    expect(run.outputs).toEqual(before);
  }, 300000);

  test("raise run_id: every job reruns and reports already installed", async () => {
    const run = await deploy(dir, "e2e-one", ctx({ runId: 2 }));
    expect(run.code).toBe(0);
    expect(jobsRun(run)).toEqual(["one_docker", "one_packages", "one_postgres"]);
    const pkgs = JSON.parse(run.outputs.one_packages_result);
    expect(pkgs.installed).toEqual([]);
    expect(pkgs.already_installed.sort()).toEqual(["git", "jq"]);
    expect(JSON.parse(run.outputs.one_docker_result)).toMatchObject({ status: "ok", changed: false });
    const pg = JSON.parse(run.outputs.one_postgres_result);
    expect(pg).toMatchObject({ changed: false, changes: [] });
    expect(pg.restarted).toBe(false);
  }, 600000);

  test("change the package list: that job and the ones after it rerun", async () => {
    const run = await deploy(dir, "e2e-one", ctx({ runId: 2, packages: ["git", "jq", "unzip"] }));
    expect(run.code).toBe(0);
    expect(jobsRun(run)).toEqual(["one_docker", "one_packages", "one_postgres"]);
    expect(JSON.parse(run.outputs.one_packages_result).installed).toEqual(["unzip"]);
    expect((await dpkgStatus(sb, ["unzip"])).unzip).toBe("install ok installed");
  }, 600000);

  test("change the password variable: only the postgres job reruns, the role takes the new one, neither value nor a plain hash is in state", async () => {
    const NEW = "a new password, long enough";
    /** Whether `password` logs in over TCP on the VM (the password on psql's stdin-fed env, not its command line). */
    const logsIn = async (password: string) =>
      (
        await sb.rootExec(
          "read -r PGPASSWORD; export PGPASSWORD; psql -X -w -At -h 127.0.0.1 -U app_user -d myapp -c 'select 1'",
          {
            input: `${password}\n`,
            timeoutMs: 30_000,
          },
        )
      ).stdout.trim() === "1";
    expect(await logsIn(PASSWORD)).toBe(true);
    const run = await deploy(dir, "e2e-one", ctx({ runId: 2, packages: ["git", "jq", "unzip"] }), {
      TF_VAR_pg_password: NEW,
    });
    expect(run.code).toBe(0);
    expect(jobsRun(run)).toEqual(["one_postgres"]);
    expect(JSON.parse(run.outputs.one_postgres_result).changes.join("\n")).toMatch(/password/);
    expect(await logsIn(NEW)).toBe(true);
    expect(await logsIn(PASSWORD)).toBe(false);
    const state = fs.readFileSync(path.join(dir, "terraform.e2e-one.tfstate"), "utf8");
    const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
    for (const secret of [NEW, PASSWORD]) {
      expect(state).not.toContain(secret);
      expect(state).not.toContain(sha256(secret));
    }
    // Unchanged again: nothing reruns.
    const again = await deploy(dir, "e2e-one", ctx({ runId: 2, packages: ["git", "jq", "unzip"] }), {
      TF_VAR_pg_password: NEW,
    });
    expect(jobsRun(again)).toEqual([]);
  }, 600000);

  test("npm run check: in sync exits 0; a package removed and the database dropped by hand exit 2 naming both and change nothing; a deploy with a raised runId repairs; then 0", async () => {
    const secrets = { TF_VAR_pg_password: "a new password, long enough" };
    const settled = ctx({ runId: 2, packages: ["git", "jq", "unzip"] });
    const check = () => {
      const out = spawnSync(
        process.execPath,
        ["-r", path.join(PROJECT_ROOT, "bin", "ts-register.js"), path.join(PROJECT_ROOT, "bin", "check.ts"), "--json"],
        {
          cwd: dir,
          env: { ...process.env, ...secrets },
          encoding: "utf8",
          timeout: 300_000,
        },
      );
      return {
        code: out.status,
        rows: JSON.parse(out.stdout || "[]") as {
          installer: string;
          state: string;
          wouldChange: string[];
          summary: string;
        }[],
        stderr: out.stderr,
      };
    };
    const inSync = check();
    // An error's words are in the comparison, so a failure here says what the check met.
    const errors = (rows: typeof inSync.rows) => rows.filter((r) => r.state === "error").map((r) => r.summary);
    expect({ code: inSync.code, states: inSync.rows.map((r) => r.state), errors: errors(inSync.rows) }).toEqual({
      code: 0,
      states: ["in sync", "in sync", "in sync"],
      errors: [],
    });

    await sb.rootExec("apt-get remove -y -q jq && sudo -u postgres dropdb myapp", { timeoutMs: 120_000 });
    const before = await vmFingerprint(sb);
    const drift = check();
    expect(drift.code).toBe(2);
    const byInstaller = Object.fromEntries(drift.rows.map((r) => [r.installer, r]));
    expect(byInstaller["install-packages"]).toMatchObject({ state: "drift", wouldChange: ["installed jq"] });
    expect(byInstaller["install-docker"]).toMatchObject({ state: "in sync", wouldChange: [] });
    expect(byInstaller["install-postgres"].state).toBe("drift");
    expect(byInstaller["install-postgres"].wouldChange).toContain("database myapp created (owner app_user)");
    expect(await vmFingerprint(sb)).toEqual(before);

    const repair = await deploy(dir, "e2e-one", { ...settled, runId: 3 }, secrets);
    expect(repair.code).toBe(0);
    expect(JSON.parse(repair.outputs.one_packages_result).changes).toEqual(byInstaller["install-packages"].wouldChange);
    expect(JSON.parse(repair.outputs.one_postgres_result).changes).toEqual(byInstaller["install-postgres"].wouldChange);
    const after = check();
    expect({
      code: after.code,
      states: after.rows.map((r) => r.state),
      stderr: after.code === 0 ? "" : after.stderr,
    }).toEqual({
      code: 0,
      states: ["in sync", "in sync", "in sync"],
      stderr: "",
    });
  }, 900000);

  test("destroy: clean, no state or result left, then the sandbox goes", async () => {
    const run = await runCdktf(dir, ["destroy", "--auto-approve"], { env });
    expect(run.code).toBe(0);
    // cdktf may cut off the end of a long destroy's output when it exits (the outcome records print whole
    // results in the plan), so the end state is read from the state file, not from its last line.
    const state = JSON.parse(fs.readFileSync(path.join(dir, "terraform.e2e-one.tfstate"), "utf8"));
    expect(state.resources).toEqual([]);
    // No result is left; the postgres job's secret trigger and the jobs' logs stay for the next deploy.
    expect(fs.readdirSync(path.join(dir, ".vm-install", "e2e-one")).sort()).toEqual([
      "logs",
      "one-install-postgres.secret-trigger",
    ]);
    const { runDir, netns } = sb;
    await sb.stop();
    expect(fs.existsSync(runDir)).toBe(false);
    expect(fs.existsSync(`/run/netns/${netns}`)).toBe(false);
  }, 300000);
});
