// What running a step detached costs (issue 10's budget: about 0.3 s per step at most).
//   npm run bench:detach [-- N]   (N rounds, default and minimum 5; root, sandbox prerequisites)
// On one fresh sandbox, over one SSH session, the same short root step run both ways, the side that
// runs first rotating every round: in the SSH channel with sudo (the old path) and detached through a
// transient systemd unit and followed (handlers/common/detached.ts). The step's own time is the same on
// both sides: the difference of the medians is what detaching adds per step. Writes dev/bench/results/detach.json.
import { readConnectionEnv } from "../../handlers/common/connection-env";
import { ResilientConnection } from "../../handlers/common/resilient-connection";
import { connect } from "../../handlers/common/ssh";
import { jobEnvFor } from "../sandbox/index";
import { buildResult, commitInfo } from "./results";
import { fmtMs, median, runRounds } from "./rounds";
import { report, roundsArg, runMain, withSandbox } from "./support";

const rounds = roundsArg("detach-overhead.ts");
/** Two steps: `true` (the bare cost) and `apt-cache policy jq` (a step with output). */
const STEPS = { true: "true", policy: "apt-cache policy jq" } as const;
/** Each side of a round runs its step this many times and counts the median, so one scheduling hiccup does
 * not make a round. */
const PER_ROUND = 5;
/** Issue 10: detaching must not cost more than about 0.3 s per step. */
const TARGET_ADDED_MS = 300;

async function main(): Promise<void> {
  const commit = commitInfo();
  await withSandbox(async (sb) => {
    const target = readConnectionEnv(jobEnvFor(sb));
    const session = await connect(target);
    const conn = new ResilientConnection(session, () => connect(target), {
      job: "bench",
      budget: { started: Date.now(), now: Date.now },
      detach: true,
    });
    const timeSide = (step: string, detached: boolean) => async () => {
      const ms: number[] = [];
      for (let i = 0; i < PER_ROUND; i++) {
        const t = performance.now();
        if (detached) await conn.runDetached(step);
        else await conn.run(step, { sudo: true });
        ms.push(performance.now() - t);
      }
      return median(ms);
    };
    try {
      const sides = Object.entries(STEPS).flatMap(([key, step]) => [
        { name: `channel_${key}`, label: `${step} in the SSH channel`, run: timeSide(step, false) },
        { name: `detached_${key}`, label: `${step} detached and followed`, run: timeSide(step, true) },
      ]);
      const outcome = await runRounds(rounds, sides);
      const result = buildResult({
        bench: "detach",
        command: `npm run bench:detach -- ${rounds}`,
        description:
          "one root step over one SSH session to a sandbox: in the channel with sudo vs detached " +
          `(transient systemd unit, followed); each side of a round is the median of ${PER_ROUND} runs`,
        outcome,
        sideLabels: Object.fromEntries(sides.map((s) => [s.name, s.label])),
        comparisons: Object.entries(STEPS).map(([key, step]) => ({
          label: `detached step (${step}) vs the same in the SSH channel`,
          project: `detached_${key}`,
          baseline: `channel_${key}`,
          // Not a ratio: the target is the time added (target_added_ms); 0 marks the ratio unused.
          target: 0,
          targetAddedMs: TARGET_ADDED_MS,
        })),
        commit,
      });
      report(result, fmtMs);
    } finally {
      await conn.close();
    }
  });
}

runMain(main);
