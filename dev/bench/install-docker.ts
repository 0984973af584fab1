// Benchmark: install-docker run as a job runs it (the bundle, a fresh Node process through the job runner,
// SSH, every check) against the same work sent raw as one root script over one `ssh` session, each on
// its own fresh, identical sandbox VM, N rounds (>= 5) with the side that runs first rotating every
// round; plus the handler's rerun on its VM (already installed). Writes dev/bench/results/install-docker.json.
//   npm run bench:docker [-- N]
import { bundleHandler } from "../../lib/construct/bundling/bundle";
import { rawDockerDistro } from "./raw-sequences";
import { buildResult, commitInfo } from "./results";
import { fmtS, runRounds } from "./rounds";
import { installerSides, phaseLines, report, rerunSeries, roundsArg, runMain } from "./support";

const rounds = roundsArg("install-docker.ts");
/**
 * What is measured: channel "distro", verify "daemon", compose false. The defaults cannot run here (no internet):
 * channel "official" needs download.docker.com, verify "hello-world" pulls from Docker Hub; and Debian 12's own
 * compose is v1 (Python, ~40 more packages), so compose is left out as in the demo.
 */
const EVENT = { channel: "distro", verify: "daemon", compose: false };
const NOT_EXERCISED = [
  'install-docker: channel "official" (the default) needs download.docker.com, unreachable here; ' +
    'measured: channel "distro" (Debian 12\'s docker.io)',
  'install-docker: verify "hello-world" (the default) pulls from Docker Hub, unreachable here; ' +
    'measured: verify "daemon" (docker info)',
  "install-docker: compose (default true) on channel distro is Debian 12's Python compose v1; " +
    "measured without it, as the demo deploys",
];
/** Target: the handler at most 1.10 times the raw sequence (medians). */
const TARGET_RATIO = 1.1;
/** Target: the rerun on the VM it installed (nothing left to do) within 2 s. */
const RERUN_TARGET_MS = 2000;
const log = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<void> {
  const commit = commitInfo();
  const bundle = bundleHandler({ handler: "install-docker" });
  log(
    `install-docker benchmark: ${rounds} rounds, rotating; event ${JSON.stringify(EVENT)}; ` +
      `bundle ${bundle.dir} (${bundle.bytes} bytes)`,
  );
  for (const n of NOT_EXERCISED) log(`not exercised here: ${n}`);
  const sides = installerSides({
    handler: "install-docker",
    handlerLabel: "install-docker (distro) via the runner",
    event: () => EVENT,
    check: async (_sb, r) => {
      if (r.status !== "ok") throw new Error(`install-docker: status ${r.status}, expected ok`);
    },
    checkRerun: (r) => {
      if (r.changed)
        throw new Error(
          `install-docker rerun changed something: ${JSON.stringify({ status: r.status, changes: r.changes })}`,
        );
    },
    rawLabel: "raw docker.io sequence over one ssh",
    // What the handler does on that path: apt-get update, apt-get install docker.io, systemctl enable --now
    // docker, usermod -aG docker, docker info.
    rawScript: (sb) => rawDockerDistro(sb.user),
  });
  const outcome = await runRounds(rounds, sides, log);
  for (const l of phaseLines(outcome.records)) log(l);
  const result = buildResult({
    bench: "install-docker",
    command: `npm run bench:docker -- ${rounds}`,
    description:
      `handler: install-docker ${JSON.stringify(EVENT)} through the job runner on a fresh sandbox; ` +
      "raw: apt-get update, apt-get install docker.io, systemctl enable --now docker, usermod -aG docker, " +
      "docker info, as one root script over one ssh, on another fresh sandbox",
    outcome,
    sideLabels: {
      handler: "install-docker (distro, verify daemon) via the runner",
      raw: "raw docker.io sequence over one ssh",
    },
    comparisons: [
      {
        label: "install-docker (distro, verify daemon)",
        project: "handler",
        baseline: "raw",
        target: TARGET_RATIO,
        rerun: "rerun",
      },
    ],
    series: rerunSeries(outcome, "rerun on the same VM (already installed)", RERUN_TARGET_MS),
    notExercised: NOT_EXERCISED,
    commit,
  });
  report(result, fmtS);
}

runMain(main);
