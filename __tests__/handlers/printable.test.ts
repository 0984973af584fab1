// Text from the VM (os-release, apt's and psql's stderr, any command output) reaches the operator's
// terminal and Terraform's logs through progress lines, the error message and the job's result. What a
// terminal would act on instead of showing is taken out where the text leaves the handler, once: every
// C0 control but newline and tab, DEL, the C1 controls, whole ESC sequences (not only the ESC, or
// "[31m" would remain), bidi and zero-width controls. A progress line and every field of the result are
// one line (a line break shows as ⏎); only the error message keeps its lines.
import { defineHandler, runHandler } from "../../handlers/common/handler-kit";
import { Progress } from "../../handlers/common/progress";
import { defineInstallerDefinition } from "../../lib/shared/installer-definition";
import { printable } from "../../lib/shared/printable-text";
import { SecretScrubber } from "../../lib/shared/secrets";
import { HOSTILE, NOT_ONE_PRINTABLE_LINE, stringsIn } from "../support/vm-says";
import { TEST_ENV } from "./support/run-scripted";
import { ScriptedRemote } from "./support/scripted-remote";

/** An installer that passes what the VM printed straight into its report, progress and errors. */
const echoing = defineHandler({
  definition: defineInstallerDefinition({
    key: "echo",
    handler: "install-echo",
    doc: "repeats what the VM says",
    enabledByDefault: false,
    waitTimeoutSec: 60,
    settings: {},
    result: { said: "what the VM said, keyed by it" },
  }),
  model: {
    async inspect({ remote, progress }) {
      const said = (await remote.run("say", { label: "say" })).stdout;
      progress.info(`the VM said ${said}`);
      return said;
    },
    plan: () => [],
    report: ({ state: said }) => ({
      status: "ok" as const,
      summary: `said ${said}`,
      warnings: [said],
      said: { [`key ${said}`]: said },
    }),
  },
});

/** The line breaks that are not LF: each becomes one (a CRLF too). */
const BREAKS = ["\r\n", "\v", "\f", "\x85", "\u2028", "\u2029"];
const C0 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).filter((c) => !"\n\t\v\f".includes(c));
const C1 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x80 + i)).filter((c) => c !== "\x85");
const BIDI = [
  "\u061c",
  "\u200e",
  "\u200f",
  "\u202a",
  "\u202b",
  "\u202c",
  "\u202d",
  "\u202e",
  "\u2066",
  "\u2067",
  "\u2068",
  "\u2069",
  "\u200b", // zero-width space, joiners, word joiner, BOM: invisible, and they split what looks like one word
  "\u200c",
  "\u200d",
  "\u2060",
  "\ufeff",
];
const SEQUENCES = [
  "\x1b[31m", // colour (CSI)
  "\x1b[2J\x1b[H", // clear the screen, cursor home
  "\x1b[?1049h", // private mode
  "\x1b]0;owned title\x07", // window title (OSC, BEL-terminated)
  "\x1b]8;;http://evil.example/\x1b\\", // hyperlink (OSC, ST-terminated)
  "\x1bP+q544e\x1b\\", // DCS
  "\x1b(0", // charset
  "\x1bc", // full reset
  "\x9b31m", // 8-bit CSI
];

