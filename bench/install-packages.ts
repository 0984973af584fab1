// Benchmark: what the install-packages job costs over doing the same by hand.
//   node -r ./bin/ts-register.js bench/install-packages.ts [N]     (N rounds, default 3; root, sandbox prerequisites)
//
// Each round boots identical fresh sandboxes (a new one per measured run, so every run starts from the
// same image with no package lists and nothing installed) and measures:
//   (a) install-packages {packages: git curl jq htop unzip, update: true}, bundled as the stack bundles
//       it and run by the job runner (a fresh Node process, as the platform starts a job);
//   (b) the same work as ONE raw command over the `ssh` client:
//       sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y git curl jq htop unzip
//   (c) install-packages again on (a)'s sandbox, where everything is installed now.
// a and b alternate (a b, b a, a b, ...) so load on the machine and the mirror's mood hit both alike.
// Sandbox boot and teardown are outside every measurement. Prints each run, the medians, the ratio
// a/b (target <= 1.10) and the rerun median (target <= 1500 ms), and for (a) the handler's own
// timings_ms per phase, which say where the time goes.
import { execFile } from "child_process";
import * as fs from "fs";
import { bundleHandler } from "../lib/bundling/bundle";
import { runJob } from "../lib/runner/run-job";
import { Sandbox, startSandbox } from "../sandbox";

const rounds = Number(process.argv[2] ?? 3);
if (!Number.isInteger(rounds) || rounds < 1) {
  process.stderr.write("usage: node -r ./bin/ts-register.js bench/install-packages.ts [rounds >= 1]\n");
  process.exit(2);
}
const PACKAGES = ["git", "curl", "jq", "htop", "unzip"];
const RAW = `sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y ${PACKAGES.join(" ")}`;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const log = (line: string) => process.stdout.write(line + "\n");

const bundle = bundleHandler({ handler: "install-packages" });

function env(sb: Sandbox): Record<string, string> {
  return { VM_IP: sb.address, SSH_USER: sb.user, SSH_PORT: String(sb.port), SSH_KEY: fs.readFileSync(sb.privateKeyPath, "utf8") };
}

interface JobRun {
  ms: number;
  timings: Record<string, number>;
  result: Record<string, unknown>;
}

/** One job through the runner; wall time from spawn to outcome (what a platform job would take). */
async function viaRunner(sb: Sandbox): Promise<JobRun> {
  const e = env(sb);
  const started = performance.now();
  const out = await runJob({ dir: bundle.dir, env: e, event: { packages: PACKAGES, update: true }, secrets: [e.SSH_KEY], timeoutSec: 900 });
  const ms = performance.now() - started;
  if (out.phase !== "Succeeded") throw new Error(`install-packages failed on ${sb.name}: ${out.message}`);
  const result = JSON.parse(out.message);
  return { ms, timings: result.timings_ms, result };
}

/** The same work by hand: one `ssh` command; wall time from spawn to exit. */
function viaRawSsh(sb: Sandbox): Promise<number> {
  const args = [
    "-F", "/dev/null", "-i", sb.privateKeyPath, "-p", String(sb.port),
    "-o", `UserKnownHostsFile=${sb.knownHostsPath}`, "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes",
    "-o", "IdentitiesOnly=yes", "-o", "LogLevel=ERROR", `${sb.user}@${sb.address}`, RAW,
  ];
  const started = performance.now();
  return new Promise((resolve, reject) => {
    execFile("ssh", args, { maxBuffer: 64 << 20, timeout: 900_000 }, (err, _stdout, stderr) => {
      const ms = performance.now() - started;
      if (err) reject(new Error(`raw ssh apt-get failed on ${sb.name}: ${err.message}\n${String(stderr).slice(-2000)}`));
      else resolve(ms);
    });
  });
}

