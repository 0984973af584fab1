// The status rows as a person reads them (lib/operator/text-table.ts): the status coloured on a terminal.

import { printableLine } from "../../shared/printable-text";
import { COLOURS, renderTable } from "../text-table";
import type { RowStatus, StatusRow } from "./status-rows";

const COLOUR: Record<RowStatus, string> = {
  ok: COLOURS.green,
  partial: COLOURS.yellow,
  failed: COLOURS.red,
  skipped: COLOURS.dim,
  "not run": COLOURS.dim,
  "not reached": COLOURS.yellow,
};
const HEADINGS = ["VM", "INSTALLER", "STATUS", "CHANGED", "DURATION", "LAST RUN", "HOST KEY", "SUMMARY"];

function cells(row: StatusRow): string[] {
  return [
    ...(row.wave === undefined ? [] : [String(row.wave)]),
    row.vm,
    row.installer,
    row.status,
    row.changed === undefined ? "-" : row.changed ? "yes" : "no",
    row.durationMs === undefined ? "-" : `${(row.durationMs / 1000).toFixed(1)}s`,
    row.lastRun ? row.lastRun.replace("T", " ").replace(/\.\d+Z$/, "Z") : "-",
    row.hostKey ? `${row.hostKey.slice(0, 19)}...` : "-",
    row.summary || "-",
  ];
}

/** The table; `colour` for a terminal. Logs, when there are any, are listed under it. */
export function renderStatusTable(rows: StatusRow[], colour: boolean): string {
  // Rows of a rollout in waves come wave by wave (status-rows.ts), the wave in a first column.
  const waves = rows.some((r) => r.wave !== undefined);
  const table = renderTable(waves ? ["WAVE", ...HEADINGS] : HEADINGS, rows.map(cells), {
    colour,
    colourColumn: waves ? 3 : 2,
    colourOf: (i) => COLOUR[rows[i].status],
  });
  const logs = rows.filter((r) => r.log).map((r) => printableLine(`  ${r.vm} ${r.installer}: ${r.log}`));
  return [table, ...(logs.length ? ["", "last run's full progress:", ...logs] : [])].join("\n");
}
