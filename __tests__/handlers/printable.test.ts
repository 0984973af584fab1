// Text from the VM (os-release, apt's and psql's stderr, any command output) reaches the operator's
// terminal and Terraform's logs through progress lines, the error message and the job's result. What a
// terminal would act on instead of showing is taken out where the text leaves the handler, once: every
// C0 control but newline and tab, DEL, the C1 controls, whole ESC sequences (not only the ESC, or
// "[31m" would remain) and the bidi controls that make text display in another order than it reads.
import { defineHandler, runHandler } from "../../handlers/common/handler-kit";
import { Progress, printable } from "../../handlers/common/progress";
import { defineInstallerDefinition } from "../../shared/installer-definition";
import { SecretScrubber } from "../../shared/secrets";
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

const C0 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).filter((c) => c !== "\n" && c !== "\t");
const C1 = Array.from({ length: 32 }, (_, i) => String.fromCharCode(0x80 + i));
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

  it.each(BIDI.map((c) => [c.charCodeAt(0)]))("removes bidi control U+%s", (code) => {
    expect(printable(`a${String.fromCharCode(code)}b`)).toBe("ab");
  });

  it.each(SEQUENCES.map((s) => [JSON.stringify(s), s]))("removes the whole escape sequence %s", (_, seq) => {
    expect(printable(`before ${seq}after`)).toBe("before after");
  });

  it("keeps newlines, tabs and ordinary text, non-ASCII letters included", () => {
    const text = "Setting up jq (1.6-2.1) ...\n\tdone: Grüße, 日本語, ½ — “quoted”\n";
    expect(printable(text)).toBe(text);
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
    expect(result.summary).toBe("said warn!\n");
    expect(result.warnings).toEqual(["warn!\n"]);
    expect((result as unknown as { said: Record<string, string> }).said).toEqual({ "key warn!\n": "warn!\n" });
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
});