describe("printable", () => {
  // ESC and the 8-bit CSI start a sequence that takes the next bytes with it (below); alone at the end
  // of a text, each goes like any other control.
  const alone = (c: string) => (c === "\x1b" || c === "\x9b" ? printable(`ab${c}`) : printable(`a${c}b`));

  it.each(C0.map((c) => [c.charCodeAt(0)]))("removes C0 control %#x", (code) => {
    expect(alone(String.fromCharCode(code))).toBe("ab");
  });

  it.each([...C1, "\x7f"].map((c) => [c.charCodeAt(0)]))("removes DEL and C1 control %#x", (code) => {
    expect(alone(String.fromCharCode(code))).toBe("ab");
  });

  it.each(BIDI.map((c) => [c.charCodeAt(0).toString(16).padStart(4, "0"), c]))(
    "removes bidi or zero-width control U+%s",
    (_, c) => {
      expect(printable(`a${c}b`)).toBe("ab");
    },
  );

  it.each(SEQUENCES.map((s) => [JSON.stringify(s), s]))("removes the whole escape sequence %s", (_, seq) => {
    expect(printable(`before ${seq}after`)).toBe("before after");
  });

  it("keeps newlines, tabs and ordinary text, non-ASCII letters included", () => {
    const text = "Setting up jq (1.6-2.1) ...\n\tdone: Grüße, 日本語, ½ — “quoted”\n";
    expect(printable(text)).toBe(text);
  });

  it.each(BREAKS.map((b) => [JSON.stringify(b), b]))("a line break %s becomes a newline", (_, b) => {
    expect(printable(`a${b}b`)).toBe("a\nb");
  });

  it("CRLF and apt's CR-overwritten progress become plain lines", () => {
    expect(printable("E: failed\r\nGet:1 10%\rGet:1 100%\n")).toBe("E: failed\nGet:1 10%Get:1 100%\n");
  });

  it("an unterminated OSC does not swallow the lines after it", () => {
    expect(printable("x\x1b]0;title\nnext line")).toBe("x\nnext line");
  });
});

describe("at the handler's boundary", () => {
  const hostile = "Debian\x1b[31m GNU/Linux\x07 12\x00\u202e(bookworm)\x1b]0;t\x07";
  const osRelease = `ID=debian\nVERSION_CODENAME=bookworm\nPRETTY_NAME="${hostile}"\n`;

  it("progress lines", () => {
    const lines: string[] = [];
    new Progress("x", { write: (l) => lines.push(l), secrets: new SecretScrubber() }).info(`os: ${hostile}`);
    expect(lines).toEqual(["[x] os: Debian GNU/Linux 12(bookworm)"]);
  });

  it("the result (every string in it) and every progress line of a run", async () => {
    const lines: string[] = [];
    const remote = new ScriptedRemote([
      { match: "os-release", facts: { os_release: osRelease } },
      { match: "say", stdout: `warn\x1b[1m!\x1b[0m\u202e\n` },
    ]);
    const result = await runHandler(
      echoing,
      {},
      { env: TEST_ENV, connect: async () => remote, write: (l) => lines.push(l), secrets: new SecretScrubber() },
    );
    expect(result.os.pretty_name).toBe("Debian GNU/Linux 12(bookworm)");
    expect(result.summary).toBe("said warn!");
    expect(result.warnings).toEqual(["warn!"]);
    expect((result as unknown as { said: Record<string, string> }).said).toEqual({ "key warn!": "warn!" });
    for (const line of lines) expect(line).toBe(printable(line));
    expect(lines.join("\n")).toContain("os: Debian GNU/Linux 12(bookworm)");
  });

  it("the error message", async () => {
    const remote = new ScriptedRemote([
      { match: "os-release", facts: { os_release: osRelease } },
      { match: "say", code: 1, stderr: "E: \x1b[31mbad\x1b[0m\x07\u202e thing\r\n" },
    ]);
    const err = await runHandler(
      echoing,
      {},
      { env: TEST_ENV, connect: async () => remote, write: () => undefined, secrets: new SecretScrubber() },
    ).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain("E: bad thing");
    expect((err as Error).message).toBe(printable((err as Error).message));
  });

  it("a VM that says anything: each progress line and every string of the result (keys too) is one line", async () => {
    const lines: string[] = [];
    const remote = new ScriptedRemote([
      {
        match: "os-release",
        facts: { os_release: `ID=debian\nVERSION_CODENAME=bookworm\nPRETTY_NAME="${HOSTILE}"\n` },
      },
      { match: "say", stdout: HOSTILE },
    ]);
    const deps = { env: TEST_ENV, connect: async () => remote, write: (l: string) => lines.push(l) };
    const result = await runHandler(echoing, {}, { ...deps, secrets: new SecretScrubber() });
    for (const text of [...lines, ...stringsIn(result)]) expect(text).not.toMatch(NOT_ONE_PRINTABLE_LINE);
    expect(result.summary).toMatch(/^said 24\.0\.5⏎vm2 {2}install-docker {2}ok/);
    expect(lines.filter((l) => l.includes("the VM said"))).toHaveLength(1);
  });
});
