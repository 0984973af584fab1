// The deployed stack's outputs, and its status rows, read where a deploy left them: the stack's outputs through
// `terraform output` (the outputs `cdktf output` shows) and, with the local target, each job's result
// file and newest log under .vm-install/<stack>/. Nothing reaches a VM; a working copy that has never
// synthesized or initialized the stack is made ready first (terraform-cli.ts ensureInitialized).
import * as fs from "node:fs";
import * as path from "node:path";
import type { VmInstallConfig } from "../../construct/config/types";
import { jobLogs } from "../../jobs/job-log";
import { ensureInitialized, readProject, terraformIn } from "../terraform-cli";
import { type LocalJobRecord, type StatusRow, statusRows } from "./status-rows";

/** The local target's record of one job: its result state file and its newest log. */
function localRecord(resultsDir: string, job: string): LocalJobRecord | undefined {
  const file = path.join(resultsDir, `${job}.tfstate`);
  let state: { outputs?: Record<string, { value: string }> };
  try {
    state = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
  const log = jobLogs(path.join(resultsDir, "logs"), job).at(-1);
  return {
    phase: state.outputs?.phase?.value ?? "NotRun",
    message: state.outputs?.message?.value ?? "",
    finishedAt: fs.statSync(file).mtime.toISOString(),
    log: log && path.relative(process.cwd(), log),
  };
}

/** The stack's outputs as name -> string value; throws with what to do when there is no deployed state. */
function deployedOutputs(stackDir: string, projectDir: string): Record<string, string> {
  if (!fs.existsSync(stackDir))
    throw new Error(
      `${path.relative(projectDir, stackDir)} does not exist: nothing is deployed from here yet (npm run deploy)`,
    );
  const out = terraformIn(stackDir, projectDir, ["output", "-json"]);
  if (out.status !== 0)
    throw new Error(`terraform output failed in ${stackDir}: ${out.stderr.trim().split("\n").slice(-3).join(" ")}`);
  const outputs = JSON.parse(out.stdout || "{}") as Record<string, { value: unknown }>;
  return Object.fromEntries(
    Object.entries(outputs).map(([k, v]) => [k, typeof v.value === "string" ? v.value : JSON.stringify(v.value)]),
  );
}

/** The resource addresses in the deployed state: which VM and which jobs exist now. */
function deployedResources(stackDir: string, projectDir: string): Set<string> {
  const out = terraformIn(stackDir, projectDir, ["state", "list"]);
  // Never deployed: no state at all, so nothing in it.
  if (out.status !== 0 && /No state file was found/.test(out.stderr)) return new Set();
  if (out.status !== 0)
    throw new Error(`terraform state list failed in ${stackDir}: ${out.stderr.trim().split("\n").slice(-3).join(" ")}`);
  return new Set(
    out.stdout
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean),
  );
}

/**
 * The configuration and the deployed outputs of the stack deployed from `projectDir` (or from another
 * working copy sharing its state); throws saying what is missing. `say` hears about a synth or init this
 * working copy needed first.
 */
export function readDeployed(
  projectDir: string,
  say: (line: string) => void = () => undefined,
): { config: VmInstallConfig; outputs: Record<string, string> } {
  const { config, stackDir } = readProject(projectDir);
  ensureInitialized(projectDir, stackDir, say);
  return { config, outputs: deployedOutputs(stackDir, projectDir) };
}

/** The deployed state as `terraform show -json` gives it; undefined when it cannot be read (nothing deployed). */
export function readShownState(projectDir: string): unknown {
  const { stackDir } = readProject(projectDir);
  const out = terraformIn(stackDir, projectDir, ["show", "-json"]);
  if (out.status !== 0) return undefined;
  try {
    return JSON.parse(out.stdout);
  } catch {
    return undefined;
  }
}

/** The status rows of the deployed stack (see readDeployed). */
export function readStatus(projectDir: string, say: (line: string) => void = () => undefined): StatusRow[] {
  const { config, stackDir } = readProject(projectDir);
  const { outputs } = readDeployed(projectDir, say);
  const resultsDir = path.join(projectDir, ".vm-install", config.stackName);
  return statusRows(config, outputs, {
    local: config.jobTarget === "local" ? (job) => localRecord(resultsDir, job) : undefined,
    state: deployedResources(stackDir, projectDir),
  });
}
