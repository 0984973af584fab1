// Benchmark for issue 20's fleet: 8 sandbox VMs as existing hosts, install-packages of one small package (jq)
// through `cdktf deploy` (local target). Rotated, fresh VMs per run: one wave vs the raw sequence on the 8 VMs
// at once (target <= 1.10), waves [1, 3, 4] vs one wave (target: the sum of the waves' slowest VMs + 5%,
// dev/bench/fleet-figures.ts). Then on one 8-VM deployment, rotated: `npm run check` vs its jobs in-process and
// `npm run status` vs terraform output, each under 1 s beyond its SSH work. Writes dev/bench/results/fleet.json.
//   npm run bench:fleet [-- N]
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { ENTRY_POINTS, PROJECT_ROOT } from "../../lib/entry-points";
import { checkTargets } from "../../lib/operator/check/check-targets";
import type { DriftRow } from "../../lib/operator/check/run-checks";
import { readProject } from "../../lib/operator/terraform-cli";
import { existingHost, runCdktf, writeCdktfProject } from "../demo/project";
import type { Sandbox } from "../sandbox/index";
import { applySpan, jobSpans, type TimedLine, waveGroups, wavesAllowedAddedMs, wavesFloor } from "./fleet-figures";
import { rawPackages, timeRawSteps } from "./raw-sequences";
import { buildResult, commitInfo } from "./results";
import { fmtMs, median, mergeOutcomes, type RoundsOutcome, runRounds, type SideSpec } from "./rounds";
import { benchDir, report, roundsArg, runMain, timeChecksInProcess, withSandboxes } from "./support";

const VMS = 8;
const NAMES = Array.from({ length: VMS }, (_, i) => `vm${i + 1}`);
const WAVES = [1, 3, 4];
const PACKAGE = "jq";
const STACK = "bench-fleet";
const BEYOND_SSH_MS = 1000;
const env = {
  ...process.env,
  CHECKPOINT_DISABLE: "1",
  TF_CLI_CONFIG_FILE: path.join(PROJECT_ROOT, ".cache", "terraformrc"),
};
const log = (line: string) => process.stdout.write(`${line}\n`);

function context(sbs: Sandbox[], waves?: number[]) {
  return {
    stackName: STACK,
    jobTarget: "local",
    ...(waves ? { rollout: { waves } } : {}),
    installers: { packages: { packages: [PACKAGE] } },
    vms: sbs.map((sb, i) => existingHost(NAMES[i], sb)),
  };
}

/** `cdktf deploy` of the project in `dir`: its wall time and its output lines, each with when it came. */
async function runDeploy(dir: string, vms: number) {
  const lines: TimedLine[] = [];
  const started = performance.now();
  const run = await runCdktf(dir, ["deploy", "--auto-approve"], {
    env,
    onLine: (line) => lines.push({ ms: performance.now(), line }),
  });
  const ms = performance.now() - started;
  if (run.code !== 0) throw new Error(`deploy to ${vms} VMs failed in ${dir}:\n${run.output.slice(-3000)}`);
  return { ms, lines };
}

/** One deploy to `sbs`; its wall time, each VM's job time and the apply's. Leaves the project in `dir`. */
async function deploy(dir: string, sbs: Sandbox[], waves?: number[]) {
  writeCdktfProject(dir, context(sbs, waves));
  const { ms, lines } = await runDeploy(dir, sbs.length);
  return { ms, spans: jobSpans(lines, NAMES.slice(0, sbs.length), "packages"), applyMs: applySpan(lines) };
}

/** A side that deploys to 8 fresh VMs in a fresh project folder; `waves` undefined: one wave. */
function deploySide(name: string, label: string, waves?: number[]): SideSpec {
  return {
    name,
    label,
    run: () =>
      withSandboxes(VMS, async (sbs) => {
        const dir = benchDir(`bench-fleet-${name}`);
        try {
          const d = await deploy(dir, sbs, waves);
          const groups = waveGroups(NAMES, waves ?? [VMS]);
          return {
            ms: d.ms,
            extra: {
              job_ms: d.spans,
              apply_ms: d.applyMs,
              slowest_ms: wavesFloor(d.spans, [NAMES]),
              waves_floor_ms: wavesFloor(d.spans, groups),
            },
          };
        } finally {
          fs.rmSync(dir, { recursive: true, force: true });
        }
      }),
  };
}

