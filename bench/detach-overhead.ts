// What running a step detached costs (issue 10's budget: about 0.3 s per step at most).
//   npm run bench:detach [-- N]   (N pairs, default 20; root, sandbox prerequisites)
// On one fresh sandbox, over one SSH session, the same short root step (`true`, then `apt-cache policy
// jq` as a stand-in with output) run N times each way, alternating: in the SSH channel with sudo (the
// old path) and detached through a transient systemd unit and followed (common/detached.ts). Prints
// both medians and the difference per step; the step's own time is the same on both sides.
import { readConnectionEnv } from "../handlers/common/connection-env";
import { ResilientConnection } from "../handlers/common/resilient-connection";
import { connect } from "../handlers/common/ssh";
import { jobEnvFor, startSandbox } from "../sandbox";

const n = Math.max(5, Number(process.argv[2] ?? 20) || 20);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function main(): Promise<void> {
  const sb = await startSandbox();
  try {
    const target = readConnectionEnv(jobEnvFor(sb));
    const session = await connect(target);
    const conn = new ResilientConnection(session, () => connect(target), { job: "bench", budget: { started: Date.now(), now: Date.now }, detach: true });
    for (const step of ["true", "apt-cache policy jq"]) {
      const plain: number[] = [];
      const detached: number[] = [];
      for (let i = 0; i < n; i++) {
        for (const side of i % 2 ? ["detached", "plain"] : ["plain", "detached"]) {
          const t = performance.now();
          if (side === "plain") await conn.run(step, { sudo: true });
          else await conn.runDetached(step);
          (side === "plain" ? plain : detached).push(performance.now() - t);
        }
      }
      const p = median(plain);
      const d = median(detached);
      process.stdout.write(
        `${step}: in the channel ${p.toFixed(0)} ms, detached ${d.toFixed(0)} ms (median of ${n} each, alternating): +${(d - p).toFixed(0)} ms per step; target <= 300 ms: ${d - p <= 300 ? "met" : "NOT met"}\n`,
      );
    }
    await conn.close();
  } finally {
    await sb.stop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  },
);
