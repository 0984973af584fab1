// debootstrap's output as counts, read from a real build's log (fixtures/debootstrap/bookworm-minbase.log:
// the 794 lines a build of dev/sandbox/image.ts printed, kept beside the image as sandbox-base-<hash>.build.log).
import * as fs from "node:fs";
import * as path from "node:path";
import { DebootstrapProgress, describeCounts, stageGroup } from "../../dev/sandbox/debootstrap-progress";
import { progressFor, streamLog } from "../../lib/shared/progress-line";

const RECORDED = fs
  .readFileSync(path.join(__dirname, "..", "fixtures", "debootstrap", "bookworm-minbase.log"), "utf8")
  .trimEnd()
  .split("\n");

/** Every line through a parser and a progress line on `stream`, as buildTarball does. */
function replay(lines: string[], stream: { write(s: string): unknown; isTTY?: boolean }) {
  const counts = new DebootstrapProgress();
  const progress = progressFor(streamLog(stream, "demo: "));
  for (const l of lines) {
    if (counts.read(l))
      progress.update(
        `building the sandbox image: ${describeCounts(counts.counts())}`,
        stageGroup(counts.counts().stage),
      );
  }
  progress.end();
  return counts.counts();
}

test("the recorded build: 180 packages retrieved, 88 extracted, 164 unpacked and 164 configured (each package once)", () => {
  expect(replay(RECORDED, { write: () => true })).toEqual({
    stage: "installed",
    retrieved: 180,
    extracted: 88,
    unpacked: 164,
    configured: 164,
  });
});

test("the stages in the order debootstrap goes through them, with the counts so far", () => {
  const seen: string[] = [];
  const counts = new DebootstrapProgress();
  for (const l of RECORDED)
    if (counts.read(l) && seen.at(-1) !== counts.counts().stage) seen.push(counts.counts().stage ?? "");
  expect(seen).toEqual([
    "index",
    "retrieve",
    "extract",
    "core",
    "unpack",
    "configure",
    "unpack",
    "configure",
    "installed",
  ]);
});

test("piped, the ~800 lines become four, with no escape sequence", () => {
  let text = "";
  replay(RECORDED, { isTTY: false, write: (s: string) => (text += s) });
  expect(text.trimEnd().split("\n")).toEqual([
    "demo: building the sandbox image: reading the package index",
    "demo: building the sandbox image: 180 packages retrieved",
    "demo: building the sandbox image: 180 packages retrieved, 164 unpacked, 164 configured",
    "demo: building the sandbox image: debootstrap done: 180 packages retrieved, 164 unpacked, 164 configured; packing the image",
  ]);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting there is no escape sequence at all.
  expect(text).not.toMatch(/[\x1b\r]/);
});

test("on a terminal, one line rewritten as the counts grow and erased at the end: no newline at all", () => {
  const writes: string[] = [];
  replay(RECORDED, { isTTY: true, write: (s: string) => writes.push(s) });
  expect(writes.join("")).not.toContain("\n");
  expect(writes.filter((w) => w.includes("packages retrieved")).length).toBeGreaterThan(180);
  expect(writes.at(-1)).toBe("\r\x1b[2K");
});

test("lines that are not debootstrap's progress change nothing", () => {
  const counts = new DebootstrapProgress();
  for (const l of [
    "I: Validating curl 7.88.1-10+deb12u5",
    "W: Failure trying to run: chroot ...",
    "",
    "useradd: warning",
  ])
    expect(counts.read(l)).toBe(false);
  expect(counts.counts()).toEqual({ stage: undefined, retrieved: 0, extracted: 0, unpacked: 0, configured: 0 });
  expect(describeCounts(counts.counts())).toBe("starting debootstrap");
  expect(counts.read("I: Retrieving libc6 2.36-9+deb12u10")).toBe(true);
  expect(describeCounts(counts.counts())).toBe("1 package retrieved");
});
