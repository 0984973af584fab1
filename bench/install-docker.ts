// Benchmark: install-docker (channel "distro", verify "daemon", compose false) run as a job runs it (the
// bundle, a fresh Node process through the job runner, SSH, every check) against the same work sent raw
// as one `ssh` command (apt-get update + install docker.io + systemctl enable --now + usermod + docker
// info), each on its own fresh, identical sandbox VM; plus the handler's rerun (already installed).
// Median of N (3). Targets: handler / raw <= 1.10; rerun <= 2 s.
//   node -r ./bin/ts-register.js bench/install-docker.ts [N]
// Root and the sandbox prerequisites are needed (bin/setup). The order of the two alternates per round,
// so neither always gets the mirror's warmer cache.
import { execFile } from "child_process";
import * as fs from "fs";
import { bundleHandler } from "../lib/bundling/bundle";
import { runJob } from "../lib/runner/run-job";
import { Sandbox, startSandbox } from "../sandbox";

const rounds = Number(process.argv[2] ?? 3);
const EVENT = { channel: "distro", verify: "daemon", compose: false };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sec = (ms: number) => `${(ms / 1000).toFixed(2)}s`;

function rawCommand(user: string): string {
  // What the handler does, minus its checks: one root shell, the same packages and service/group steps.
  const script = "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io && " +
    `systemctl enable --now docker.service && usermod -aG docker ${user} && docker info --format '{{.ServerVersion}}'`;
  return `sudo -n sh -c "${script}"`;
}

function ssh(sb: Sandbox, command: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile("ssh", ["-F", "/dev/null", "-i", sb.privateKeyPath, "-p", String(sb.port), "-o", `UserKnownHostsFile=${sb.knownHostsPath}`,
      "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o", "LogLevel=ERROR", `${sb.user}@${sb.address}`, command],
    { encoding: "utf8", maxBuffer: 64 << 20, timeout: 900_000 },
    (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 255) : 0, stdout, stderr }));
  });
}

async function withSandbox<T>(fn: (sb: Sandbox) => Promise<T>): Promise<T> {
  const sb = await startSandbox();
  try {
    return await fn(sb);
  } finally {
    await sb.stop();
  }
}

async function handlerRound(dir: string): Promise<{ install: number; rerun: number; steps: Record<string, number> }> {
  return withSandbox(async (sb) => {
    const env = { VM_IP: sb.address, SSH_USER: sb.user, SSH_PORT: String(sb.port), SSH_KEY: fs.readFileSync(sb.privateKeyPath, "utf8") };
    const job = async (expected: string) => {
      const t = Date.now();
      const out = await runJob({ dir, env, event: EVENT, secrets: [env.SSH_KEY], timeoutSec: 900 });
      const ms = Date.now() - t;
      if (out.phase !== "Succeeded") throw new Error(`install-docker failed: ${out.message}`);
      const result = JSON.parse(out.message);
      if (result.status !== expected) throw new Error(`install-docker: status ${result.status}, expected ${expected}`);
      return { ms, result };
    };
    const first = await job("ok");
    const again = await job("already_installed");
    return { install: first.ms, rerun: again.ms, steps: first.result.timings_ms };
  });
}

async function rawRound(): Promise<number> {
  return withSandbox(async (sb) => {
    const t = Date.now();
    const r = await ssh(sb, rawCommand(sb.user));
    const ms = Date.now() - t;
    if (r.code !== 0 || !/^[0-9]/.test(r.stdout.trim().split("\n").pop() ?? "")) throw new Error(`raw ssh sequence failed (exit ${r.code}): ${r.stderr.slice(-2000)}`);
    return ms;
  });
}

async function main(): Promise<void> {
  const bundle = bundleHandler({ handler: "install-docker" }); // deploy-time work: not measured
  const handler: number[] = [];
  const rerun: number[] = [];
  const raw: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const doHandler = async () => {
      const h = await handlerRound(bundle.dir);
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

main().catch((err) => {
  process.stderr.write(`bench/install-docker: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
