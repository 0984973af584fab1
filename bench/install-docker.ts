// Benchmark: install-docker (channel "distro", verify "daemon", compose false) run as a job runs it (the
// bundle, a fresh Node process through the job runner, SSH, every check) against the same work sent raw
// as one `ssh` command (apt-get update + install docker.io + systemctl enable --now + usermod + docker
// info), each on its own fresh, identical sandbox VM; plus the handler's rerun (already installed).
// Median of N (3). Targets: handler / raw <= 1.10; rerun <= 2 s.
//   node -r ./bin/ts-register.js bench/install-docker.ts [N]
// Root and the sandbox prerequisites are needed (bin/setup). The order of the two alternates per round,
// so neither always gets the mirror's warmer cache.
import { rawDockerDistro, timeRawScript } from "./raw-sequences";
import { median, roundsArg, runMain, timeJob, withSandbox } from "./support";

const rounds = roundsArg("install-docker.ts");
const EVENT = { channel: "distro", verify: "daemon", compose: false };
const sec = (ms: number) => `${(ms / 1000).toFixed(2)}s`;

async function handlerRound(): Promise<{ install: number; rerun: number; steps: Record<string, number> }> {
  return withSandbox(async (sb) => {
    const job = async (expected: string) => {
      const { ms, result } = await timeJob(sb, "install-docker", EVENT);
      if (result.status !== expected) throw new Error(`install-docker: status ${result.status}, expected ${expected}`);
      return { ms, result };
    };
    const first = await job("ok");
    const again = await job("already_installed");
    return { install: first.ms, rerun: again.ms, steps: first.result.timings_ms };
  });
}

/** What the handler does, minus its checks: one root shell, the same packages and service/group steps. */
function rawRound(): Promise<number> {
  return withSandbox((sb) => timeRawScript(sb, rawDockerDistro(sb.user), "docker sequence"));
}

async function main(): Promise<void> {
  const handler: number[] = [];
  const rerun: number[] = [];
  const raw: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const doHandler = async () => {
      const h = await handlerRound();
      handler.push(h.install);
      rerun.push(h.rerun);
      process.stdout.write(`round ${i + 1}: handler ${sec(h.install)} (steps: ${Object.entries(h.steps).map(([k, v]) => `${k} ${sec(v)}`).join(", ")}), rerun ${sec(h.rerun)}\n`);
    };
    const doRaw = async () => {
      const ms = await rawRound();
      raw.push(ms);
      process.stdout.write(`round ${i + 1}: raw ssh ${sec(ms)}\n`);
    };
    if (i % 2 === 0) {
      await doHandler();
      await doRaw();
    } else {
      await doRaw();
      await doHandler();
    }
  }
  const ratio = median(handler) / median(raw);
  process.stdout.write(
    `\ninstall-docker (distro, verify daemon, compose false), median of ${rounds}:\n` +
      `  handler through the runner: ${sec(median(handler))}   [${handler.map(sec).join(", ")}]\n` +
      `  raw single ssh command:     ${sec(median(raw))}   [${raw.map(sec).join(", ")}]\n` +
      `  ratio handler/raw:          ${ratio.toFixed(3)}   (target <= 1.10: ${ratio <= 1.1 ? "met" : "NOT met"})\n` +
      `  rerun (already installed):  ${sec(median(rerun))}   [${rerun.map(sec).join(", ")}]   (target <= 2 s: ${median(rerun) <= 2000 ? "met" : "NOT met"})\n`,
  );
}

runMain(main);
