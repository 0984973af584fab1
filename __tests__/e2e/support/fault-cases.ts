// The fault matrix's cases (issue 10, issue 17's many moments), shared by the files under e2e/faults/: each
// file is a group of independent cases on sandboxes of their own, so jest runs the groups side by side.
// A case records (case, outcome, time to recover) through recordFault; `npm run faults` runs them all and
// prints the matrix. Strikes wait for the VM's own progress (a dpkg line, a process), never a delay.
import { expectSucceeded, type InstallerRun, type perTest, root, runInstaller, withoutFrames } from "./e2e";
import {
  armStrike,
  type DpkgStrike,
  describeStrike,
  HELD_PACKAGES,
  holdMaintainerScript,
  installHeldPackagesRepo,
  killAptWhileDownloading,
  recordFault,
  vmProblems,
} from "./faults";

type Started = ReturnType<typeof perTest>;

export const T = 10 * 60_000;
/** A few packages whose unpacking takes seconds: long enough to strike in the middle of it. */
export const PACKAGES = ["gcc", "make"];
/** dpkg unpacking what apt fetched (apt puts its -o Dpkg::Options before --status-fd). */
export const UNPACKING = "dpkg .*--no-triggers --unpack";
export const PASSWORD = "Faults-matrix-pw-1";

/** A run's "repaired dpkg (<what it found>): <what it did>" without the finding (the strike's words say it). */
export function repairedWords(runs: InstallerRun[]): string | undefined {
  const line = runs.flatMap((r) => r.result?.changes ?? []).find((c: string) => c.startsWith("repaired dpkg"));
  return line === undefined ? undefined : `repaired dpkg: ${line.slice(line.indexOf("): ") + 3)}`;
}

export function expectFailed(run: InstallerRun): string {
  expect(run.phase === "Failed" ? "Failed" : `Succeeded: ${run.message}`).toBe("Failed");
  return run.message;
}

/**
 * Runs `first` (the job the fault hits); when it failed, runs the same job once more, with no manual
 * step between. Returns what happened, for the matrix, after asserting that one of the two completed.
 */
export async function completesOrRerunCompletes(
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
export function matrixCase(name: string, title: string, body: () => Promise<{ outcome: string; since: number }>): void {
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

// Issue 17: one install of postgresql (29 packages on Debian 12, an essential one upgraded first) cut
// at many moments of its own progress, each on a sandbox of its own: download, the essential's unpack,
// an unpack after a preinst, apt-get dying under dpkg, maintainer scripts running, a trigger pending.
// Each moment is a line dpkg reports (support/faults.ts armStrike), so the kill lands there under any
// load. One moment per state the kill leaves and repair it takes (issue 31): the largest and the last
// unpack left what unpack 10 of 29 leaves (one package iHR, the ones before iU, libc-bin=it) and were
// repaired alike; the kill in libc-bin's trigger processing left libc-bin=it, as the postinst moments do.
const PG = ["postgresql", "postgresql-15", "postgresql-common", "perl-base"];
export const MOMENTS: { moment: string; strike?: DpkgStrike }[] = [
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
];

/** Issue 17's cases for `moments`, each on a sandbox of its own with a fresh install of postgresql. */
export function postgresMomentCases(started: Started, moments: typeof MOMENTS): void {
  for (const { moment, strike } of moments) {
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

/** The maintainer-script cases: a local package's script held running, then killed (or dpkg under it). */
export function heldScriptCases(started: Started): void {
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
}
