// Benchmark: the whole no-cloud demo deploy (`cdktf deploy`: synth, init, plan, three jobs through the
// runner) against its floor, the raw command sequences it performs; the same deploy to two VMs against one
// (jobs of different VMs run in parallel, so two should cost little more than one); and the floor on two
// VMs at once against the floor on one. Four sides, each on fresh sandboxes, N rounds (>= 5) with the side
// that runs first rotating every round. Writes dev/bench/results/deploy.json.
//   npm run bench:deploy [-- N]      (each round about four minutes)
import * as path from "node:path";
import { demoContext } from "../demo/demo";
import { runCdktf, writeCdktfProject } from "../demo/project";
import type { Sandbox } from "../sandbox/index";
import { rawDockerDistro, rawPackages, rawPostgres, timeRawScript } from "./raw-sequences";
import { buildResult, commitInfo } from "./results";
import { fmtS, runRounds, type SideSpec } from "./rounds";
import { benchDir, report, roundsArg, runMain, withSandbox } from "./support";

const rounds = roundsArg("deploy.ts");
const PASSWORD = "bench 'pw' $x";
const log = (line: string) => process.stdout.write(`${line}\n`);
/**
 * The demo's installers are measured, not the defaults (docker: channel "distro" + verify "daemon" + no
 * compose, since download.docker.com and Docker Hub are unreachable; postgres: the distribution's 15, since
 * PGDG is unreachable); jobs run on the local target, not on sless.
 */
const NOT_EXERCISED = [
  'deploy: the demo\'s installers (docker channel "distro", verify "daemon", compose false; ' +
    "postgres the distribution's 15), not the defaults, which need download.docker.com, Docker Hub and " +
    "apt.postgresql.org",
  'deploy: jobTarget "local" (the runner on this machine) with kind "existing" VMs; ' +
    "the sless platform and Nubes VMs are not reachable here",
];
/** Target for every comparison: deploy / floor <= 1.3; two VMs / one <= 1.3, read beside the raw floor's own
 * two-vs-one (the floor_two_vms side says why). */
const TARGET_RATIO = 1.3;

/**
 * The floor: what the deploy does on the VM, by hand, one ssh session per installer (apt-get update + the
 * packages, docker.io + service + group, PostgreSQL + role + database + TCP login).
 */
async function floor(sb: Sandbox): Promise<{ total: number; parts: Record<string, number> }> {
  const ctx = demoContext(sb);
  const parts = {
    packages: await timeRawScript(sb, rawPackages(ctx.installers.packages.packages), "packages"),
    // The lists are fresh from the first script; the installers skip updating them too (cache_valid_sec).
    docker: await timeRawScript(sb, rawDockerDistro(sb.user, { update: false }), "docker"),
    postgres: await timeRawScript(
      sb,
      rawPostgres({
        db: ctx.installers.postgres.dbName,
        user: ctx.installers.postgres.dbUser,
        password: PASSWORD,
        update: false,
      }),
      "postgres",
    ),
  };
  const rounded = Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, Math.round(v)]));
  return { total: Object.values(parts).reduce((a, b) => a + b, 0), parts: rounded };
}

async function deploy(sbs: Sandbox[], label: string): Promise<number> {
  const dir = benchDir(`bench-deploy-${label}`);
  const one = demoContext(sbs[0]);
  const ctx = {
    ...one,
    stackName: `bench-${label}`,
    vms: sbs.map((sb, i) => ({ ...demoContext(sb).vms[0], name: `vm${i + 1}` })),
  };
  writeCdktfProject(dir, ctx);
  const started = performance.now();
  const run = await runCdktf(dir, ["deploy", "--auto-approve"], { env: { TF_VAR_pg_password: PASSWORD } });
  const ms = performance.now() - started;
  if (run.code !== 0) throw new Error(`deploy (${label}) failed:\n${run.output.slice(-3000)}`);
  await runCdktf(dir, ["destroy", "--auto-approve"], { env: { TF_VAR_pg_password: PASSWORD } });
  log(`    (${path.basename(dir)})`);
  return ms;
}

/** The four sides: the floor on one VM and on two at once, the demo deploy to one VM and to two. */
function deploySides(): SideSpec[] {
  return [
    {
      name: "floor",
      label: "raw sequences, summed (one VM)",
      run: () =>
        withSandbox(async (sb) => {
          const f = await floor(sb);
          log(
            `    floor parts: ${Object.entries(f.parts)
              .map(([k, v]) => `${k} ${fmtS(v)}`)
              .join(", ")}`,
          );
          return { ms: f.total, extra: { parts_ms: f.parts } };
        }),
    },
    {
      // Both "VMs" here are containers on this one 2-core machine (on Nubes they are separate hosts): two
      // installs at once share its CPU, disk and mirror. The same raw work on two VMs at once says what
      // that costs by itself, the floor the two-VM deploy is to be read against.
      name: "floor_two_vms",
      label: "raw sequences on two VMs at once",
      run: () =>
        withSandbox((a) =>
          withSandbox(async (b) => {
            const started = performance.now();
            const [fa, fb] = await Promise.all([floor(a), floor(b)]);
            const ms = performance.now() - started;
            log(`    two floors at once: ${fmtS(fa.total)} and ${fmtS(fb.total)}`);
            return { ms, extra: { parts_ms: [fa.parts, fb.parts] } };
          }),
        ),
    },
    { name: "one_vm", label: "demo deploy, one VM", run: () => withSandbox((sb) => deploy([sb], "one-vm")) },
    {
      name: "two_vms",
      label: "same deploy, two VMs",
      run: () => withSandbox((a) => withSandbox((b) => deploy([a, b], "two-vms"))),
    },
  ];
}

async function main(): Promise<void> {
  const commit = commitInfo();
  log(`deploy benchmark: ${rounds} rounds, rotating`);
  for (const n of NOT_EXERCISED) log(`not exercised here: ${n}`);
  const outcome = await runRounds(rounds, deploySides(), log);
  const result = buildResult({
    bench: "deploy",
    command: `npm run bench:deploy -- ${rounds}`,
    description:
      "one_vm: cdktf deploy of the demo stack (packages -> docker distro -> postgres, local job target, " +
      "existing host) to a fresh sandbox; " +
      "two_vms: the same stack with two VMs, each a fresh sandbox; floor: the three raw sequences " +
      "(dev/bench/raw-sequences.ts) one after another over ssh on a fresh sandbox; " +
      "floor_two_vms: the floor on two fresh sandboxes at once (both are containers on this one machine), " +
      "wall time until both are done",
    outcome,
    sideLabels: {
      floor: "raw sequences, summed",
      floor_two_vms: "raw sequences on two VMs at once",
      one_vm: "demo deploy, one VM",
      two_vms: "same deploy, two VMs",
    },
    comparisons: [
      { label: "demo deploy vs raw floor", project: "one_vm", baseline: "floor", target: TARGET_RATIO },
      { label: "deploy: two VMs vs one", project: "two_vms", baseline: "one_vm", target: TARGET_RATIO },
      {
        label: "raw floor: two VMs at once vs one (this machine's own cost of two)",
        project: "floor_two_vms",
        baseline: "floor",
        target: TARGET_RATIO,
      },
    ],
    notExercised: NOT_EXERCISED,
    commit,
  });
  report(result, fmtS);
}

runMain(main);
