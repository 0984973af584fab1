// The fault matrix (issue 10), interruptions: the network cut, sshd restarted, the job killed, the dpkg
// lock held, the time budget spent, each in the middle of an install on a sandbox of its own, each ending
// with an assertion on the VM itself (packages, `dpkg --audit` empty, locks free, nothing left running).
import type { Sandbox } from "../../../dev/sandbox/index";
import { describeE2E, expectSucceeded, type InstallerRun, perTest, root, runInstaller } from "../support/e2e";
import { completesOrRerunCompletes, expectFailed, matrixCase, PACKAGES, T, UNPACKING } from "../support/fault-cases";
import { cutNetworkFor, holdDpkgLock, vmProblems, waitForProcess } from "../support/faults";

describeE2E("fault matrix: interruptions in the middle of an install, on sandbox VMs", () => {
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
      let budget = 15;
      try {
        // apt-get install waits up to 120 s for the lock by itself; the job may take `budget` s in all. On a
        // loaded machine the steps before the install (update, reading the holder) can spend a short budget:
        // that is a timeout naming its step too, and the job runs again on a doubled budget until the
        // budget runs out in the install itself.
        for (;;) {
          run = await runInstaller(vm, "install-packages", {
            packages: ["jq"],
            update: true,
            time_budget_sec: budget,
            apt: { lock_timeout_sec: 120, lock_attempts: 1 },
          });
          const message = expectFailed(run);
          expect(message).toMatch(/timed out during "[^"]+": the job's time budget \(time_budget_sec \d+s/);
          if (message.includes('during "apt-get install jq"') || budget >= 60) break;
          budget *= 2;
        }
      } finally {
        hold.release();
        await hold.done;
      }
      const since = Date.now();
      const message = expectFailed(run);
      const budgetWords = `the job's time budget (time_budget_sec ${budget}s`;
      expect(message).toContain(`timed out during "apt-get install jq": ${budgetWords}`);
      expect(message).toMatch(/the step itself was not stopped: it goes on on the VM/);
      expect(run.durationMs).toBeLessThan((budget + 15) * 1000);
      const rerun = await runInstaller(vm, "install-packages", { packages: ["jq"], update: true });
      expectSucceeded(rerun);
      expect(await vmProblems(vm, ["jq"])).toEqual([]);
      return { outcome: "job failed as a timeout naming the step; apt went on on the VM; rerun completed", since };
    },
  );
});
