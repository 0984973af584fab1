// The fault matrix (issue 10), settings a service refuses: an unbindable listen_addresses and a wrong Docker
// repoUrl, each on a sandbox of its own: the job fails naming the value, the service keeps serving on what
// it had, and the fixed rerun succeeds.
import { describeE2E, expectSucceeded, perTest, root, runInstaller } from "../support/e2e";
import { expectFailed, matrixCase, PASSWORD, T } from "../support/fault-cases";
import { vmProblems } from "../support/faults";
import { postgresByJob } from "../support/snapshots";

describeE2E("fault matrix: settings a service refuses, on sandbox VMs", () => {
  const started = perTest(T);

  matrixCase(
    "unbindable listen_addresses",
    "an unbindable listen_addresses: the job fails naming the value and the server's error, PostgreSQL serves on its old settings, the fixed rerun succeeds",
    async () => {
      const vm = await started.sandbox(await postgresByJob());
      const event = { db_name: "faults", db_user: "faults_user", db_password: PASSWORD };
      expectSucceeded(await runInstaller(vm, "install-postgres", event, { secrets: [PASSWORD] }));
      const bad = await runInstaller(
        vm,
        "install-postgres",
        { ...event, listen_addresses: "localhost,192.0.2.77" },
        { secrets: [PASSWORD] },
      );
      const since = Date.now();
      const message = expectFailed(bad);
      expect(message).toContain("192.0.2.77");
      expect(message).toMatch(/could not bind|Cannot assign requested address/);
      expect(message).toMatch(/rolled back/i);
      // Still serving, on the old settings (localhost only), with no trace of the bad value.
      expect((await root(vm, "systemctl is-active postgresql@15-main")).trim()).toBe("active");
      expect((await root(vm, "cd / && sudo -u postgres psql -XAtc 'SHOW listen_addresses'")).trim()).toBe("localhost");
      expect(await root(vm, "cat /etc/postgresql/15/main/conf.d/90-vm-install.conf 2>/dev/null || true")).not.toContain(
        "192.0.2.77",
      );

      // The address alone: the postmaster cannot listen anywhere and the cluster stops; rolled back too.
      const stopped = expectFailed(
        await runInstaller(
          vm,
          "install-postgres",
          { ...event, listen_addresses: "192.0.2.78" },
          { secrets: [PASSWORD] },
        ),
      );
      expect(stopped).toMatch(/listen_addresses '192\.0\.2\.78' stopped PostgreSQL 15\/main/);
      expect(stopped).toMatch(/could not create any TCP\/IP sockets|could not bind/);
      expect((await root(vm, "systemctl is-active postgresql@15-main")).trim()).toBe("active");
      expect((await root(vm, "cd / && sudo -u postgres psql -XAtc 'SHOW listen_addresses'")).trim()).toBe("localhost");
      // What an older version left behind: its drop-in with such a value, and the cluster down (its failed
      // restart; stopped here, as a restart with that value can leave the unit activating for good).
      await root(
        vm,
        "printf \"listen_addresses = '192.0.2.79'\\n\" > /etc/postgresql/15/main/conf.d/90-vm-install.conf && chown postgres: /etc/postgresql/15/main/conf.d/90-vm-install.conf && systemctl stop postgresql@15-main",
      );
      expect((await vm.rootExec("systemctl is-active postgresql@15-main")).stdout.trim()).not.toBe("active");

      const fixed = await runInstaller(
        vm,
        "install-postgres",
        { ...event, listen_addresses: `localhost,${vm.address}` },
        { secrets: [PASSWORD] },
      );
      expectSucceeded(fixed);
      expect(fixed.result.listen_addresses).toBe(`localhost,${vm.address}`);
      expect(fixed.result.changes.join("\n")).toMatch(/would not start with listen_addresses '192\.0\.2\.79'/);
      expect((await root(vm, "cd / && sudo -u postgres psql -XAtc 'SHOW listen_addresses'")).trim()).toBe(
        `localhost,${vm.address}`,
      );
      expect(await vmProblems(vm, ["postgresql-15"])).toEqual([]);
      return { outcome: "job failed naming the value, rolled back; fixed rerun completed", since };
    },
  );

  matrixCase(
    "wrong Docker repoUrl over docker.io",
    "a wrong Docker repoUrl (key served, no index for the release) over an installed docker.io: the job fails, docker still works",
    async () => {
      const vm = await started.sandbox();
      expectSucceeded(
        await runInstaller(vm, "install-docker", { channel: "distro", verify: "daemon", compose: false }),
      );
      // A repository that serves a good key but only another release's index: apt-get update fails on it.
      const repo = await started.dockerRepo({ host: vm.hostAddress, suite: "trixie" });
      const bad = await runInstaller(vm, "install-docker", {
        repo_url: repo.url,
        repo_key_fingerprint: repo.fingerprint,
        verify: "daemon",
        compose: false,
      });
      const since = Date.now();
      expect(expectFailed(bad)).toMatch(/repo_url/);
      // docker.io, containerd and runc are still there and the daemon answers.
      expect(await vmProblems(vm, ["docker.io", "containerd", "runc"])).toEqual([]);
      expect((await root(vm, "docker info --format '{{.ServerVersion}}'")).trim()).toMatch(/^20\.10\./);
      // The failed source is not left behind to break every later apt-get update.
      expect((await root(vm, "ls /etc/apt/sources.list.d/")).trim()).not.toContain("docker");
      expect((await vm.rootExec("apt-get update -q", { timeoutMs: 120_000 })).code).toBe(0);
      expectSucceeded(
        await runInstaller(vm, "install-docker", { channel: "distro", verify: "daemon", compose: false }),
      );
      return { outcome: "job failed, docker.io kept running; rerun completed", since };
    },
  );
});
