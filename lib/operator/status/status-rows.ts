// What `npm run status` shows: one row per VM x installer, read from the deployed outputs (the same ones
// `cdktf output` shows) and, with the local target, from the job's own result file and log. Pure: the
// reading is bin/status.ts's business, so this is tested with plain objects. A job message is the VM's
// word (or an older job's, or a forged record): each text in a row is one printable line, --json's too.

import { planRollout } from "../../construct/config/rollout";
import type { VmConfig, VmInstallConfig } from "../../construct/config/types";
import { type CatalogEntry, INSTALLERS } from "../../construct/installers/catalog";
import {
  hostKeyIds,
  installerJobId,
  jobName,
  resultOutputName,
  rolloutGateId,
  vmResourceId,
} from "../../construct/resource-names";
import { printable, printableLine } from "../../shared/printable-text";

/** "not reached": the VM's wave never started, as the rollout stopped at a gate before it. */
export type RowStatus = "ok" | "partial" | "failed" | "skipped" | "not run" | "not reached";

export interface StatusRow {
  vm: string;
  /** The VM's rollout wave (1 first), when the stack rolls out in more than one. */
  wave?: number;
  installer: string;
  status: RowStatus;
  /** Whether the last run changed anything; undefined when it did not report. */
  changed?: boolean;
  summary: string;
  durationMs?: number;
  /** ISO time of the last run, when known. */
  lastRun?: string;
  hostKey?: string;
  /** The last run's full progress (local target). */
  log?: string;
}

/** What the local target leaves beside the state for one job: its last outcome, when and where it was logged. */
export interface LocalJobRecord {
  phase: string;
  message: string;
  finishedAt: string;
  log?: string;
}

/** The fields of the common result shape (handlers/common/handler-kit.ts) a row shows. */
interface ReportedResult {
  status?: string;
  changed?: unknown;
  summary?: unknown;
  timings_ms?: { total?: unknown };
  host_key_sha256?: unknown;
  finished_at?: unknown;
}

/** One row from what was found; `local` wins where it is newer news (a failed run leaves outputs stale). */
export function statusRow(
  vm: string,
  def: CatalogEntry,
  output: string | undefined,
  local?: LocalJobRecord,
): StatusRow {
  const row: StatusRow = {
    vm,
    installer: def.handler,
    status: "not run",
    summary: "",
    log: local?.log && printableLine(local.log),
    lastRun: local?.finishedAt && printableLine(local.finishedAt),
  };
  if (output === "skipped") return { ...row, status: "skipped", summary: "disabled in cdktf.json" };
  if (local?.phase === "Failed") return { ...row, status: "failed", summary: firstLine(local.message) };
  const text = local?.phase === "Succeeded" ? local.message : output;
  if (text === undefined || text === "" || text === "not run") return row;
  let result: ReportedResult;
  try {
    result = JSON.parse(text);
  } catch {
    // A sless job that failed reports its error text as the message.
    return { ...row, status: "failed", summary: firstLine(text) };
  }
  return {
    ...row,
    status: result.status === "partial" ? "partial" : "ok",
    changed: typeof result.changed === "boolean" ? result.changed : undefined,
    summary: printableLine(String(result.summary ?? "")),
    durationMs: typeof result.timings_ms?.total === "number" ? result.timings_ms.total : undefined,
    hostKey: typeof result.host_key_sha256 === "string" ? printableLine(result.host_key_sha256) : undefined,
    lastRun: typeof result.finished_at === "string" ? printableLine(result.finished_at) : row.lastRun,
  };
}

/** Where the rows come from besides the outputs. */
export interface StatusSources {
  /** The local target's record of a job, by job name. */
  local?: (job: string) => LocalJobRecord | undefined;
  /** The resource addresses in the deployed state (`terraform state list`); unchecked when absent. */
  state?: ReadonlySet<string>;
  catalog?: readonly CatalogEntry[];
}

/**
 * Why a result must not be shown, when it belongs to another VM than the one deployed now. Terraform
 * keeps an output's last value when an apply stops before evaluating it again, so after a VM is replaced
 * (or deleted outside Terraform, which refresh notices) the outputs may still hold the old VM's results;
 * the state does not: a job's old instance is destroyed before the new VM's one runs.
 */
