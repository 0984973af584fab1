// Benchmark: what the install-packages job costs over doing the same by hand, each side on its own fresh
// sandbox (same image: no package lists, nothing installed), the side that runs first rotating every round,
// plus the handler's rerun on its VM. Sandbox boot and teardown are outside every measurement. Prints every
// run, medians with min and max, the ratio handler/raw, the rerun and the handler's timings_ms per phase;
// writes dev/bench/results/install-packages.json.
//   npm run bench:packages [-- N]     (N rounds, >= 5, default 5; root, sandbox prerequisites)
import { bundleHandler } from "../../lib/construct/bundling/bundle";
import type { Sandbox } from "../sandbox/index";
import { rawPackages } from "./raw-sequences";
import { buildResult, commitInfo } from "./results";
import { fmtMs, runRounds } from "./rounds";
import { installerSides, phaseLines, report, rerunSeries, roundsArg, runMain } from "./support";

const rounds = roundsArg("install-packages.ts");
const PACKAGES = ["git", "curl", "jq", "htop", "unzip"];
/** Target: the handler at most 1.10 times the raw sequence (medians). */
const TARGET_RATIO = 1.1;
/** Target: the rerun on the VM it installed (everything in place) within 1500 ms. */
const RERUN_TARGET_MS = 1500;
const log = (line: string) => process.stdout.write(`${line}\n`);

/** Both paths must leave the same packages installed, or the comparison is of different work. */
async function checkInstalled(sb: Sandbox): Promise<void> {
  const r = await sb.rootExec(`dpkg-query -W -f='\${Package} \${Status}\\n' ${PACKAGES.join(" ")}`);
  const ok = r.stdout.split("\n").filter((l) => / install ok installed$/.test(l)).length;
  if (ok !== PACKAGES.length)
    throw new Error(`${sb.name}: expected ${PACKAGES.length} packages installed, dpkg says:\n${r.stdout}`);
}

async function main(): Promise<void> {
  const commit = commitInfo();
  const bundle = bundleHandler({ handler: "install-packages" });
  log(
    `install-packages benchmark: ${rounds} rounds, rotating; packages ${PACKAGES.join(" ")}; ` +
      `bundle ${bundle.dir} (${bundle.bytes} bytes)`,
  );
  // handler: install-packages {packages: git curl jq htop unzip, update: true}, bundled as the stack bundles it
  //   and run by the job runner (a fresh Node process, as the platform starts a job); then again on the same
  //   VM, where everything is installed now (the rerun).
  // raw: the same work as one root script over one `ssh` session: the same `apt-get update -q` and
  //   `apt-get install -y -q git curl jq htop unzip` (dev/bench/raw-sequences.ts).
  // Both must leave the same packages installed.
  const sides = installerSides({
    handler: "install-packages",
    handlerLabel: "install-packages via the runner",
    event: () => ({ packages: PACKAGES, update: true }),
    check: async (sb, r) => {
      // curl is in the sandbox's base image: already_installed, like on most cloud images.
      const done = [...(r.installed as string[]), ...(r.already_installed as string[])].sort();
      if (done.join(" ") !== [...PACKAGES].sort().join(" ") || (r.failed as unknown[]).length) {
        const got = { installed: r.installed, already_installed: r.already_installed, failed: r.failed };
        throw new Error(`install-packages: ${JSON.stringify(got)}`);
      }
      await checkInstalled(sb);
    },
    checkRerun: (r) => {
      if (r.changed !== false || (r.installed as string[]).length !== 0)
        throw new Error(`the rerun changed something: ${JSON.stringify(r)}`);
    },
    rawLabel: "raw apt-get update + install over one ssh",
    rawScript: () => rawPackages(PACKAGES),
    rawCheck: checkInstalled,
  });
  const outcome = await runRounds(rounds, sides, log);
  for (const l of phaseLines(outcome.records)) log(l);
  const result = buildResult({
    bench: "install-packages",
    command: `npm run bench:packages -- ${rounds}`,
    description:
      `handler: install-packages {packages: ${PACKAGES.join(" ")}, update: true} through the job runner ` +
      "on a fresh sandbox; " +
      "raw: apt-get update -q + apt-get install -y -q of the same packages as one root script over one ssh, " +
      "on another fresh sandbox",
    outcome,
    sideLabels: { handler: "install-packages via the runner", raw: "raw apt-get over one ssh" },
    comparisons: [
      {
        label: "install-packages (5 packages)",
        project: "handler",
        baseline: "raw",
        target: TARGET_RATIO,
        rerun: "rerun",
      },
    ],
    series: rerunSeries(outcome, "rerun on the same VM (all installed)", RERUN_TARGET_MS),
    commit,
  });
  report(result, fmtMs);
}

runMain(main);
