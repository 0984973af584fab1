// The fault matrix (issue 17): local packages whose maintainer scripts and triggers are cut mid-run, and an
// upgrade killed over the old version's files, each on a sandbox of its own: the job or the next run
// completes with nothing left to repair.
import { describeE2E, expectSucceeded, perTest, root, runInstaller } from "../support/e2e";
import { completesOrRerunCompletes, heldScriptCases, matrixCase, repairedWords, T } from "../support/fault-cases";
import {
  armStrike,
  describeStrike,
  HELD_PACKAGES,
  installHeldPackagesRepo,
  UPGRADE_DIR,
  vmProblems,
} from "../support/faults";

describeE2E("fault matrix: maintainer scripts and triggers cut mid-run, on sandbox VMs", () => {
  const started = perTest(T);
  heldScriptCases(started);

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