function notOfThisVm(
  config: VmInstallConfig,
  vm: VmConfig,
  def: CatalogEntry,
  state: ReadonlySet<string>,
  outputs: Record<string, string>,
  text: string | undefined,
): string | undefined {
  if (vm.kind === "nubes" && !state.has(`nubes_vc_vm_v3.${vmResourceId(vm.name)}`)) {
    return (
      `${vm.name} is not in the Terraform state (deleted outside Terraform, or its creation failed): ` +
      "no result of an earlier VM is shown; npm run deploy creates it and runs its installers"
    );
  }
  const jobType = config.jobTarget === "sless" ? "sless_job" : "terraform_data";
  if (!state.has(`${jobType}.${installerJobId(vm.name, def.key)}`)) {
    const then = reportedHostKey(text);
    const now = outputs[hostKeyIds(vm.name).output];
    if (then && now && then !== now) {
      return (
        `${def.handler} has not run on the current VM: the VM was replaced since it last ran (host key ${then} ` +
        `then, ${now} now); npm run deploy runs it there`
      );
    }
    return (
      `${def.handler} has not run on the current VM: its job is not in the Terraform state, so the last deploy ` +
      "stopped before it (its output says why); npm run deploy runs it"
    );
  }
  return undefined;
}

/** The host key a result reports it ran against, when it is a result that says. */
function reportedHostKey(text: string | undefined): string | undefined {
  try {
    const key = (JSON.parse(text ?? "") as ReportedResult).host_key_sha256;
    return typeof key === "string" ? printableLine(key) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A row that has not run after an installer that failed before it on the same VM: that failure is why (the
 * chain stops there), whatever an older result of this one says.
 */
function afterFailure(row: StatusRow, failed: StatusRow | undefined): StatusRow {
  if (!failed || row.status !== "not run") return row;
  return {
    vm: row.vm,
    installer: row.installer,
    status: "not run",
    summary:
      `not run: ${failed.installer} failed before it on ${row.vm} (see its row); once that is put right, ` +
      "npm run deploy runs both",
  };
}

/** Every VM x installer of `config`, in config and catalog order, or wave by wave when it rolls out in waves. */
export function statusRows(
  config: VmInstallConfig,
  outputs: Record<string, string>,
  sources: StatusSources = {},
): StatusRow[] {
  const { local = () => undefined, state, catalog = INSTALLERS } = sources;
  const rows = (vm: VmConfig): StatusRow[] => {
    let failed: StatusRow | undefined;
    return catalog.map((def) => {
      const output = outputs[resultOutputName(vm.name, def.key)];
      const record = local(jobName(vm.name, def.handler));
      // Only a result is checked: a row without one says "not run" (or "skipped") as it is. An installer the
      // stack skips is skipped whatever result file its last run left (its job left the state with the file).
      const result =
        output !== "skipped" && (record !== undefined || (output !== undefined && !["", "not run"].includes(output)));
      const text = record?.phase === "Succeeded" ? record.message : output;
      const stale = result && state ? notOfThisVm(config, vm, def, state, outputs, text) : undefined;
      const row = afterFailure(
        stale
          ? { vm: vm.name, installer: def.handler, status: "not run" as const, summary: stale }
          : statusRow(vm.name, def, output, record),
        failed,
      );
      if (row.status === "failed") failed ??= row;
      return row;
    });
  };
  const { waves } = planRollout(config.vms, config.rollout);
  if (waves.length === 1) return config.vms.flatMap(rows);
  const byName = new Map(config.vms.map((vm) => [vm.name, vm]));
  return waves.flatMap((wave) =>
    wave.vms.flatMap((name) =>
      rows(byName.get(name)!).map((row) => ({ ...notReached(row, wave.number, state), wave: wave.number })),
    ),
  );
}

/**
 * A row that has not run, of a wave whose previous wave's gate is not in the state: the rollout stopped
 * there (or has not got there yet), so this VM was never reached.
 */
function notReached(row: StatusRow, wave: number, state?: ReadonlySet<string>): StatusRow {
  if (row.status !== "not run" || wave === 1 || !state || state.has(`terraform_data.${rolloutGateId(wave - 1)}`)) {
    return row;
  }
  return {
    ...row,
    status: "not reached",
    summary:
      `the rollout stopped before wave ${wave}: wave ${wave - 1} did not pass its gate ` +
      "(npm run deploy's error names the failed VMs)",
  };
}

/** An error message's heading: its first line, printable. */
function firstLine(text: string): string {
  return printableLine(printable(text).split("\n")[0].slice(0, 300));
}
