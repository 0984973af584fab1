// Text from a VM as data, never as layout: the one reducer for what a VM (or a job record claiming to be
// one's) says, wherever it leaves for a person: a handler's progress lines, error and result, and the
// operator's tables and reports, which reduce every cell again rather than trust where it came from. A
// terminal acts on escape sequences and controls instead of showing them, a line break in a cell makes a
// row of its own, and bidi controls make text display in another order than it reads.

/** What a line break inside one line of text shows as: visible, and not a break. */
export const LINE_BREAK_MARK = "⏎";

/** Line breaks as Unicode has them (UAX #14's mandatory breaks): LF, CRLF, VT, FF, NEL, U+2028, U+2029. */
const LINE_BREAK = /\r\n|[\n\v\f\x85\u2028\u2029]/g;
/**
 * Terminal escape sequences, whole: CSI (`ESC [` ... final byte, and its 8-bit form U+009B), OSC, DCS,
 * SOS, PM and APC strings up to their terminator (BEL or `ESC \\`, or the end of the line when there is
 * none, so an unterminated one cannot swallow the lines after it), and two-byte escapes (`ESC c`, `ESC (0`).
 */
const ESCAPE_SEQUENCE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the escape sequences are exactly what is removed here.
  /\x1b\[[0-?]*[ -/]*[@-~]?|\x9b[0-?]*[ -/]*[@-~]?|\x1b[\]PX^_][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x1b[ -/]*[0-~]?/g;
/**
 * What is left to remove character by character: every control but newline and tab (C0 with a lone CR,
 * which overwrites the line on a terminal; DEL; C1), every format character (the bidi marks, embeddings,
 * overrides and isolates; zero-width space, joiners, word joiner, BOM, soft hyphen, tag characters), and
 * lone surrogates, which no encoding can write (they become U+FFFD).
 */
const CONTROL = /(?![\n\t])\p{Cc}|\p{Cf}/gu;
const LONE_SURROGATE = /\p{Cs}/gu;

/**
 * `text` without what a terminal or log viewer would act on instead of showing; for text that is meant to
 * have lines (an error message: a heading, then its problems). Every line break becomes a newline;
 * newlines and tabs stay.
 */
export function printable(text: string): string {
  // Breaks first: every kind ends an unterminated escape string, as LF does.
  return text
    .replace(LINE_BREAK, "\n")
    .replace(ESCAPE_SEQUENCE, "")
    .replace(CONTROL, "")
    .replace(LONE_SURROGATE, "\uFFFD");
}

/**
 * `text` as one printable line, for a field that is one line (a version, a name, a state, a summary, a
 * table cell, an XML attribute): `printable(text)` without the line breaks at its ends, each one inside
 * shown as LINE_BREAK_MARK (a break is not lost: it shows), a tab as a space.
 */
export function printableLine(text: string): string {
  return printable(text)
    .replace(/^\n+|\n+$/g, "")
    .replace(/\n/g, LINE_BREAK_MARK)
    .replace(/\t/g, " ");
}
