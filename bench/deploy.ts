// Benchmark: the whole no-cloud demo deploy (`cdktf deploy`: synth, init, plan, three jobs through the
// runner) against its floor, the sum of the raw command sequences it performs (apt-get update + the
// packages, docker.io + service + group, PostgreSQL + role + database + TCP login, each as one plain
// ssh script), measured in the same run on identical fresh sandboxes; and the same deploy to two VMs
// against one (jobs of different VMs run in parallel, so two should cost little more than one).
//   node -r ./bin/ts-register.js bench/deploy.ts [rounds]      (default 1; each round ~3 minutes)
import * as path from "path";
import { demoContext } from "../demo/demo";
import { runCdktf, writeCdktfProject } from "../demo/project";
import type { Sandbox } from "../sandbox";
import { tempDir } from "../__tests__/support/synth";
import { rawDockerDistro, rawPackages, rawPostgres, timeRawScript } from "./raw-sequences";
import { fmtS, median, roundsArg, runMain, withSandbox } from "./support";

const rounds = roundsArg("deploy.ts");
const PASSWORD = "bench 'pw' $x";
const log = (line: string) => process.stdout.write(line + "\n");

/** The floor: what the deploy does on the VM, by hand, one ssh session per installer. */
async function floor(sb: Sandbox): Promise<{ total: number; parts: number[] }> {
  const ctx = demoContext(sb);
  const parts = [
    await timeRawScript(sb, rawPackages(ctx.installers.packages.packages), "packages"),
    // The lists are fresh from the first script; the installers skip updating them too.
    await timeRawScript(sb, rawDockerDistro(sb.user, { update: false }), "docker"),
    await timeRawScript(sb, rawPostgres({ db: ctx.installers.postgres.dbName, user: ctx.installers.postgres.dbUser, password: PASSWORD, update: false }), "postgres"),
  ];
  return { total: parts.reduce((a, b) => a + b, 0), parts };
}

async function deploy(sbs: Sandbox[], label: string): Promise<number> {
  const dir = tempDir(`bench-deploy-${label}`);
  const one = demoContext(sbs[0]);
  const ctx = { ...one, stackName: `bench-${label}`, vms: sbs.map((sb, i) => ({ ...demoContext(sb).vms[0], name: `vm${i + 1}` })) };
  writeCdktfProject(dir, ctx);
  const started = performance.now();
  const run = await runCdktf(dir, ["deploy", "--auto-approve"], { env: { TF_VAR_pg_password: PASSWORD } });
  const ms = performance.now() - started;
  if (run.code !== 0) throw new Error(`deploy (${label}) failed:\n${run.output.slice(-3000)}`);
  await runCdktf(dir, ["destroy", "--auto-approve"], { env: { TF_VAR_pg_password: PASSWORD } });
  log(`  deploy ${label}: ${fmtS(ms)}  (${path.basename(dir)})`);
  return ms;
}

async function main(): Promise<void> {
  const floors: number[] = [];
  const ones: number[] = [];
  const twos: number[] = [];
  for (let i = 0; i < rounds; i++) {
    log(`round ${i + 1}/${rounds}`);
    await withSandbox(async (sb) => {
      const f = await floor(sb);
      floors.push(f.total);
      log(`  floor: ${fmtS(f.total)} (packages ${fmtS(f.parts[0])}, docker ${fmtS(f.parts[1])}, postgres ${fmtS(f.parts[2])})`);
    });
    await withSandbox(async (sb) => ones.push(await deploy([sb], "one-vm")));
    await withSandbox((a) => withSandbox(async (b) => twos.push(await deploy([a, b], "two-vms"))));
  }
  log("");
  log(`floor (raw sequences, summed): median ${fmtS(median(floors))}`);
  log(`demo deploy, one VM:           median ${fmtS(median(ones))}`);
  log(`same deploy, two VMs:          median ${fmtS(median(twos))}`);
  log(`ratio deploy/floor ${(median(ones) / median(floors)).toFixed(2)} (target <= 1.3)`);
  log(`ratio two VMs/one ${(median(twos) / median(ones)).toFixed(2)} (target <= 1.3)`);
}

runMain(main);
