// Benchmark for issue 20 item 5: would an opt-in `fastInstall` (dpkg without its fsyncs, on a VM the stack
// has just created) beat the raw floor by the 15% that adopting it needs? Raw sequences only (the floor):
// postgres and packages as the installers' own apt lines, plain vs --force-unsafe-io vs eatmydata, and two
// installers on one VM with the next one's downloads overlapping the previous one's dpkg. Fresh sandbox
// per run, sides rotated every round; eatmydata is set up before the timed run. Verdict: docs/benchmarks.md.
//   npm run bench:fast [-- N]     writes dev/bench/results/fast-install.json
import type { Sandbox } from "../sandbox/index";
import { type Fsync, rawPackages, rawPostgres, rawTwoInstalls, timeRawSteps } from "./raw-sequences";
import { buildResult, commitInfo } from "./results";
import { fmtS, mergeOutcomes, type RoundsOutcome, runRounds, type SideSpec } from "./rounds";
import { report, roundsArg, runMain, withSandbox } from "./support";

const PACKAGES = ["git", "curl", "jq", "htop", "unzip"];
const PASSWORD = "bench pw";
/** Adopting fastInstall needs the postgres install at least 15% faster than the raw floor. */
export const ADOPT_AT = 0.85;

const FSYNC_LABEL: Record<Fsync, string> = {
  safe: "raw floor",
  "unsafe-io": "raw + dpkg --force-unsafe-io",
  eatmydata: "raw under eatmydata",
};

/** eatmydata from the mirror, then apt's lists and cache dropped again, so the timed run starts as cold. */
const EATMYDATA_SETUP =
  "set -e; export DEBIAN_FRONTEND=noninteractive; apt-get update -q >/dev/null;" +
  " apt-get install -y -q eatmydata >/dev/null;" +
  " apt-get clean; rm -rf /var/lib/apt/lists/*";

/** The timed script of one side; `sb` gives the postgres side its remote CIDR. */
export type Work = "postgres" | "packages";
export function fastScript(work: Work, fsync: Fsync, sb: Pick<Sandbox, "hostAddress">): string {
  return work === "postgres"
    ? rawPostgres({ db: "shop", user: "shop_app", password: PASSWORD, remoteCidr: `${sb.hostAddress}/32`, fsync })
    : rawPackages(PACKAGES, { fsync });
}

/** The side names and labels, for the fsync modes measured (eatmydata only when the mirror has it). */
export function fsyncSides(modes: Fsync[]): { name: string; label: string; work: Work; fsync: Fsync }[] {
  return (["postgres", "packages"] as Work[]).flatMap((work) =>
    modes.map((fsync) => ({ name: `${work}_${fsync}`, label: `${work}: ${FSYNC_LABEL[fsync]}`, work, fsync })),
  );
}

/** The rotated groups: postgres by fsync mode, packages by fsync mode, the two installs with and without overlap. */
function groups(modes: Fsync[]): SideSpec[][] {
  const fsync = (work: Work): SideSpec[] =>
    fsyncSides(modes)
      .filter((s) => s.work === work)
      .map((s) => ({
        name: s.name,
        label: s.label,
        run: () =>
          withSandbox(async (sb) => {
            if (s.fsync === "eatmydata") await setup(sb);
            const raw = await timeRawSteps(sb, fastScript(s.work, s.fsync, sb), s.label);
            return { ms: raw.ms, extra: { steps_ms: raw.steps } };
          }),
      }));
  const two = (overlap: boolean): SideSpec => ({
    name: overlap ? "two_overlap" : "two_sequential",
    label: `packages then postgresql on one VM${overlap ? ", postgresql's .debs fetched during the first dpkg" : ""}`,
    run: () =>
      withSandbox(async (sb) => {
        const raw = await timeRawSteps(sb, rawTwoInstalls(PACKAGES, ["postgresql"], { overlap }), "two installs");
        return { ms: raw.ms, extra: { steps_ms: raw.steps } };
      }),
  });
  return [fsync("postgres"), fsync("packages"), [two(false), two(true)]];
}

async function setup(sb: Sandbox): Promise<void> {
  const r = await sb.rootExec(EATMYDATA_SETUP);
  if (r.code !== 0) throw new Error(`eatmydata setup failed on ${sb.name}: exit ${r.code}\n${r.stderr.slice(-800)}`);
}

/** Whether the mirror has eatmydata: one probe on a sandbox of its own, before any round. */
async function eatmydataAvailable(): Promise<boolean> {
  return withSandbox(async (sb) => (await sb.rootExec(EATMYDATA_SETUP)).code === 0);
}

async function main(): Promise<void> {
  const rounds = roundsArg("fast-install.ts");
  const commit = commitInfo();
  const log = (l: string) => process.stdout.write(`${l}\n`);
  const modes: Fsync[] = (await eatmydataAvailable()) ? ["safe", "unsafe-io", "eatmydata"] : ["safe", "unsafe-io"];
  const notExercised = modes.includes("eatmydata")
    ? []
    : ["fast-install: eatmydata is not on this machine's Debian mirror; measured: dpkg --force-unsafe-io alone"];
  log(`fast-install benchmark: ${rounds} rounds, rotating; fsync modes ${modes.join(", ")}`);
  const outcomes: RoundsOutcome[] = [];
  for (const g of groups(modes)) outcomes.push(await runRounds(rounds, g, log));
  const outcome = mergeOutcomes(outcomes);
  const all = fsyncSides(modes);
  const result = buildResult({
    bench: "fast-install",
    command: `npm run bench:fast -- ${rounds}`,
    description:
      "raw root scripts over one ssh on fresh sandboxes (Debian 12): postgres (update, install postgresql, role/db, " +
      "remote access, restart, TCP psql) and packages (update, install git curl jq htop unzip), each plain, " +
      "with dpkg " +
      "--force-unsafe-io and under eatmydata (installed before the timed run, lists dropped again); two_*: update, " +
      "packages, then postgresql, with postgresql's .debs fetched (print-uris + curl) during the first dpkg or not",
    outcome,
    sideLabels: Object.fromEntries([
      ...all.map((s) => [s.name, s.label]),
      ...groups([]).flatMap((g) => g.map((s) => [s.name, s.label])),
    ]),
    comparisons: [
      ...all
        .filter((s) => s.fsync !== "safe")
        .map((s) => ({
          label: `fastInstall? ${s.label} vs raw floor`,
          project: s.name,
          baseline: `${s.work}_safe`,
          target: ADOPT_AT,
        })),
      {
        label: "fastInstall? next installer's downloads during the previous dpkg",
        project: "two_overlap",
        baseline: "two_sequential",
        target: ADOPT_AT,
      },
    ],
    notExercised,
    commit,
  });
  report(result, fmtS);
}

if (require.main === module) runMain(main);
