// What the sandbox image build shows and keeps, with stand-in build scripts (seconds, no debootstrap):
// a progress line (here, piped: a handful of lines), the whole output in a log file beside the tarball
// whose path it prints, and on a failure the last lines of that log and of debootstrap's own log (copied
// into it, since the build directory is removed). The real build's progress is read in
// __tests__/sandbox/debootstrap-progress.test.ts from a recorded log. Root only (unshare --mount).
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { buildLogPath, buildTarball } from "../../dev/sandbox/image";
import { describeE2E } from "./support/e2e";

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "vmi-image-output-"));
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

const retrieving = (n: number) =>
  `for i in $(seq ${n}); do echo "I: Retrieving pkg$i 1.0-$i"; echo "I: Validating pkg$i 1.0-$i"; done`;

describeE2E("sandbox image build output", () => {
  test("a build: a few lines, the full output kept in <tarball>.build.log (owner only), the build directory gone", async () => {
    const tarball = path.join(tmp, "sandbox-base-0123456789abcdef.tar.zst");
    const said: string[] = [];
    await buildTarball(
      [
        "echo 'I: Retrieving InRelease '",
        retrieving(120),
        "echo 'I: Base system installed successfully.'",
        'echo image > "$OUT"',
      ].join("\n"),
      tarball,
      (l) => said.push(l),
    );
    const logFile = buildLogPath(tarball);
    expect(logFile).toBe(path.join(tmp, "sandbox-base-0123456789abcdef.build.log"));
    expect(said).toEqual([
      expect.stringMatching(
        new RegExp(`^building the sandbox base image \\(debootstrap \\w+, about a minute\\); full log: ${logFile}$`),
      ),
      "building the sandbox image: reading the package index",
      "building the sandbox image: 120 packages retrieved",
      "building the sandbox image: debootstrap done: 120 packages retrieved, 0 unpacked, 0 configured; packing the image",
      expect.stringMatching(/^base image built in \d+\.\d s: .*sandbox-base-0123456789abcdef\.tar\.zst \(0 MB\)$/),
    ]);
    expect(fs.readFileSync(logFile, "utf8").split("\n")).toHaveLength(1 + 240 + 1 + 1);
    expect(fs.statSync(logFile).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(tarball, "utf8")).toBe("image\n");
    expect(fs.readdirSync(tmp).sort()).toEqual([
      "sandbox-base-0123456789abcdef.build.log",
      "sandbox-base-0123456789abcdef.tar.zst",
    ]);
  }, 60_000);

  test("a failed build: the last 20 lines of its log and of debootstrap's own log, both paths, no tarball", async () => {
    const tarball = path.join(tmp, "sandbox-base-fedcba9876543210.tar.zst");
    const said: string[] = [];
    const script = [
      retrieving(30),
      'mkdir -p "$ROOT/debootstrap"',
      'for i in $(seq 12); do echo "dpkg: detail $i"; done > "$ROOT/debootstrap/debootstrap.log"',
      "echo 'W: Failure trying to run: chroot \"$ROOT\" dpkg --force-depends --install /var/cache/apt/archives/x.deb'",
      "exit 3",
    ].join("\n");
    const err = (await buildTarball(script, tarball, (l) => said.push(l)).catch((e: Error) => e)) as Error;
    const logFile = buildLogPath(tarball);
    expect(err).toBeInstanceOf(Error);
    const lines = err.message.split("\n");
    expect(lines[0]).toBe(`sandbox base image build failed (exit 3); the last lines of its log ${logFile}:`);
    // The last 20 lines of the build's output: pkg21's Validating to the W: line.
    expect(lines.slice(1, 21)).toEqual([
      "  I: Validating pkg21 1.0-21",
      ...Array.from({ length: 9 }, (_, i) => [
        `  I: Retrieving pkg${22 + i} 1.0-${22 + i}`,
        `  I: Validating pkg${22 + i} 1.0-${22 + i}`,
      ]).flat(),
      expect.stringMatching(/^ {2}W: Failure trying to run: chroot /),
    ]);
    expect(lines[21]).toBe(`the last lines of debootstrap's own log (copied to the end of ${logFile}):`);
    expect(lines.slice(22, 30)).toEqual(Array.from({ length: 8 }, (_, i) => `  dpkg: detail ${5 + i}`));
    expect(lines.at(-1)).toMatch(/^Check that the host's apt mirror answers/);
    // The log keeps everything, debootstrap's own log at its end; the progress line ended where the build stopped.
    const kept = fs.readFileSync(logFile, "utf8");
    expect(kept).toMatch(/^I: Retrieving pkg1 1\.0-1\n/);
    expect(kept).toMatch(
      /---- debootstrap's own log, .*\(removed with the build directory\) ----\ndpkg: detail 1\n[\s\S]*dpkg: detail 12\n$/,
    );
    expect(said.at(-1)).toBe("building the sandbox image: 30 packages retrieved");
    expect(fs.readdirSync(tmp)).toEqual(["sandbox-base-fedcba9876543210.build.log"]);
  }, 60_000);
});
