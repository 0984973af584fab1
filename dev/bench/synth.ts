// Benchmark: wall time of `cdktf synth`, four sides measured in the same run (a trivial cdktf app, this
// project as checked in, one VM and twenty VMs with all three installers), N rounds (>= 5) with the side
// that runs first rotating every round. Each side runs once unmeasured first (file cache, esbuild binary).
// Writes dev/bench/results/synth.json.
//   npm run bench:synth [-- N]
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { PROJECT_ROOT } from "../../lib/entry-points";
import { writeCdktfProject } from "../demo/project";
import { allInstallersContext } from "./contexts";
import { buildResult, commitInfo } from "./results";
import { fmtMs, type RoundsOutcome, runRounds } from "./rounds";
import { report, roundsArg, runMain } from "./support";

const rounds = roundsArg("synth.ts");
const env = {
  ...process.env,
  CHECKPOINT_DISABLE: "1",
  TF_CLI_CONFIG_FILE: path.join(PROJECT_ROOT, ".cache", "terraformrc"),
};
const log = (line: string) => process.stdout.write(`${line}\n`);
/** Target: project / trivial <= 1.2 (what the project adds to cdktf's own cost). */
const PROJECT_TARGET_RATIO = 1.2;
/** Target: 20 VMs / 1 VM <= 1.3 (a VM more costs constructs, not bundling: each handler is bundled once per synth). */
const TWENTY_VMS_TARGET_RATIO = 1.3;

function trivialApp(dir: string): void {
  fs.symlinkSync(path.join(PROJECT_ROOT, "node_modules"), path.join(dir, "node_modules"));
  fs.writeFileSync(
    path.join(dir, "cdktf.json"),
    JSON.stringify({ language: "typescript", app: "node main.js", terraformProviders: [], sendCrashReports: "false" }),
  );
  fs.writeFileSync(
    path.join(dir, "main.js"),
    [
      'const { App, TerraformStack } = require("cdktf");',
      'const { DataResource } = require("cdktf");',
      "const app = new App();",
      'const stack = new TerraformStack(app, "trivial");',
      'new DataResource(stack, "one", { input: "x" });',
      "app.synth();",
    ].join("\n"),
  );
}

function time(cwd: string): number {
  const start = process.hrtime.bigint();
  execFileSync(path.join(PROJECT_ROOT, "node_modules", ".bin", "cdktf"), ["synth"], { cwd, env, stdio: "ignore" });
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** The results file: the project against a trivial app, twenty VMs against one. */
function synthResult(outcome: RoundsOutcome, commit: ReturnType<typeof commitInfo>) {
  return buildResult({
    bench: "synth",
    command: `npm run bench:synth -- ${rounds}`,
    description:
      "cdktf synth wall time. trivial: a one-resource plain-JS cdktf app; project: this checkout's cdktf.json; " +
      'one_vm_all / twenty_vms_all: 1 or 20 VMs of kind "existing" (10.0.0.N), jobTarget "local", ' +
      "packages + docker (distro) + postgres",
    outcome,
    sideLabels: {
      trivial: "trivial one-resource app",
      project: "vm-install (cdktf.json)",
      one_vm_all: "1 VM, all three installers",
      twenty_vms_all: "20 VMs, all three installers",
    },
    comparisons: [
      {
        label: "synth: project vs trivial app",
        project: "project",
        baseline: "trivial",
        target: PROJECT_TARGET_RATIO,
      },
      {
        label: "synth: 20 VMs vs 1 VM (all installers)",
        project: "twenty_vms_all",
        baseline: "one_vm_all",
        target: TWENTY_VMS_TARGET_RATIO,
      },
    ],
    commit,
  });
}

async function main(): Promise<void> {
  const commit = commitInfo();
  fs.mkdirSync(path.join(PROJECT_ROOT, ".cache"), { recursive: true });
  if (!fs.existsSync(env.TF_CLI_CONFIG_FILE)) fs.writeFileSync(env.TF_CLI_CONFIG_FILE, "");
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "vm-install-bench-synth-"));
  const dirs = {
    trivial: path.join(tmp, "trivial"),
    one: path.join(tmp, "one-vm"),
    twenty: path.join(tmp, "twenty-vms"),
  };
  fs.mkdirSync(dirs.trivial);
  trivialApp(dirs.trivial);
  writeCdktfProject(dirs.one, allInstallersContext(1));
  writeCdktfProject(dirs.twenty, allInstallersContext(20));
  try {
    log(`synth benchmark: ${rounds} rounds, rotating; warming each side once`);
    for (const d of [dirs.trivial, PROJECT_ROOT, dirs.one, dirs.twenty]) time(d);
    // trivial: a trivial one-resource cdktf app (plain JavaScript, no loader, no bundling);
    // project: this project as checked in (cdktf.json: one Nubes VM, install-packages);
    // one_vm_all: 1 VM with all three installers (kind "existing", jobTarget "local");
    // twenty_vms_all: 20 VMs with all three installers (kind "existing", addresses 10.0.0.1-20, jobTarget "local").
    const outcome = await runRounds(
      rounds,
      [
        { name: "trivial", label: "trivial one-resource app", run: async () => time(dirs.trivial) },
        { name: "project", label: "vm-install (cdktf.json)", run: async () => time(PROJECT_ROOT) },
        { name: "one_vm_all", label: "1 VM, all three installers", run: async () => time(dirs.one) },
        { name: "twenty_vms_all", label: "20 VMs, all three installers", run: async () => time(dirs.twenty) },
      ],
      log,
    );
    report(synthResult(outcome, commit), fmtMs);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

runMain(main);
