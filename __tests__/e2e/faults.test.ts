// The fault matrix (issue 10): things that go wrong in the middle of an install, made to happen on a
// sandbox VM at the moment that hurts most, each case ending with an assertion on the VM itself: the
// packages installed, `dpkg --audit` empty, apt's locks free, no apt-get or dpkg left running, the
// service still (or again) answering. A case passes when the job completes, or the next run completes
// with no manual step in between; nothing is ever repaired by the test.
//
// Each case records (case, outcome, time to recover) in .cache/faults.json (FAULTS_REPORT); `npm run
// faults` runs this file and prints the matrix. Strikes wait for the condition (a dpkg --unpack process
// on the target, a line of dpkg's own --status-fd progress, a maintainer script saying it runs), never
// for a guessed delay. Under CI=true every case runs (describeE2E).
//
// Issue 17's many-moments cases each boot a sandbox of their own (about 1 s) and install postgresql
// afresh: a kill leaves a different dpkg state at each moment, and a fresh VM is the only start that
// makes the moment the same on every run.
import type { Sandbox } from "../../sandbox/index";
import {
  describeE2E,
  expectSucceeded,
  type InstallerRun,
  perTest,
  root,
  runInstaller,
  withoutFrames,
} from "./support/e2e";
import {
  armStrike,
  cutNetworkFor,
  type DpkgStrike,
  describeStrike,
  HELD_PACKAGES,
  holdDpkgLock,
  holdMaintainerScript,
  installHeldPackagesRepo,
  killAptWhileDownloading,
  recordFault,
  UPGRADE_DIR,
  vmProblems,
  waitForProcess,
} from "./support/faults";

const T = 10 * 60_000;
/** A few packages whose unpacking takes seconds: long enough to strike in the middle of it. */
const PACKAGES = ["gcc", "make"];
/** dpkg unpacking what apt fetched (apt puts its -o Dpkg::Options before --status-fd). */
const UNPACKING = "dpkg .*--no-triggers --unpack";
const PASSWORD = "Faults-matrix-pw-1";

/** A run's "repaired dpkg (<what it found>): <what it did>" without the finding (the strike's words say it). */
function repairedWords(runs: InstallerRun[]): string | undefined {
  const line = runs.flatMap((r) => r.result?.changes ?? []).find((c: string) => c.startsWith("repaired dpkg"));
  return line === undefined ? undefined : `repaired dpkg: ${line.slice(line.indexOf("): ") + 3)}`;
}

function expectFailed(run: InstallerRun): string {
  expect(run.phase === "Failed" ? "Failed" : `Succeeded: ${run.message}`).toBe("Failed");
  return run.message;
}

/**
 * Runs `first` (the job the fault hits); when it failed, runs the same job once more, with no manual
 * step between. Returns what happened, for the matrix, after asserting that one of the two completed.
 */
async function completesOrRerunCompletes(
  first: Promise<InstallerRun>,
  rerun: () => Promise<InstallerRun>,
): Promise<{ outcome: string; runs: InstallerRun[] }> {
  const one = await first;
  const followed = one.lines.some((l) => /reconnecting to follow it/.test(l))
    ? " (lost the connection, reconnected and followed the step)"
    : "";
  if (one.phase === "Succeeded") return { outcome: `job completed${followed}`, runs: [one] };
  const two = await rerun();
  expectSucceeded(two);
  return {
    outcome: `job failed (${withoutFrames(one.message).split("\n")[0].slice(0, 90)}), rerun completed`,
    runs: [one, two],
  };
}

/**
 * A matrix case: `body` strikes and returns what happened; a case that throws is recorded as failed
 * (with the first line of its error) before jest reports it.
 */
