// The status rows as a person reads them: aligned columns, the status coloured on a terminal and plain
// when piped (so grep and diff see the same text a person sees).

import type { RowStatus, StatusRow } from "./status-rows";

const COLOUR: Record<RowStatus, string> = { ok: "32", partial: "33", failed: "31", skipped: "2", "not run": "2" };
const HEADINGS = ["VM", "INSTALLER", "STATUS", "CHANGED", "DURATION", "LAST RUN", "HOST KEY", "SUMMARY"];

function cells(row: StatusRow): string[] {
  return [
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
  const table = [HEADINGS, ...rows.map(cells)];
  const widths = HEADINGS.map((_, i) => Math.max(...table.map((r) => r[i].length)));
  const lines = table.map((r, n) =>
    r
      .map((cell, i) => {
        const padded = i === r.length - 1 ? cell : cell.padEnd(widths[i]);
        if (!colour) return padded;
        if (n === 0) return `\x1b[1m${padded}\x1b[0m`;
        return i === 2 ? `\x1b[${COLOUR[rows[n - 1].status]}m${padded}\x1b[0m` : padded;
      })
      .join("  ")
      .trimEnd(),
  );
  const logs = rows.filter((r) => r.log).map((r) => `  ${r.vm} ${r.installer}: ${r.log}`);
  return [...lines, ...(logs.length ? ["", "last run's full progress:", ...logs] : [])].join("\n");
}
