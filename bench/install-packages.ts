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
import { bundleHandler } from "../lib/bundling/bundle";
import { Sandbox, sshRun } from "../sandbox";
import { fmtMs as fmt, median, roundsArg, runMain, timeJob, withSandbox } from "./support";

const rounds = roundsArg("install-packages.ts");
const PACKAGES = ["git", "curl", "jq", "htop", "unzip"];
const RAW = `sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y ${PACKAGES.join(" ")}`;

const log = (line: string) => process.stdout.write(line + "\n");

const bundle = bundleHandler({ handler: "install-packages" });

interface JobRun {
  ms: number;
  timings: Record<string, number>;
  result: Record<string, unknown>;
}

/** One job through the runner; wall time from spawn to outcome (what a platform job would take). */
async function viaRunner(sb: Sandbox): Promise<JobRun> {
  const { ms, result } = await timeJob(sb, "install-packages", { packages: PACKAGES, update: true });
  return { ms, timings: result.timings_ms, result };
}

/** The same work by hand: one `ssh` command; wall time from spawn to exit. */
async function viaRawSsh(sb: Sandbox): Promise<number> {
  const r = await sshRun(sb, RAW);
  if (r.code !== 0) throw new Error(`raw ssh apt-get failed on ${sb.name}: exit ${r.code}\n${r.stderr.slice(-2000)}`);
  return r.ms;
}

/** Both paths must leave the same packages installed, or the comparison is of different work. */
async function checkInstalled(sb: Sandbox): Promise<void> {
  const r = await sb.rootExec(`dpkg-query -W -f='\${Package} \${Status}\\n' ${PACKAGES.join(" ")}`);
  const ok = r.stdout.split("\n").filter((l) => / install ok installed$/.test(l)).length;
  if (ok !== PACKAGES.length) throw new Error(`${sb.name}: expected ${PACKAGES.length} packages installed, dpkg says:\n${r.stdout}`);
}

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

runMain(main);
