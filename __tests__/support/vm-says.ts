// What a VM (or a forged job record in Terraform state) can put in any text field of a job message: a line
// break before what looks like another table row, CR and CRLF, escape sequences (CSI, OSC, 8-bit CSI), the
// Unicode line breaks, NUL and the other controls, bidi and zero-width characters, a lone surrogate.

/** Every kind of text a renderer must not pass on as layout, in one string. */
export const HOSTILE = [
  "24.0.5\nvm2  install-docker  ok  yes  -", // a newline, then a fake row
  "\r\nfake\rrow",
  "\x1b[2J\x1b[H\x1b]0;owned title\x07\x9b31m\x1b[31mred\x1b[0m",
  "a\u2028b\u2029c\u0085d\u000be\u000cf",
  "nul\u0000 del\u007f bell\u0007 tab\there",
  "\u202egnp.exe\u2066x\u2069 zero\u200bwidth\u200d\ufeff",
  "lone \ud800 surrogate",
].join(" ");

/**
 * What must not be left in one line of output: controls (tab, CR, LF, ESC, NUL, DEL, C1 with NEL), format
 * characters (bidi, zero-width, BOM), the Unicode line and paragraph separators, lone surrogates.
 */
export const NOT_ONE_PRINTABLE_LINE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;

/** A result as an installer returns it, with HOSTILE in every text field. */
export function hostileResult(extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    status: HOSTILE,
    changed: true,
    changes: [HOSTILE],
    summary: HOSTILE,
    warnings: [HOSTILE, HOSTILE],
    host_key_sha256: HOSTILE,
    os: { id: HOSTILE, pretty_name: HOSTILE },
    timings_ms: { total: 1500 },
    finished_at: HOSTILE,
    ...extra,
  });
}

/** Every string in `value` (keys too), for checking a whole row or result. */
export function stringsIn(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value !== null && typeof value === "object")
    return Object.entries(value).flatMap(([k, v]) => [k, ...stringsIn(v)]);
  return [];
}

/** The colour codes a table writes itself (SGR), to take them out before checking what is left. */
export const OWN_COLOURS = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");
