// The rows of `npm run check` and `npm run status` as JUnit test cases (junit.ts), one per VM x installer,
// and the secret values a report must never carry. A case fails where the command's exit code would:
// drift and a failed, partial or never-run installer are failures, a check that could not tell is an error,
// an installer disabled in cdktf.json is skipped.
import * as fs from "node:fs";
import type { VmInstallConfig } from "../../construct/config/types";
import { INSTALLERS } from "../../construct/installers/catalog";
import { secretVariableNames } from "../../construct/installers/installer-event";
import { resultsFolder } from "../../construct/jobs/secret-trigger";
import { caFile, readCaFile, stackCaVms } from "../../construct/postgres-ca";
import { printableLine } from "../../shared/printable-text";
import type { DriftRow } from "../check/run-checks";
import type { StatusRow } from "../status/status-rows";
import type { CaseOutcome, JunitCase } from "./junit";

/** The parts a line each: a part is one item (a summary, a warning), one line whatever the row holds. */
function lines(...parts: (string | undefined)[]): string | undefined {
  const text = parts
    .filter((p): p is string => Boolean(p))
    .map(printableLine)
    .join("\n");
  return text || undefined;
}

function driftOutcome(row: DriftRow): CaseOutcome {
  switch (row.state) {
    case "drift": {
      const message = row.wouldChange.join("; ");
      return { kind: "failure", type: "drift", message, detail: lines(...row.wouldChange) };
    }
    case "error":
      return { kind: "error", type: "check error", message: row.summary };
    case "skipped":
      return { kind: "skipped", type: "disabled", message: row.summary };
    default:
      return { kind: "passed" };
  }
}

/** `npm run check`'s rows: time is the job's wall time here, as the console's DURATION column. */
export function driftCases(rows: readonly DriftRow[]): JunitCase[] {
  return rows.map((row) => ({
    classname: row.vm,
    name: row.installer,
    timeMs: row.durationMs ?? row.handlerMs,
    outcome: driftOutcome(row),
    // An error's or a skip's summary is its message already.
    systemOut: lines(
      row.state === "in sync" || row.state === "drift" ? row.summary : undefined,
      ...row.warnings.map((w) => `warning: ${w}`),
      row.log && `log: ${row.log}`,
    ),
  }));
}

function statusOutcome(row: StatusRow): CaseOutcome {
  switch (row.status) {
    case "ok":
      return { kind: "passed" };
    case "skipped":
      return { kind: "skipped", type: "disabled", message: row.summary };
    case "not run":
      return { kind: "failure", type: "not run", message: row.summary || "the installer has not run on this VM" };
    default:
      return { kind: "failure", type: row.status, message: row.summary };
  }
}

/** `npm run status`'s rows: time is the last run's own (the handler's timings_ms.total). */
export function statusCases(rows: readonly StatusRow[]): JunitCase[] {
  return rows.map((row) => ({
    classname: row.vm,
    name: row.installer,
    timeMs: row.durationMs,
    outcome: statusOutcome(row),
    systemOut: lines(
      row.status === "ok" ? row.summary : undefined,
      row.lastRun && `last run: ${row.lastRun}`,
      row.hostKey && `host key: ${row.hostKey}`,
      row.log && `log: ${row.log}`,
    ),
  }));
}

type KeyPath = (setting: string) => string;

/**
 * What a report could leak if a row ever carried it: every secret TF_VAR_ value the installers take, and
 * each VM's private key. The handlers scrub these already; the report scrubs them again.
 */
export function reportSecrets(config: VmInstallConfig, environment: NodeJS.ProcessEnv, resolveKey: KeyPath): string[] {
  const values: string[] = [];
  for (const vm of config.vms) {
    for (const def of INSTALLERS) {
      for (const name of Object.values(secretVariableNames(vm, def))) {
        const value = environment[`TF_VAR_${name}`];
        if (value) values.push(value);
      }
    }
    try {
      values.push(fs.readFileSync(resolveKey(vm.privateKeyPath), "utf8"));
    } catch {
      // No key file here: nothing of it can be in a row either.
    }
  }
  // The stack's PostgreSQL CA, which a check's job reads from its file.
  const ca = stackCaVms(config).length
    ? readCaFile(caFile(resultsFolder(resolveKey("."), config.stackName)))
    : undefined;
  if (ca) values.push(ca.key);
  for (const name of ["NUBES_API_TOKEN", "TF_VAR_nubes_api_token", "TF_VAR_sless_token"]) {
    const value = environment[name];
    if (value) values.push(value);
  }
  return values;
}
