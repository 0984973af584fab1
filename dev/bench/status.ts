// Benchmark: `npm run status` on a 3-VM deployment (all three installers each, local target), against
// the least any such command costs: a Node process that runs `terraform output -json` in the same stack
// folder. The ratio is what status adds to that (loading its code, reading the result files and logs,
// the table). The deployment is written as a deploy leaves it (state outputs, each job's result file and
// log). N rounds (>= 5), rotating. Writes dev/bench/results/status.json.
//   npm run bench:status [-- N]
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { INSTALLERS } from "../../lib/construct/installers/catalog";
import { jobName, resultOutputName } from "../../lib/construct/resource-names";
import { ENTRY_POINTS, PROJECT_ROOT } from "../../lib/entry-points";
import { resultAsTfstate } from "../../lib/jobs/job-result-file";
import { writeCdktfProject } from "../demo/project";
import { allInstallersContext } from "./contexts";
import { buildResult, commitInfo } from "./results";
import { fmtMs, type RoundsOutcome, runRounds } from "./rounds";
import { report, roundsArg, runMain } from "./support";

const rounds = roundsArg("status.ts");
const env = {
  ...process.env,
  CHECKPOINT_DISABLE: "1",
  TF_CLI_CONFIG_FILE: path.join(PROJECT_ROOT, ".cache", "terraformrc"),
};
const log = (line: string) => process.stdout.write(`${line}\n`);
const VMS = 3;
/**
 * Target: status / baseline <= 1.5. Status does no SSH work, so its whole time counts against issue 11's
 * "under 2 s beyond the SSH work" (printed, and in the results file).
 */
const TARGET_RATIO = 1.5;

/** A result as a handler reports it. */
function result(vm: string): string {
  return JSON.stringify({
    status: "ok",
    changed: false,
    changes: [],
    summary: `bench ${vm}`,
    warnings: [],
    host_key_sha256: `SHA256:${"b".repeat(43)}`,
    timings_ms: { total: 1234 },
  });
}

/** The project, synthesized and initialized, with the state and result files a 3-VM deploy leaves. */
function deployedProject(dir: string): string {
  const ctx = allInstallersContext(VMS);
  writeCdktfProject(dir, ctx);
  execFileSync(path.join(PROJECT_ROOT, "node_modules", ".bin", "cdktf"), ["synth"], { cwd: dir, env, stdio: "ignore" });
  const stackDir = path.join(dir, "cdktf.out", "stacks", ctx.stackName);
  execFileSync("terraform", ["init", "-input=false"], { cwd: stackDir, env, stdio: "ignore" });
  const outputs: Record<string, { value: string; type: string }> = {};
  const results = path.join(dir, ".vm-install", ctx.stackName);
  fs.mkdirSync(path.join(results, "logs"), { recursive: true });
  for (const vm of ctx.vms) {
    for (const def of INSTALLERS) {
      outputs[resultOutputName(vm.name, def.key)] = { value: result(vm.name), type: "string" };
      const job = jobName(vm.name, def.handler);
      fs.writeFileSync(
        path.join(results, `${job}.tfstate`),
        resultAsTfstate({ phase: "Succeeded", message: result(vm.name) }, job),
      );
      fs.writeFileSync(path.join(results, "logs", `${job}-20261203T080000000Z.log`), "bench\n");
    }
  }
  const state = { version: 4, terraform_version: "1.11.4", serial: 1, lineage: "bench-status", outputs, resources: [] };
  fs.writeFileSync(path.join(dir, `terraform.${ctx.stackName}.tfstate`), JSON.stringify(state));
  return stackDir;
}

function timed(command: string, args: string[], cwd: string): number {
  const start = process.hrtime.bigint();
  const out = spawnSync(command, args, { cwd, env, encoding: "utf8" });
  if (out.status !== 0) throw new Error(`${command} ${args.join(" ")} failed: ${out.stderr}`);
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** The results file: status against node + terraform output. */
function statusResult(outcome: RoundsOutcome, commit: ReturnType<typeof commitInfo>) {
  return buildResult({
    bench: "status",
    command: `npm run bench:status -- ${rounds}`,
    description:
      `npm run status on a deployed ${VMS}-VM local-target stack (all three installers each) vs a node ` +
      "process running terraform output -json in its stack folder; no SSH work on either side; " +
      "issue 11's target: status under 2 s",
    outcome,
    sideLabels: { status: `npm run status (${VMS} VMs)`, terraform_output: "node running terraform output -json" },
    comparisons: [
      {
        label: `status (${VMS} VMs) vs node + terraform output`,
        project: "status",
        baseline: "terraform_output",
        target: TARGET_RATIO,
      },
    ],
    commit,
  });
}

async function main(): Promise<void> {
  const commit = commitInfo();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vm-install-bench-status-"));
  try {
    const stackDir = deployedProject(dir);
    const sides = {
      status: () =>
        timed(process.execPath, ["-r", ENTRY_POINTS.tsRegister, path.join(PROJECT_ROOT, "bin", "status.ts")], dir),
      terraform_output: () =>
        timed(
          process.execPath,
          ["-e", 'require("child_process").spawnSync("terraform", ["output", "-json"], { stdio: "ignore" })'],
          stackDir,
        ),
    };
    log(
      `status benchmark: ${VMS} VMs x ${INSTALLERS.length} installers, ${rounds} rounds, rotating; ` +
        "warming each side once",
    );
    sides.status();
    sides.terraform_output();
    const outcome = await runRounds(
      rounds,
      [
        { name: "status", label: `npm run status (${VMS} VMs)`, run: async () => sides.status() },
        {
          name: "terraform_output",
          label: "node running terraform output -json",
          run: async () => sides.terraform_output(),
        },
      ],
      log,
    );
    report(statusResult(outcome, commit), fmtMs);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

runMain(main);