const rawSide: SideSpec = {
  name: "raw",
  label: `raw apt-get update + install ${PACKAGE}, one ssh per VM, ${VMS} VMs at once`,
  run: () =>
    withSandboxes(VMS, async (sbs) => {
      const started = performance.now();
      const each = await Promise.all(sbs.map((sb) => timeRawSteps(sb, rawPackages([PACKAGE]), "raw packages")));
      return { ms: performance.now() - started, extra: { vm_ms: each.map((e) => Math.round(e.ms)) } };
    }),
};

function timed(args: string[], cwd: string): { ms: number; stdout: string } {
  const started = performance.now();
  const out = spawnSync(process.execPath, args, { cwd, env, encoding: "utf8" });
  const ms = performance.now() - started;
  if (out.status !== 0) throw new Error(`node ${args.join(" ")} failed in ${cwd}: ${out.stderr}\n${out.stdout}`);
  return { ms, stdout: out.stdout };
}

/** The slowest VM's handler time: VMs are checked side by side. */
function sshWork(rows: DriftRow[]): number {
  const inSync = rows.filter((r) => r.state === "in sync");
  if (inSync.length !== VMS) throw new Error(`check: expected ${VMS} rows in sync, got ${JSON.stringify(rows)}`);
  return Math.max(...rows.map((r) => r.handlerMs ?? 0));
}

/** check, its jobs in-process, status and terraform output on one deployment in `dir`. */
function commandSides(dir: string, sbs: Sandbox[]): SideSpec[] {
  const node = (script: string, ...args: string[]) =>
    timed(["-r", ENTRY_POINTS.tsRegister, path.join(PROJECT_ROOT, "bin", script), ...args], dir);
  const { config, stackDir } = readProject(dir);
  const outputs = Object.fromEntries(sbs.map((sb, i) => [`${NAMES[i]}_address`, sb.address]));
  return [
    {
      name: "check",
      label: `npm run check (${VMS} VMs)`,
      run: async () => {
        const r = node("check.ts", "--json");
        const ssh = sshWork(JSON.parse(r.stdout) as DriftRow[]);
        return { ms: r.ms, extra: { ssh_work_ms: ssh, beyond_ssh_ms: Math.round(r.ms - ssh) } };
      },
    },
    {
      name: "check_jobs",
      label: `the same ${VMS} check jobs through runChecks in-process`,
      run: async () => {
        const targets = checkTargets(config, outputs, (p) => path.resolve(dir, p));
        const { rows, ms } = await timeChecksInProcess(targets, dir, env);
        return { ms, extra: { ssh_work_ms: sshWork(rows) } };
      },
    },
    { name: "status", label: `npm run status (${VMS} VMs)`, run: async () => node("status.ts").ms },
    { name: "deploy_again", label: DEPLOY_AGAIN, run: async () => (await runDeploy(dir, VMS)).ms },
    {
      name: "terraform_output",
      label: "node running terraform output -json",
      run: async () =>
        timed(
          ["-e", 'require("child_process").spawnSync("terraform", ["output", "-json"], { stdio: "ignore" })'],
          stackDir,
        ).ms,
    },
  ];
}

