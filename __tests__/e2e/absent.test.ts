// End-to-end: `state: "absent"` takes back off exactly what an installer put on, on one sandbox VM
// reused by every case (each leaves the VM as it found it, which is what is asserted). Per installer:
// the VM's package list, apt sources and keys, groups and users before; install; a check of absent
// (would_change says the removals, nothing moves); absent; the same VM as before; `dpkg --audit` empty;
// a rerun with nothing to do.
import * as fs from "node:fs";
import { type CdktfRun, existingHost, runCdktf, writeCdktfProject } from "../../demo/project";
import type { Sandbox } from "../../sandbox/index";
import { filesUnder, tempDir } from "../support/synth";
import { startFakeDockerRepo } from "./fixtures/docker-repo";
import {
  describeE2E,
  expectSucceeded,
  type InstallerRun,
  root,
  runInstaller,
  sandboxPerSuite,
  vmFingerprint,
} from "./support/e2e";
import { RELEASE } from "./support/release";

const T = 600_000;

/**
 * What absent must give back: every package by name and dpkg state (an install may upgrade a package that
 * was there, when a new one needs a newer version of it: absent does not downgrade), apt's sources and
 * keys with their content, groups with their members, users, daemon.json (log rotation is on by default).
 */
async function vmState(sb: Sandbox): Promise<Record<string, string>> {
  const sh = (command: string) => root(sb, command, 60_000);
  return {
    packages: await sh("dpkg-query -W -f='${Package} ${db:Status-Abbrev}\\n' | sort"),
    apt: await sh(
      "find /etc/apt/sources.list.d /etc/apt/keyrings -mindepth 1 | sort | " +
        'while read -r f; do stat -c \'%n %a %U %s\' "$f"; [ -f "$f" ] && sha256sum "$f"; done; true',
    ),
    groups: await sh("getent group | sort"),
    users: await sh("getent passwd | cut -d: -f1 | sort"),
    postgres: await sh("find /etc/postgresql /etc/postgresql-common /var/lib/postgresql 2>/dev/null | sort; true"),
    daemonJson: await sh("cat /etc/docker/daemon.json 2>/dev/null || echo '(none)'"),
  };
}

async function expectAuditClean(sb: Sandbox): Promise<void> {
  expect(await root(sb, "dpkg --audit; echo rc=$?")).toBe("rc=0\n");
}

/** A cdktf run that succeeded (its output's tail when it did not). */
function expectRan(run: CdktfRun): void {
  expect({ code: run.code, tail: run.code ? run.output.slice(-3000) : "" }).toEqual({ code: 0, tail: "" });
}

/** Not one file of the project folder (cdktf.out, the state and its backup, results, logs) holds `secret`. */
function expectNowhere(dir: string, secret: string): void {
  const holding = filesUnder(dir).filter((f) => fs.readFileSync(f).includes(secret));
  expect(holding).toEqual([]);
}

/**
 * Removed without purging: what the install brought is left as dpkg's "rc" (its configuration) or "un"
 * (known, not installed), nothing else differs from before the install.
 */
function expectPackagesBack(pristine: string, installed: string, after: string): void {
  const lines = (text: string) => new Set(text.split("\n").filter(Boolean));
  const [before, during, now] = [lines(pristine), lines(installed), lines(after)];
  expect([...before].filter((l) => !now.has(l))).toEqual([]);
  const extra = [...now].filter((l) => !before.has(l));
  expect(extra.length).toBeGreaterThan(0);
  for (const line of extra) {
    const name = line.split(" ")[0];
    expect({ line, installed: during.has(`${name} ii `) }).toEqual({
      line: expect.stringMatching(/^\S+ (rc|un) $/),
      installed: true,
    });
  }
}

/** Absent as a check, then for real, then again: the three results. */
async function absentThrice(sb: Sandbox, handler: string, event: Record<string, unknown>, secrets: string[] = []) {
  const before = await vmFingerprint(sb);
  const check = await runInstaller(sb, handler, { ...event, state: "absent", check: true }, { secrets });
  expectSucceeded(check);
  expect(await vmFingerprint(sb)).toEqual(before);
  const real = await runInstaller(sb, handler, { ...event, state: "absent" }, { secrets });
  expectSucceeded(real);
  const again = await runInstaller(sb, handler, { ...event, state: "absent" }, { secrets });
  expectSucceeded(again);
  return { check: check.result, real: real.result, again: again.result };
}

