// Benchmark: install-postgres through the job runner against the same work done by hand, on identical
// fresh sandbox VMs (Debian 12, PostgreSQL 15 from Debian), median of N (3), run one after the other and
// interleaved (job, raw, job, raw, ...) so drift in machine or mirror speed hits both alike.
//   job:  the bundled handler in a fresh Node process (lib/runner), as the platform runs it: SSH connect,
//         inspection, apt-get update + install, role + database, conf.d drop-in + pg_hba line, restart,
//         TCP login check. The bundle is built once beforehand (the stack builds it at synth time).
//   raw:  one `ssh` running one shell script with the same steps and no checks (apt-get update, apt-get
//         install postgresql, CREATE ROLE/DATABASE, the two config edits, restart, a TCP psql).
//   rerun: the job again on the job's VM, where everything is already as wanted.
// Sandbox boot and teardown are outside every measurement.
//   node -r ./bin/ts-register.js bench/install-postgres.ts [N]
import { bundleHandler } from "../lib/bundling/bundle";
import type { Sandbox } from "../sandbox";
import { rawPostgres, timeRawScript } from "./raw-sequences";
import { median, roundsArg, runMain, timeJob as timeInstaller, withSandbox } from "./support";

const runs = roundsArg("install-postgres.ts");
const PASSWORD = "bench 'pw' \"with\" $quotes \\ and spaces";
const secs = (ms: number) => (ms / 1000).toFixed(2);
const log = (l: string) => process.stderr.write(`[bench] ${l}\n`);

function event(sb: Sandbox) {
  return { db_name: "shop", db_user: "shop_app", db_password: PASSWORD, listen_addresses: "*", allow_remote: true, allowed_cidrs: [`${sb.hostAddress}/32`] };
}

function timeJob(sb: Sandbox) {
  return timeInstaller(sb, "install-postgres", event(sb), [PASSWORD], { SSH_HOST_KEY_SHA256: sb.hostKeySha256 });
}

/** The same steps as one plain shell script over one ssh session (the password is a test value). */
async function timeRaw(sb: Sandbox): Promise<number> {
  return timeRawScript(sb, rawPostgres({ db: "shop", user: "shop_app", password: PASSWORD, remoteCidr: `${sb.hostAddress}/32` }), "postgres sequence");
}

async function main(): Promise<void> {
  const bundle = bundleHandler({ handler: "install-postgres" });
  log(`bundle ${bundle.dir} (${(bundle.bytes / 1024).toFixed(0)} KB); ${runs} rounds`);
  const job: number[] = [];
  const raw: number[] = [];
  const rerun: number[] = [];
  let phases: Record<string, number> = {};
  for (let i = 1; i <= runs; i++) {
    await withSandbox(async (sb) => {
      const first = await timeJob(sb);
      job.push(first.ms);
      phases = first.result.timings_ms;
      const again = await timeJob(sb);
      if (again.result.changed.length !== 0 || again.result.restarted) throw new Error(`rerun was not a no-op: ${JSON.stringify(again.result.changed)}`);
      rerun.push(again.ms);
      log(`round ${i}: job ${secs(first.ms)} s, rerun ${secs(again.ms)} s (${sb.name})`);
    });
    await withSandbox(async (sb) => {
      const ms = await timeRaw(sb);
      raw.push(ms);
      log(`round ${i}: raw ${secs(ms)} s (${sb.name})`);
    });
  }
  const ratio = median(job) / median(raw);
  const list = (xs: number[]) => xs.map(secs).join(", ");
  console.log(`install-postgres via the job runner: median ${secs(median(job))} s  (${list(job)})`);
  console.log(`raw command sequence over one ssh:  median ${secs(median(raw))} s  (${list(raw)})`);
  console.log(`ratio ${ratio.toFixed(3)} (target <= 1.10)`);
  console.log(`rerun (nothing to do):              median ${secs(median(rerun))} s  (${list(rerun)}) (target <= 2 s)`);
  console.log(`last job's phases (ms): ${Object.entries(phases).map(([k, v]) => `${k} ${v}`).join(", ")}`);
}

runMain(main);
