// The progress line: rewritten in place on a terminal, a handful of plain lines anywhere else.
import { ERASE_LINE, progressFor, progressLineOnly, streamLog } from "../../lib/shared/progress-line";

/** A stream that records what was written; a terminal of `columns` when `tty`. */
function recorder(tty: boolean, columns = 80) {
  const writes: string[] = [];
  return { writes, text: () => writes.join(""), stream: { isTTY: tty, columns, write: (s: string) => writes.push(s) } };
}

/** What a terminal would show after `text`: carriage return and erase-line applied. */
function screen(text: string): string[] {
  const lines: string[] = [];
  let cur = "";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the terminal's own sequences, interpreted here.
  for (const token of text.split(/(\r\x1b\[2K|\n)/)) {
    if (token === ERASE_LINE) cur = "";
    else if (token === "\n") {
      lines.push(cur);
      cur = "";
    } else cur += token;
  }
  return cur ? [...lines, cur] : lines;
}

describe("on a terminal", () => {
  test("one line, rewritten in place (carriage return + erase line) on every change, erased at the end", () => {
    const r = recorder(true);
    const log = streamLog(r.stream, "demo: ");
    const p = progressFor(log);
    for (let i = 1; i <= 100; i++) p.update(`${i} packages retrieved`, "retrieve");
    p.update("100 packages retrieved", "retrieve"); // unchanged: not written again
    expect(r.writes).toHaveLength(100);
    expect(r.writes.every((w) => w.startsWith(ERASE_LINE) && !w.includes("\n"))).toBe(true);
    expect(screen(r.text())).toEqual(["demo: 100 packages retrieved"]);
    p.end();
    expect(screen(r.text())).toEqual([]);
    p.end(); // idempotent
    log("after");
    expect(screen(r.text())).toEqual(["demo: after"]);
  });

  test("the log's own lines are printed above the progress line, which comes back under them", () => {
    const r = recorder(true);
    const log = streamLog(r.stream, "demo: ");
    const p = progressFor(log);
    p.update("12 packages retrieved");
    log("waiting for another process building the image");
    p.update("13 packages retrieved");
    expect(screen(r.text())).toEqual([
      "demo: waiting for another process building the image",
      "demo: 13 packages retrieved",
    ]);
  });

  test("a line wider than the terminal is cut, so it never wraps (a wrapped line cannot be rewritten)", () => {
    const r = recorder(true, 30);
    const p = progressFor(streamLog(r.stream, "demo: "));
    p.update("x".repeat(100));
    expect(screen(r.text())).toEqual([`demo: ${"x".repeat(20)}...`]);
    expect(screen(r.text())[0]).toHaveLength(29);
  });
});

describe("off a terminal (a pipe, a CI log)", () => {
  test("a line per stage (its last state, once the next begins or the step ends), no escape sequence", () => {
    const r = recorder(false);
    const log = streamLog(r.stream, "demo: ");
    const p = progressFor(log);
    p.update("reading the package index", "index");
    for (let i = 1; i <= 180; i++) p.update(`${i} packages retrieved`, "retrieve");
    log("a line of the step's own");
    for (let i = 1; i <= 164; i++) p.update(`180 packages retrieved, ${i} unpacked`, "install");
    p.end();
    p.end();
    expect(r.text()).toBe(
      [
        "demo: reading the package index",
        "demo: a line of the step's own",
        "demo: 180 packages retrieved",
        "demo: 180 packages retrieved, 164 unpacked",
        "",
      ].join("\n"),
    );
    // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting there is no escape sequence at all.
    expect(r.text()).not.toMatch(/[\x1b\r]/);
  });

  test("a plain function as the log (a test's, the library's silent default) gets the stage lines too", () => {
    const lines: string[] = [];
    const p = progressFor((l) => lines.push(l));
    p.update("a", "one");
    p.update("b", "two");
    p.end();
    expect(lines).toEqual(["a", "b"]);
  });

  test("progressLineOnly prints nothing off a terminal: the step's own lines say enough", () => {
    const r = recorder(false);
    const p = progressLineOnly(streamLog(r.stream));
    p.update("cdktf deploy: synthesizing");
    p.end();
    expect(r.writes).toEqual([]);
  });

  test("streamLog(stream, prefix, false) is plain even on a terminal", () => {
    const r = recorder(true);
    const log = streamLog(r.stream, "", false);
    expect(log.progress).toBeUndefined();
    progressFor(log).update("x");
    expect(r.writes).toEqual([]);
  });
});