function matrixCase(name: string, title: string, body: () => Promise<{ outcome: string; since: number }>): void {
  test(
    title,
    async () => {
      const started = Date.now();
      try {
        const { outcome, since } = await body();
        recordFault({ case: name, outcome, recoverMs: Date.now() - since, ok: true });
      } catch (err) {
        const first =
          withoutFrames(String((err as Error).message))
            .split("\n")
            .find((l) => l.trim()) ?? "failed";
        recordFault({
          case: name,
          outcome: `FAILED: ${first.trim().slice(0, 120)}`,
          recoverMs: Date.now() - started,
          ok: false,
        });
        throw err;
      }
    },
    T,
  );
}

describeE2E("fault matrix: faults in the middle of an install, on sandbox VMs", () => {
  const started = perTest(T);

  const packagesJob = (vm: Sandbox, opts: { signal?: AbortSignal } = {}) =>
    runInstaller(vm, "install-packages", { packages: PACKAGES, update: true }, opts);

  matrixCase(
    "network cut 20 s mid apt-get install",
    "the network to the VM cut for 20 s in the middle of apt-get install: the job completes, or the next run does",
    async () => {
      const vm = await started.sandbox();
      const job = packagesJob(vm);
      await waitForProcess(vm, UNPACKING);
      const { downAt } = await cutNetworkFor(vm, 20_000);
      const { outcome } = await completesOrRerunCompletes(job, () => packagesJob(vm));
      expect(await vmProblems(vm, PACKAGES)).toEqual([]);
      return { outcome, since: downAt };
    },
  );

  matrixCase("sshd restarted mid-job", "sshd restarted mid-job: the job completes", async () => {
    const vm = await started.sandbox();
    const job = packagesJob(vm);
    await waitForProcess(vm, UNPACKING);
    await root(vm, "systemctl restart ssh");
    const since = Date.now();
    expectSucceeded(await job);
    expect(await vmProblems(vm, PACKAGES)).toEqual([]);
    expect((await root(vm, "systemctl is-active ssh")).trim()).toBe("active");
    return { outcome: "job completed", since };
  });

  matrixCase(
    "job process killed mid-install",
    "the job's own process killed mid-install (the runner gives up): the next run attaches to or repairs what is left and completes",
    async () => {
      const vm = await started.sandbox();
      const abort = new AbortController();
      const job = packagesJob(vm, { signal: abort.signal });
      await waitForProcess(vm, UNPACKING);
      abort.abort();
      const since = Date.now();
      expectFailed(await job);
      const rerun = await packagesJob(vm);
      expectSucceeded(rerun);
      expect(rerun.result.status).toBe("ok");
      expect(await vmProblems(vm, PACKAGES)).toEqual([]);
      // The killed job's apt-get went on detached; the rerun found it still running (and waited for or
      // attached to it) or already finished: never a second apt beside it.
      const met = rerun.lines.find((l) => /(waiting for|attached to) step/.test(l));
      return {
        outcome: `job killed; rerun completed${met ? ` (${met.includes("attached") ? "attached to" : "waited for"} the killed job's apt step)` : " (the killed job's apt step had finished)"}`,
        since,
      };
    },
  );

  matrixCase(
    "dpkg lock held past the lock budget",
    "the dpkg lock held longer than the lock budget: the job fails naming pid and command; the next run after it frees succeeds",
    async () => {
      const vm = await started.sandbox();
      const hold = await holdDpkgLock(vm, 600);
      let failed: InstallerRun;
      try {
        failed = await runInstaller(vm, "install-packages", {
          packages: ["jq"],
          update: true,
          apt: { lock_timeout_sec: 2, lock_attempts: 2, lock_retry_delay_sec: 1 },
        });
      } finally {
        hold.release();
        await hold.done;
      }
      const since = Date.now();
      expect(expectFailed(failed)).toContain(`held by pid ${hold.pid} (${hold.command}`); // "; unit ..." may follow
      const rerun = await runInstaller(vm, "install-packages", { packages: ["jq"], update: true });
      expectSucceeded(rerun);
      expect(await vmProblems(vm, ["jq"])).toEqual([]);
      return { outcome: "job failed naming pid and command; rerun completed", since };
    },
  );

  matrixCase(
    "job time budget runs out mid-step",
    "the job's time budget runs out while apt-get install waits: a timeout naming the step; apt is not killed, it finishes on the VM, the rerun completes",
    async () => {
      const vm = await started.sandbox();
      const hold = await holdDpkgLock(vm, 600);
      let run: InstallerRun;
      try {
        // apt-get install waits up to 60 s for the lock by itself; the job may take 15 s in all.
        run = await runInstaller(vm, "install-packages", {
          packages: ["jq"],
          update: true,
          time_budget_sec: 15,
          apt: { lock_timeout_sec: 60, lock_attempts: 1 },
        });
      } finally {
        hold.release();
        await hold.done;
      }
      const since = Date.now();
      const message = expectFailed(run);
      expect(message).toMatch(/timed out during "apt-get install jq": the job's time budget \(time_budget_sec 15s/);
      expect(message).toMatch(/the step itself was not stopped: it goes on on the VM/);
      expect(run.durationMs).toBeLessThan(30_000);
      const rerun = await runInstaller(vm, "install-packages", { packages: ["jq"], update: true });
      expectSucceeded(rerun);
      expect(await vmProblems(vm, ["jq"])).toEqual([]);
      return { outcome: "job failed as a timeout naming the step; apt went on on the VM; rerun completed", since };
    },
  );

  matrixCase(
    "unbindable listen_addresses",
    "an unbindable listen_addresses: the job fails naming the value and the server's error, PostgreSQL serves on its old settings, the fixed rerun succeeds",
    async () => {
      const vm = await started.sandbox();
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

  // Issue 17: one install of postgresql (29 packages on Debian 12, an essential one upgraded first) cut
  // at many moments of its own progress, each on a sandbox of its own: download, unpacks early, big and
  // late, apt-get dying under dpkg, maintainer scripts running, triggers. Each moment is a line dpkg
  // reports (support/faults.ts armStrike), so the kill lands there under any load.
  const PG = ["postgresql", "postgresql-15", "postgresql-common", "perl-base"];
  const MOMENTS: { moment: string; strike?: DpkgStrike }[] = [
    { moment: "apt-get killed while a .deb downloads" },
    {
      moment: "apt-get killed after the download, before dpkg starts",
      strike: { on: "^hook: pre-invoke$", kill: "apt-get" },
    },
    {
      moment: "dpkg killed in the first unpack: perl-base upgraded over its old files",
      strike: { on: ": half-installed$", kill: "dpkg" },
    },
    {
      moment: "dpkg killed in unpack 10 of 29 (postgresql-common, after its preinst)",
      strike: { on: ": half-installed$", nth: 10, kill: "dpkg" },
    },
    {
      moment: "dpkg killed mid-unpack of the largest .deb (libllvm14)",
      strike: { on: "^status: libllvm14:amd64: half-installed$", kill: "dpkg" },
    },
    {
      moment: "dpkg killed in the last unpack (sysstat)",
      strike: { on: "^status: sysstat: half-installed$", kill: "dpkg" },
    },
    {
      moment: "apt-get killed mid-unpack (dpkg loses its status pipe)",
      strike: { on: ": half-installed$", nth: 15, kill: "apt-get" },
    },
    {
      moment: "dpkg killed in configure, postgresql-common's postinst running",
      strike: { on: "^status: postgresql-common: half-configured$", kill: "dpkg" },
    },
    {
      moment: "dpkg killed in configure, postgresql-15's postinst creating the cluster",
      strike: { on: "^status: postgresql-15: half-configured$", kill: "dpkg" },
    },
    {
      moment: "dpkg killed with libc-bin's trigger pending",
      strike: { on: "^status: libc-bin: triggers-pending$", kill: "dpkg" },
    },
    {
      moment: "dpkg killed processing triggers (libc-bin's ldconfig)",
      strike: { on: "^processing: trigproc: libc-bin$", kill: "dpkg" },
    },
  ];
  for (const { moment, strike } of MOMENTS) {
    matrixCase(
      `postgresql install: ${moment}`,
      `postgresql install, ${moment}: the job or the next run completes with nothing left to repair`,
      async () => {
        const vm = await started.sandbox();
        const event = { packages: ["postgresql"], update: true };
        const armed = strike ? await armStrike(vm, strike) : undefined;
        const job = runInstaller(vm, "install-packages", event);
        const downloadKill = strike
          ? undefined
          : await killAptWhileDownloading(vm).then(() => ({
              at: Date.now(),
              what: "killed apt-get while a .deb downloaded",
            }));
        const first = await job;
        const struck = downloadKill ?? (await armed?.fired());
        if (!struck || struck.what.startsWith("MISSED")) {
          throw new Error(
            `the moment never came (${struck?.what ?? `no line matched ${strike?.on}`}); the job: ${first.phase} ${first.message.slice(0, 300)}`,
          );
        }
        const hit = struck.what;
        const { outcome, runs } = await completesOrRerunCompletes(Promise.resolve(first), () =>
          runInstaller(vm, "install-packages", event),
        );
        expect(runs[runs.length - 1].result.status).toBe("ok");
        expect(await vmProblems(vm, PG)).toEqual([]);
        // Whatever the kill left in between, the run that finished repaired it and said so.
        const left = /left: (.*)$/.exec(hit)?.[1] ?? "";
        const repaired = repairedWords(runs);
        if (/=i[UFWtH]|=\S\SR/.test(left)) expect(repaired).toBeDefined();
        return {
          outcome: `${describeStrike(hit)}; ${outcome}${repaired ? `; ${repaired}` : ""}`,
          since: struck.at,
        };
      },
    );
  }

  // Maintainer scripts cut mid-run, at the moment they are known to be running: local packages whose
  // script blocks on a fifo while a marker exists (support/faults.ts holdMaintainerScript).
  const HELD: { moment: string; tag: "postinst" | "trigger"; packages: string[]; kill: "the script" | "dpkg" }[] = [
    { moment: "its postinst killed mid-run", tag: "postinst", packages: [HELD_PACKAGES.postinst], kill: "the script" },
    {
      moment: "dpkg killed while its postinst runs",
      tag: "postinst",
      packages: [HELD_PACKAGES.postinst],
      kill: "dpkg",
    },
    {
      moment: "the postinst of a file trigger's package killed mid-run (dpkg processing the trigger)",
      tag: "trigger",
      packages: [HELD_PACKAGES.triggerFiles, HELD_PACKAGES.triggerWatch],
      kill: "the script",
    },
  ];
  for (const { moment, tag, packages, kill } of HELD) {
    matrixCase(
      `local package: ${moment}`,
      `a local package, ${moment}: the job or the next run completes with nothing left to repair`,
      async () => {
        const vm = await started.sandbox();
        await installHeldPackagesRepo(vm);
        // A trigger only runs for a package already configured: configuring it would cover the trigger.
        if (tag === "trigger")
          expectSucceeded(
            await runInstaller(vm, "install-packages", { packages: [HELD_PACKAGES.triggerWatch], update: true }),
          );
        const held = await holdMaintainerScript(vm, tag);
        const event = { packages: packages.slice(0, 1), update: true };
        const job = runInstaller(vm, "install-packages", event);
        const pid = await held.running;
        const left = (
          await root(vm, "dpkg-query -W -f='${Package}=${db:Status-Abbrev}\\n' | grep -v -E '=(ii|un|rc) *$' || true")
        )
          .trim()
          .split("\n")
          .join(" ");
        await held.unhold();
        await root(vm, kill === "dpkg" ? `kill -KILL $(ps -o ppid= -p ${pid})` : `kill -KILL ${pid}`);
        const since = Date.now();
        const { outcome, runs } = await completesOrRerunCompletes(job, () =>
          runInstaller(vm, "install-packages", event),
        );
        expect(await vmProblems(vm, packages)).toEqual([]);
        const repaired = repairedWords(runs);
        expect(repaired).toBeDefined();
        return {
          outcome: `${kill} killed with ${left || "nothing in between"}; ${outcome}${repaired ? `; ${repaired}` : ""}`,
          since,
        };
      },
    );
  }

  matrixCase(
    "local package: dpkg killed with a package triggers-awaited",
    "a local package, dpkg killed the moment a package awaits a trigger: the job or the next run completes with nothing left to repair",
    async () => {
      const vm = await started.sandbox();
      await installHeldPackagesRepo(vm);
      expectSucceeded(
        await runInstaller(vm, "install-packages", { packages: [HELD_PACKAGES.triggerWatch], update: true }),
      );
      // The window runs from this line to dpkg processing the trigger, within one dpkg run and with no
      // script of ours in it: a late strike finds the package installed. What it hit is recorded.
      const armed = await armStrike(vm, {
        on: `^status: ${HELD_PACKAGES.triggerFiles}: triggers-awaited$`,
        kill: "dpkg",
      });
      const event = { packages: [HELD_PACKAGES.triggerFiles], update: true };
      const first = await runInstaller(vm, "install-packages", event);
      const struck = await armed.fired();
      if (!struck || struck.what.startsWith("MISSED"))
        throw new Error(
          `the moment never came (${struck?.what ?? "no triggers-awaited line"}); the job: ${first.phase}`,
        );
      const { outcome, runs } = await completesOrRerunCompletes(Promise.resolve(first), () =>
        runInstaller(vm, "install-packages", event),
      );
      expect(await vmProblems(vm, [HELD_PACKAGES.triggerFiles, HELD_PACKAGES.triggerWatch])).toEqual([]);
      const repaired = repairedWords(runs);
      if (/left: .*(=i[UFWtH]|=\S\SR)/.test(struck.what)) expect(repaired).toBeDefined();
      return {
        outcome: `${describeStrike(struck.what)}; ${outcome}${repaired ? `; ${repaired}` : ""}`,
        since: struck.at,
      };
    },
  );

  matrixCase(
    "local package: dpkg killed upgrading over the old files",
    "a local package, dpkg killed while it unpacks 2.0 over 1.0's 2000 files: the next run completes at 2.0, every file 2.0's",
    async () => {
      const vm = await started.sandbox();
      await installHeldPackagesRepo(vm);
      expectSucceeded(
        await runInstaller(vm, "install-packages", { packages: [`${HELD_PACKAGES.upgrade}=1.0`], update: true }),
      );
      const armed = await armStrike(vm, { on: `^status: ${HELD_PACKAGES.upgrade}: half-installed$`, kill: "dpkg" });
      const event = { packages: [`${HELD_PACKAGES.upgrade}=2.0`], update: true };
      const first = await runInstaller(vm, "install-packages", event);
      const struck = await armed.fired();
      if (!struck || struck.what.startsWith("MISSED"))
        throw new Error(`the moment never came (${struck?.what ?? "no half-installed line"}); the job: ${first.phase}`);
      const { outcome, runs } = await completesOrRerunCompletes(Promise.resolve(first), () =>
        runInstaller(vm, "install-packages", event),
      );
      expect(await vmProblems(vm, [HELD_PACKAGES.upgrade])).toEqual([]);
      expect((await root(vm, `dpkg-query -W -f='\${Version}' ${HELD_PACKAGES.upgrade}`)).trim()).toBe("2.0");
      expect(
        (await root(vm, `cd ${UPGRADE_DIR} && ls | wc -l; grep -L '^2.0$' f* | wc -l`)).trim().split("\n"),
      ).toEqual(["2000", "0"]);
      const repaired = repairedWords(runs);
      if (/left: .*(=i[UFWtH]|=\S\SR)/.test(struck.what)) expect(repaired).toBeDefined();
      return {
        outcome: `${describeStrike(struck.what)}; ${outcome}${repaired ? `; ${repaired}` : ""}`,
        since: struck.at,
      };
    },
  );
});
