// The one reducer for text from a VM (lib/shared/printable-text.ts), over seeded random strings of everything a
// VM can print: whatever goes in, printableLine gives one line with nothing a terminal acts on, the same
// line when given again, and never more text than it was given; text with nothing to reduce comes out as
// it went in. A table of such cells has a line per row.
import { renderTable } from "../../lib/operator/text-table";
import { LINE_BREAK_MARK, printable, printableLine } from "../../lib/shared/printable-text";
import { rng } from "../support/seeded-random";
import { NOT_ONE_PRINTABLE_LINE } from "../support/vm-says";

const SEED = 304;
const RUNS = 2000;

/** Printable text that needs no reducing: ASCII, accents, CJK, emoji (surrogate pairs), NBSP, ⏎ itself. */
const SAFE = ["a", "Z", "0", " ", "-", "~", "é", "ß", "日本", "😀", "\u00a0", "→", LINE_BREAK_MARK, "[31m", "]0;"];
/** What a VM can print besides: controls, escape sequences and their pieces, breaks, bidi, zero-width, halves. */
const NASTY = [
  ...Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)),
  ...Array.from({ length: 33 }, (_, i) => String.fromCharCode(0x7f + i)),
  "\r\n",
  "\x1b[",
  "\x1b]",
  "\x1bP",
  "\x1b\\",
  "\x1b(",
  "\x9b",
  "\u2028",
  "\u2029",
  "\u061c",
  "\u200b",
  "\u200d",
  "\u200e",
  "\u202e",
  "\u2066",
  "\u2069",
  "\ufeff",
  "\u00ad",
  "\ud800",
  "\udc00",
  "\u{e0041}",
];

function randomText(next: () => number, pools: string[][]): string {
  const n = Math.floor(next() * 24);
  let text = "";
  for (let i = 0; i < n; i++) {
    const pool = pools[Math.floor(next() * pools.length)];
    text += next() < 0.1 ? String.fromCharCode(Math.floor(next() * 0x10000)) : pool[Math.floor(next() * pool.length)];
  }
  return text;
}

/** `RUNS` random texts of `pools`, the same ones on every run. */
function texts(pools: string[][], seed = SEED): string[] {
  const next = rng(seed);
  return Array.from({ length: RUNS }, () => randomText(next, pools));
}

describe("printableLine over random text (seeded)", () => {
  const samples = texts([SAFE, NASTY]);

  test("one line: no control (tab, CR, LF, ESC, NUL, C1), no format character, separator or lone surrogate", () => {
    const bad = samples.filter((t) => NOT_ONE_PRINTABLE_LINE.test(printableLine(t)));
    expect(bad.map((t) => JSON.stringify(t))).toEqual([]);
  });

  test("the same line when given again, never longer than the text it was given", () => {
    for (const t of samples) {
      const line = printableLine(t);
      expect(printableLine(line)).toBe(line);
      expect(line.length).toBeLessThanOrEqual(t.length);
    }
  });

  test("printable's lines, the breaks inside marked ⏎, a tab a space", () => {
    for (const t of samples) {
      const lines = printable(t).replace(/^\n+|\n+$/g, "");
      expect(printableLine(t)).toBe(lines.split("\n").join(LINE_BREAK_MARK).replace(/\t/g, " "));
    }
  });

  test("text with nothing to reduce comes out as it went in", () => {
    const next = rng(SEED + 1);
    for (let i = 0; i < RUNS; i++) {
      const t = Array.from({ length: Math.floor(next() * 12) }, () => SAFE[Math.floor(next() * SAFE.length)]).join("");
      expect(printableLine(t)).toBe(t);
      expect(printable(t)).toBe(t);
    }
  });
});

describe("printable over random text (seeded)", () => {
  test("lines with no control but the tab, no format character, separator or lone surrogate; the same when given again", () => {
    for (const t of texts([SAFE, NASTY], SEED + 2)) {
      const text = printable(t);
      for (const line of text.split("\n")) expect(line.replace(/\t/g, " ")).not.toMatch(NOT_ONE_PRINTABLE_LINE);
      expect(printable(text)).toBe(text);
    }
  });
});

describe("a table of random cells", () => {
  test("a line per row, whatever the cells hold", () => {
    const cells = texts([SAFE, NASTY], SEED + 3);
    const rows = Array.from({ length: RUNS / 4 }, (_, i) => cells.slice(i * 4, i * 4 + 4));
    const opts = { colour: false, colourColumn: 0, colourOf: () => "" };
    const lines = renderTable(["A", "B", "C", "D"], rows, opts).split("\n");
    expect(lines).toHaveLength(rows.length + 1);
    for (const line of lines) expect(line).not.toMatch(NOT_ONE_PRINTABLE_LINE);
  });
});
