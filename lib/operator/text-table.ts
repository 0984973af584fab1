// A table as a person reads it on a terminal: aligned columns, bold headings and one coloured column when
// `colour` (a TTY), plain text when piped, so grep and diff see what a person sees. Used by
// `npm run status` and `npm run check`. Cells hold what VMs said: each is made one printable line here.
import { printableLine } from "../shared/printable-text";

/** ANSI colour codes a table's rows use: green, yellow, red, dim. */
export const COLOURS = { green: "32", yellow: "33", red: "31", dim: "2" } as const;

export interface TableOptions {
  colour: boolean;
  /** The column whose cells are coloured. */
  colourColumn: number;
  /** The colour of row `i`'s cell in that column (an ANSI code). */
  colourOf: (i: number) => string;
}

/** The rows under `headings`, a line each whatever the cells hold; the last column is not padded. */
export function renderTable(headings: string[], rows: string[][], opts: TableOptions): string {
  const table = [headings, ...rows].map((r) => r.map(printableLine));
  const widths = headings.map((_, i) => Math.max(...table.map((r) => r[i].length)));
  return table
    .map((r, n) =>
      r
        .map((cell, i) => {
          const padded = i === r.length - 1 ? cell : cell.padEnd(widths[i]);
          if (!opts.colour) return padded;
          if (n === 0) return `\x1b[1m${padded}\x1b[0m`;
          return i === opts.colourColumn ? `\x1b[${opts.colourOf(n - 1)}m${padded}\x1b[0m` : padded;
        })
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
