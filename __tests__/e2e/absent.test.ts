// End-to-end: `state: "absent"` takes back off exactly what an installer put on, on one sandbox VM
// reused by every case (each leaves the VM as it found it, which is what is asserted). Per installer:
// the VM's package list, apt sources and keys, groups and users before; install; a check of absent
// (would_change says the removals, nothing moves); absent; the same VM as before; `dpkg --audit` empty;
// a rerun with nothing to do. The cdktf destroy cases are in absent-on-destroy.test.ts.
import type { Sandbox } from "../../dev/sandbox/index";
import { startFakeDockerRepo } from "./fixtures/docker-repo";
import { absentThrice, expectAuditClean, noWork, T, vmState } from "./support/absent-e2e";
import { describeE2E, expectSucceeded, root, runInstaller, sandboxPerSuite } from "./support/e2e";
import { remoteEvent } from "./support/postgres-e2e";
import { RELEASE } from "./support/release";

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
    "install-postgres (the distribution's): without purgeData its grants are revoked, its packages removed and " +
      "the cluster kept where the result says; with purgeData the VM is as before",
    async () => {
      const PW = "absent-test-password-1";
      const event = remoteEvent(PW);
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