/** Both paths must leave the same packages installed, or the comparison is of different work. */
async function checkInstalled(sb: Sandbox): Promise<void> {
  const r = await sb.rootExec(`dpkg-query -W -f='\${Package} \${Status}\\n' ${PACKAGES.join(" ")}`);
  const ok = r.stdout.split("\n").filter((l) => / install ok installed$/.test(l)).length;
  if (ok !== PACKAGES.length) throw new Error(`${sb.name}: expected ${PACKAGES.length} packages installed, dpkg says:\n${r.stdout}`);
}

const live = new Set<Sandbox>();
async function withSandbox<T>(fn: (sb: Sandbox) => Promise<T>): Promise<T> {
  const sb = await startSandbox();
  live.add(sb);
  try {
    return await fn(sb);
  } finally {
    live.delete(sb);
    await sb.stop();
  }
}
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.once(sig, () => {
    Promise.allSettled([...live].map((sb) => sb.stop())).finally(() => process.exit(130));
  });
}

const fmt = (ms: number) => `${Math.round(ms)} ms`;
const phases = (t: Record<string, number>) => Object.entries(t).map(([k, v]) => `${k} ${v}`).join(", ");

async function main(): Promise<void> {
  log(`install-packages benchmark: ${rounds} rounds, packages ${PACKAGES.join(" ")}; bundle ${bundle.dir} (${bundle.bytes} bytes)`);
  const a: JobRun[] = [];
  const b: number[] = [];
  const c: JobRun[] = [];
  const runA = () =>
    withSandbox(async (sb) => {
      const run = await viaRunner(sb);
      await checkInstalled(sb);
      a.push(run);
      log(`  (a) runner   ${fmt(run.ms).padStart(8)}   timings_ms: ${phases(run.timings)}`);
      // (c) on the same VM, now that everything is there.
      const again = await viaRunner(sb);
      if (again.result.changed !== false || (again.result.installed as string[]).length !== 0) {
        throw new Error(`the rerun changed something: ${JSON.stringify(again.result)}`);
      }
      c.push(again);
      log(`  (c) rerun    ${fmt(again.ms).padStart(8)}   timings_ms: ${phases(again.timings)}`);
    });
  const runB = () =>
    withSandbox(async (sb) => {
      const ms = await viaRawSsh(sb);
      await checkInstalled(sb);
      b.push(ms);
      log(`  (b) raw ssh  ${fmt(ms).padStart(8)}`);
    });

  for (let i = 0; i < rounds; i++) {
    log(`round ${i + 1}/${rounds}`);
    if (i % 2 === 0) {
      await runA();
      await runB();
    } else {
      await runB();
      await runA();
    }
  }

  const ma = median(a.map((r) => r.ms));
  const mb = median(b);
  const mc = median(c.map((r) => r.ms));
  log("");
  log(`(a) install-packages via the runner: ${a.map((r) => fmt(r.ms)).join(", ")}; median ${fmt(ma)}`);
  log(`(b) one raw ssh apt-get command:     ${b.map(fmt).join(", ")}; median ${fmt(mb)}`);
  log(`(c) rerun, all installed:            ${c.map((r) => fmt(r.ms)).join(", ")}; median ${fmt(mc)}`);
  // Where (a)'s time goes: the median of each phase the handler reports, and what is outside them
  // (Node start, loading the bundle, the process's exit: runner wall time minus the handler's total).
  const keys = [...new Set(a.flatMap((r) => Object.keys(r.timings)))];
  log(`(a) median per phase (timings_ms): ${keys.map((k) => `${k} ${median(a.map((r) => r.timings[k] ?? 0))}`).join(", ")}`);
  log(`(a) outside the handler (process start, bundle load, exit): median ${fmt(median(a.map((r) => r.ms - (r.timings.total ?? 0))))}`);
  log(`ratio ${(ma / mb).toFixed(2)} (target <= 1.10)`);
  log(`rerun median ${Math.round(mc)} ms (target <= 1500)`);
}

main().then(
  () => process.exit(0),
  async (err) => {
    process.stderr.write(`bench failed: ${(err as Error).stack ?? err}\n`);
    await Promise.allSettled([...live].map((sb) => sb.stop()));
    process.exit(1);
  },
);