const noWork = (run: InstallerRun["result"]) => ({ changes: run.changes, changed: run.changed });

describeE2E("state absent on a sandbox VM: install, take back, the VM as before", () => {
  let sb: Sandbox;
  sandboxPerSuite((s) => (sb = s), T);

  test(
    "install-packages: jq and what it pulled in go, curl (there before) stays; a package of someone else's keeps " +
      "the library it needs until it is gone",
    async () => {
      const event = { packages: ["jq", "curl"], update: true };
      const pristine = await vmState(sb);
      expect(pristine.packages).toMatch(/^curl ii $/m);
      expect(pristine.packages).not.toMatch(/^jq /m);
      const install = await runInstaller(sb, "install-packages", event);
      expectSucceeded(install);
      expect(install.result.already_installed).toEqual(["curl"]);
      const installed = await vmState(sb);
      const brought = ["jq", "libjq1", "libonig5"];
      for (const p of brought) expect(installed.packages).toMatch(new RegExp(`^${p} ii $`, "m"));

      // Someone else's package that needs libonig5: absent must not take the library from under it.
      await root(
        sb,
        'd=$(mktemp -d) && mkdir "$d/DEBIAN" && printf \'Package: keeper\\nVersion: 1\\nArchitecture: all\\n' +
          'Maintainer: t <t@t>\\nDepends: libonig5\\nDescription: t\\n\' > "$d/DEBIAN/control" && ' +
          'dpkg-deb -b "$d" /tmp/keeper.deb >/dev/null && dpkg -i /tmp/keeper.deb >/dev/null',
      );
      const first = await absentThrice(sb, "install-packages", event);
      expect(first.check.would_change).toEqual(["removed jq libjq1"]);
      expect(first.check.changed).toBe(false);
      expect(first.real).toMatchObject({ state: "absent", changed: true, changes: ["removed jq libjq1"] });
      expect(first.real.removed).toEqual(["jq", "libjq1"]);
      expect(first.real.kept).toEqual(["libonig5"]);
      expect(first.real.warnings.join("\n")).toMatch(/kept libonig5: keeper .* depends on it/);
      expect(noWork(first.again)).toEqual({ changes: [], changed: false });
      expect((await vmState(sb)).packages).toMatch(/^libonig5 ii $/m);
      await expectAuditClean(sb);

      // keeper gone: the next absent takes libonig5 too, and the VM is as before the install.
      await root(sb, "dpkg --purge keeper >/dev/null && rm -f /tmp/keeper.deb");
      const second = await absentThrice(sb, "install-packages", event);
      expect(second.check.would_change).toEqual(["removed libonig5"]);
      expect(second.real.changes).toEqual(["removed libonig5"]);
      expect(noWork(second.again)).toEqual({ changes: [], changed: false });
      expect(await vmState(sb)).toEqual(pristine);
      await expectAuditClean(sb);
    },
    T,
  );

  test(
    'install-docker (channel "distro"): the packages it brought, the group they created and the login user\'s ' +
      "membership go; the VM's packages, sources, groups and users are as before",
    async () => {
      const event = { channel: "distro", verify: "daemon", compose: false };
      const pristine = await vmState(sb);
      expect(pristine.groups).not.toMatch(/^docker:/m);
      const install = await runInstaller(sb, "install-docker", event);
      expectSucceeded(install);
      expect(install.result.users_added.length).toBe(1);
      const user = install.result.users_added[0];
      expect((await vmState(sb)).groups).toMatch(new RegExp(`^docker:x:\\d+:${user}$`, "m"));

      const { check, real, again } = await absentThrice(sb, "install-docker", event);
      const revoked = `revoked: removed ${user} from group docker (added by vm-install)`;
      expect(check.would_change[0]).toBe(revoked);
      expect(check.would_change[1]).toMatch(/^removed (\S+ )*docker\.io( \S+)*$/);
      expect(check.would_change.slice(2)).toEqual([
        "removed group docker",
        "removed /etc/docker/daemon.json (it held only what vm-install wrote)",
      ]);
      expect(real.changes).toEqual(check.would_change);
      expect(real).toMatchObject({ state: "absent", revoked: [`group docker: ${user}`], kept: [] });
      expect(real.removed).toContain("docker.io");
      expect(noWork(again)).toEqual({ changes: [], changed: false });
      expect(await vmState(sb)).toEqual(pristine);
      await expectAuditClean(sb);
    },
    T,
  );

  test(
    'install-docker (channel "official", a stand-in for Docker\'s repository): the apt source and keyring it ' +
      "wrote go with the packages; the VM as before",
    async () => {
      const repo = await startFakeDockerRepo({ host: sb.hostAddress, suite: RELEASE });
      try {
        const event = { repo_url: repo.url, repo_key_fingerprint: repo.fingerprint, verify: "daemon" };
        const pristine = await vmState(sb);
        expectSucceeded(await runInstaller(sb, "install-docker", event));
        const installed = await vmState(sb);
        expect(installed.apt).toContain("/etc/apt/sources.list.d/docker.list");
        expect(installed.apt).toContain("/etc/apt/keyrings/docker.gpg");

        const { check, real, again } = await absentThrice(sb, "install-docker", event);
        expect(check.would_change).toEqual(
          expect.arrayContaining([
            "removed /etc/apt/sources.list.d/docker.list",
            "removed /etc/apt/keyrings/docker.gpg",
          ]),
        );
        expect(real.changes).toEqual(check.would_change);
        expect(real.removed).toContain("docker-ce");
        expect(noWork(again)).toEqual({ changes: [], changed: false });
        expect(await vmState(sb)).toEqual(pristine);
        await expectAuditClean(sb);
      } finally {
        await repo.stop();
      }
    },
    T,
  );

  test(
    'cdktf destroy with onDestroy "uninstall" (existing host, local target) takes back what the deploy installed',
    async () => {
      const dir = tempDir("absent-destroy");
      const pristine = await vmState(sb);
      const project = (runId: number) =>
        writeCdktfProject(dir, {
          stackName: "e2e-absent",
          runId,
          jobTarget: "local",
          installers: { packages: { packages: ["jq", "curl"] } },
          vms: [{ ...existingHost("one", sb), onDestroy: "uninstall" }],
        });
      for (const runId of [1, 2]) {
        // The second deploy reruns the job (a new run_id replaces it): that must not uninstall first.
        project(runId);
        const deploy = await runCdktf(dir, ["deploy", "--auto-approve"]);
        const failed = deploy.code ? deploy.output.slice(-3000) : "";
        expect({ code: deploy.code, failed }).toEqual({ code: 0, failed: "" });
        expect(deploy.output).not.toMatch(/_uninstall.*Destroying/);
        expect(deploy.output).toMatch(/one_packages(?: \([^)]*\))?: Creating/);
        expect((await vmState(sb)).packages).toMatch(/^jq ii $/m);
      }
      const destroy = await runCdktf(dir, ["destroy", "--auto-approve"]);
      expect({ code: destroy.code, tail: destroy.code ? destroy.output.slice(-3000) : "" }).toEqual({
        code: 0,
        tail: "",
      });
      expect(destroy.output).toMatch(/one_packages_uninstall.*\(local-exec\):.*removed jq libjq1 libonig5/);
      expect(await vmState(sb)).toEqual(pristine);
      await expectAuditClean(sb);
    },
    T,
  );

  test(
    'cdktf destroy with onDestroy "uninstall" takes install-postgres back with the password from the destroying ' +
      "shell: none in cdktf.out, state or logs; without it the destroy stops before the VM is touched",
    async () => {
      const PW = "destroy-test-password-1";
      const dir = tempDir("absent-destroy-pg");
      const env = { TF_VAR_pg_password: PW };
      // The suite's own environment must not set it: the refused destroy below runs without it.
      expect(process.env.TF_VAR_pg_password).toBeUndefined();
      const project = (purgeData: boolean) =>
        writeCdktfProject(dir, {
          stackName: "e2e-absent-pg",
          jobTarget: "local",
          installers: {
            packages: { enabled: false },
            postgres: { enabled: true, passwordVariable: "pg_password", purgeData },
          },
          vms: [{ ...existingHost("one", sb), onDestroy: "uninstall" }],
        });
      const pristine = await vmState(sb);
      project(false);
      expectRan(await runCdktf(dir, ["deploy", "--auto-approve"], { env }));
      const installed = await vmState(sb);
      const major = /^postgresql-(\d+) ii $/m.exec(installed.packages)?.[1];
      expect(major).toBeDefined();
      const dataDir = `/var/lib/postgresql/${major}/main`;

      // Unset, bin/cdktf stops the destroy before cdktf runs (piped, cdktf waits for ever at Terraform's
      // prompt); set but empty, the runner refuses the absent run before it connects. Either way the
      // message names the variable and what it holds, and the VM is as installed.
      const unset = await runCdktf(dir, ["destroy", "--auto-approve"]);
      expect(unset.code).toBe(1);
      expect(unset.output).toMatch(/cdktf destroy needs TF_VAR_pg_password set \(install-postgres's db_password/);
      expect(unset.output).not.toMatch(/_uninstall.*\(local-exec\)/);
      expect(await vmState(sb)).toEqual(installed);
      const empty = await runCdktf(dir, ["destroy", "--auto-approve"], { env: { TF_VAR_pg_password: "" } });
      expect(empty.code).not.toBe(0);
      expect(empty.output).toMatch(/TF_VAR_pg_password is not set; export TF_VAR_pg_password=.*db_password/);
      expect(await vmState(sb)).toEqual(installed);

      const destroy = await runCdktf(dir, ["destroy", "--auto-approve"], { env });
      expectRan(destroy);
      expect(destroy.output).toMatch(
        new RegExp(`one_postgres_uninstall.*\\(local-exec\\):.*removed .*postgresql-${major}\\b`),
      );
      const kept = await vmState(sb);
      expect(kept.postgres).toContain(`${dataDir}/PG_VERSION`);
      expectPackagesBack(pristine.packages, installed.packages, kept.packages);
      expect(kept.packages).toMatch(new RegExp(`^postgresql-${major} rc $`, "m"));
      await expectAuditClean(sb);
      expectNowhere(dir, PW);

      // purgeData: a second deploy finds the kept cluster; its destroy purges it all: the VM as before.
      project(true);
      expectRan(await runCdktf(dir, ["deploy", "--auto-approve"], { env }));
      expectRan(await runCdktf(dir, ["destroy", "--auto-approve"], { env }));
      expect(await vmState(sb)).toEqual(pristine);
      await expectAuditClean(sb);
      expectNowhere(dir, PW);
    },
    T,
  );

  test(
    "install-postgres (the distribution's): without purgeData its grants are revoked, its packages removed and " +
      "the cluster kept where the result says; with purgeData the VM is as before",
    async () => {
      const PW = "absent-test-password-1";
      const event = {
        db_name: "shop",
        db_user: "shop_app",
        db_password: PW,
        listen_addresses: "*",
        allow_remote: true,
        allowed_cidrs: ["10.200.0.0/16"],
      };
      const pristine = await vmState(sb);
      const install = await runInstaller(sb, "install-postgres", event, { secrets: [PW] });
      expectSucceeded(install);
      const cluster = install.result.cluster as string;
      const major = cluster.split("/")[0];
      const dataDir = `/var/lib/postgresql/${cluster}`;

      const keep = await absentThrice(sb, "install-postgres", event, [PW]);
      expect(keep.check.would_change).toEqual([
        "revoked: pg_hba.conf: hostssl shop shop_app 10.200.0.0/16 scram-sha-256",
        `revoked: role shop_app: LOGIN (cluster ${cluster})`,
        expect.stringMatching(new RegExp(`^removed .*postgresql-${major} .*\\(their configuration and data stay\\)$`)),
      ]);
      expect(keep.real.changes).toEqual(keep.check.would_change);
      expect(keep.real.data_kept).toEqual([`/var/lib/postgresql/${major}`, `/etc/postgresql/${major}`]);
      expect(keep.real.revoked).toHaveLength(2);
      expect(noWork(keep.again)).toEqual({ changes: [], changed: false });
      const kept = await vmState(sb);
      expect(kept.postgres).toContain(`${dataDir}/PG_VERSION`);
      expect(kept.packages).toMatch(new RegExp(`^postgresql-${major} rc $`, "m"));
      expect(kept.users).toMatch(/^postgres$/m);
      expect(await root(sb, `grep -c vm-install /etc/postgresql/${cluster}/pg_hba.conf; true`)).toBe("0\n");
      await expectAuditClean(sb);

      const purge = await absentThrice(sb, "install-postgres", { ...event, purge_data: true }, [PW]);
      expect(purge.check.would_change).toEqual(purge.real.changes);
      expect(purge.real.changes).toEqual(
        expect.arrayContaining([`removed /var/lib/postgresql/${major} (purgeData)`, "removed user postgres"]),
      );
      expect(noWork(purge.again)).toEqual({ changes: [], changed: false });
      expect(await vmState(sb)).toEqual(pristine);
      await expectAuditClean(sb);
    },
    T,
  );
});