/** Deploys once to 8 fresh VMs, warms each command once, then the rotated rounds of the four commands. */
function commandRounds(rounds: number) {
  return withSandboxes(VMS, async (sbs) => {
    const dir = benchDir("bench-fleet-commands");
    try {
      await deploy(dir, sbs);
      const sides = commandSides(dir, sbs);
      for (const s of sides) await s.run(0);
      return await runRounds(rounds, sides, log);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

const DEPLOY_AGAIN = `the same ${VMS}-VM deploy again, nothing to change: cdktf's fixed cost (synth, init, plan)`;

const extras = (records: { side: string; extra?: Record<string, unknown> }[], side: string, key: string) =>
  records.filter((r) => r.side === side).map((r) => r.extra![key] as number);

const DESCRIPTION =
  `one_wave: cdktf deploy of install-packages {${PACKAGE}} to ${VMS} fresh sandboxes as existing hosts, ` +
  "local target, " +
  `no rollout; waves: the same with rollout.waves [${WAVES.join(", ")}]; raw: apt-get update + install ${PACKAGE} ` +
  `as one root script over one ssh per VM, on ${VMS} fresh sandboxes at once; check, check_jobs, status, ` +
  `terraform_output, deploy_again: on one ${VMS}-VM deployment of the same stack. ` +
  `All ${VMS} VMs are containers on this one machine, sharing its cores, disk and mirror`;

async function main(): Promise<void> {
  const rounds = roundsArg("fleet.ts");
  const commit = commitInfo();
  log(`fleet benchmark: ${VMS} VMs, ${rounds} rounds, rotating; install-packages {${PACKAGE}}`);
  const deploys = await runRounds(
    rounds,
    [
      deploySide("one_wave", `deploy, one wave (${VMS} VMs)`),
      deploySide("waves", `deploy, waves [${WAVES.join(", ")}]`, WAVES),
      rawSide,
    ],
    log,
  );
  const commands = await commandRounds(rounds);
  report(fleetResult(rounds, mergeOutcomes([deploys, commands]), commit), fmtMs);
}

/** The figures shown beside the comparisons: the waves' floor, check's and status's time beyond SSH work. */
function fleetSeries(outcome: RoundsOutcome) {
  return {
    apply_phase: {
      label: "one wave's apply alone (first job started to Apply complete)",
      ms: extras(outcome.records, "one_wave", "apply_ms"),
    },
    waves_floor: {
      label: "the waves' slowest VMs summed (job times from the deploy output)",
      ms: extras(outcome.records, "waves", "waves_floor_ms"),
    },
    beyond_ssh: {
      label: "npm run check's wall time less its SSH work (slowest VM's handler time)",
      ms: extras(outcome.records, "check", "beyond_ssh_ms"),
      target_ms: BEYOND_SSH_MS,
    },
    status_total: {
      label: "npm run status's wall time (it does no SSH work)",
      ms: outcome.stats.status.ms,
      target_ms: BEYOND_SSH_MS,
    },
  };
}

/** The comparisons with their targets: the deploys', then the commands'. */
function fleetComparisons(outcome: RoundsOutcome) {
  const floor = median(extras(outcome.records, "waves", "waves_floor_ms"));
  const slowest = median(extras(outcome.records, "one_wave", "slowest_ms"));
  return [
    {
      label: `fleet: one wave vs raw, ${VMS} VMs at once`,
      project: "one_wave",
      baseline: "raw",
      target: 1.1,
      rerun: "apply_phase",
    },
    {
      label: "fleet: a deploy with nothing to change (cdktf's fixed cost) vs raw: the room a 1.10 target leaves",
      project: "deploy_again",
      baseline: "raw",
      target: 0.1,
    },
    {
      label: `fleet: waves [${WAVES.join(", ")}] vs one wave (allowed: waves' slowest VMs summed + 5%)`,
      project: "waves",
      baseline: "one_wave",
      target: 0,
      targetAddedMs: wavesAllowedAddedMs(floor, slowest),
      rerun: "waves_floor",
    },
    {
      label: `fleet: check (${VMS} VMs) vs its jobs alone`,
      project: "check",
      baseline: "check_jobs",
      target: 0,
      targetAddedMs: BEYOND_SSH_MS,
      rerun: "beyond_ssh",
    },
    {
      label: `fleet: status (${VMS} VMs) vs node + terraform output`,
      project: "status",
      baseline: "terraform_output",
      target: 0,
      targetAddedMs: BEYOND_SSH_MS,
      rerun: "status_total",
    },
  ];
}

/** The results file: the deploy comparisons and the command comparisons, with their targets. */
function fleetResult(rounds: number, outcome: RoundsOutcome, commit: ReturnType<typeof commitInfo>) {
  return buildResult({
    bench: "fleet",
    command: `npm run bench:fleet -- ${rounds}`,
    description: DESCRIPTION,
    outcome,
    sideLabels: {
      one_wave: `deploy, one wave (${VMS} VMs)`,
      waves: `deploy, waves [${WAVES.join(", ")}]`,
      raw: rawSide.label,
      check: `npm run check (${VMS} VMs)`,
      check_jobs: `the same ${VMS} check jobs through runChecks in-process`,
      status: `npm run status (${VMS} VMs)`,
      terraform_output: "node running terraform output -json",
      deploy_again: DEPLOY_AGAIN,
    },
    comparisons: fleetComparisons(outcome),
    series: fleetSeries(outcome),
    commit,
  });
}

if (require.main === module) runMain(main);
