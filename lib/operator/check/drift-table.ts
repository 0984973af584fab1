// The drift rows as a person reads them (lib/operator/text-table.ts): one row per VM x installer and what would
// change; a row with several changes, warnings or an error spells them out under the table.

import { printableLine } from "../../shared/printable-text";
import { COLOURS, renderTable } from "../text-table";
import type { DriftRow, DriftState } from "./run-checks";

const COLOUR: Record<DriftState, string> = {
  "in sync": COLOURS.green,
  drift: COLOURS.yellow,
  error: COLOURS.red,
  skipped: COLOURS.dim,
};
const HEADINGS = ["VM", "INSTALLER", "CHECK", "DURATION", "WHAT A DEPLOY WOULD CHANGE"];

function cells(row: DriftRow): string[] {
  const what = row.state === "drift" ? row.wouldChange.join("; ") : row.state === "error" ? row.summary : "-";
  return [
    row.vm,
    row.installer,
    row.state,
    row.durationMs === undefined ? "-" : `${(row.durationMs / 1000).toFixed(1)}s`,
    what,
  ];
}

/** The table, then the closing line: what the exit code means, and where errors' full progress is. */
export function renderDriftTable(rows: DriftRow[], colour: boolean, changed?: ReadonlySet<string>): string {
  const table = renderTable(HEADINGS, rows.map(cells), {
    colour,
    colourColumn: 2,
    colourOf: (i) => COLOUR[rows[i].state],
  });
  const drift = rows.filter((r) => r.state === "drift");
  const errors = rows.filter((r) => r.state === "error");
  // Below the table too, a warning or an error is one line whatever the row holds.
  const warnings = rows.flatMap((r) => r.warnings.map((w) => printableLine(`  ${r.vm} ${r.installer}: ${w}`)));
  const lines = [table];
  if (warnings.length) lines.push("", "warnings:", ...warnings);
  if (errors.length) {
    lines.push("", "errors (the check could not tell; full progress in the log):");
    for (const r of errors)
      lines.push(printableLine(`  ${r.vm} ${r.installer}: ${r.summary}${r.log ? ` (log: ${r.log})` : ""}`));
  }
  const checked = rows.filter((r) => r.state !== "skipped").length;
  lines.push(
    "",
    errors.length
      ? `${errors.length} of ${checked} checks failed; ${drift.length} found drift`
      : drift.length
        ? `drift: ${drift.length} of ${checked} installers would change something; ${fixes(drift, changed)}`
        : `in sync: all ${checked} installers would change nothing`,
  );
  return lines.join("\n");
}

/**
 * The commands that put the drift back, per VM from its first drifting installer (those after it on the VM
 * rerun with it): a plain deploy when that installer's settings changed in cdktf.json since the last deploy
 * (`changed`, "<vm> <installer>"), else a rerun (no setting changed, so a deploy reruns nothing). Without
 * `changed` (the state could not be read) both are named.
 */
function fixes(drift: DriftRow[], changed?: ReadonlySet<string>): string {
  const first = new Map<string, string>();
  for (const r of drift) if (!first.has(r.vm)) first.set(r.vm, r.installer);
  const rerun = (vm: string, installer: string) => `npm run rerun -- ${vm} ${installer}`;
  if (!changed) {
    return (
      `to put it back: ${[...first].map(([vm, i]) => rerun(vm, i)).join("; ")} (it reruns the installers after ` +
      "it on that VM too); after an edit to cdktf.json not yet deployed: npm run deploy"
    );
  }
  const edited = [...first].filter(([vm, i]) => changed.has(`${vm} ${i}`)).map(([vm]) => vm);
  const commands = [
    ...[...first].filter(([vm]) => !edited.includes(vm)).map(([vm, i]) => rerun(vm, i)),
    ...(edited.length ? [`npm run deploy (cdktf.json changed for ${edited.join(", ")} since the last deploy)`] : []),
  ];
  return `to put it back: ${commands.join("; ")}`;
}
