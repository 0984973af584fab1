// The sandbox's release option (`--release`, VM_INSTALL_SANDBOX_RELEASE, startSandbox({ release })) and
// the apt sources a release's image gets from the host's configuration. No sandbox is booted here.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { imageAptConfig } from "../dev/sandbox/hostapt";
import { imagePaths } from "../dev/sandbox/image";
import {
  DEFAULT_RELEASE,
  parseRelease,
  RELEASE_ENV,
  releaseOption,
  resolveRelease,
  SUPPORTED_RELEASES,
} from "../dev/sandbox/release";

const ROOT = path.resolve(__dirname, "..");
const SUPPORTED = "supported: bookworm (Debian 12), trixie (Debian 13)";

describe("release names", () => {
  test("bookworm is the default; trixie is the second release", () => {
    expect(DEFAULT_RELEASE).toBe("bookworm");
    expect(SUPPORTED_RELEASES).toEqual(["bookworm", "trixie"]);
    expect(parseRelease("trixie")).toBe("trixie");
    expect(parseRelease("bookworm")).toBe("bookworm");
  });

  test.each(["sid", "Trixie", "debian-13", "13", "", "bookworm "])(
    "%j is refused with a message listing the supported releases",
    (bad) => {
      expect(() => parseRelease(bad, "--release")).toThrow(
        `--release: unknown sandbox release ${JSON.stringify(bad)}; ${SUPPORTED}`,
      );
    },
  );

  test("the explicit release wins over the environment, the environment over the default; a bad value there names the variable", () => {
    expect(resolveRelease(undefined, {})).toBe("bookworm");
    expect(resolveRelease(undefined, { [RELEASE_ENV]: "" })).toBe("bookworm");
    expect(resolveRelease(undefined, { [RELEASE_ENV]: "trixie" })).toBe("trixie");
    expect(resolveRelease("bookworm", { [RELEASE_ENV]: "trixie" })).toBe("bookworm");
    expect(() => resolveRelease(undefined, { [RELEASE_ENV]: "jessie" })).toThrow(
      `VM_INSTALL_SANDBOX_RELEASE: unknown sandbox release "jessie"; ${SUPPORTED}`,
    );
    expect(() => resolveRelease("buster", {})).toThrow(`unknown sandbox release "buster"; ${SUPPORTED}`);
  });

  test("--release as parseArgs gives it: none is the default, one is checked, a second one is refused", () => {
    expect(releaseOption(undefined)).toBe(resolveRelease());
    expect(releaseOption(["trixie"])).toBe("trixie");
    expect(() => releaseOption(["trixie", "bookworm"])).toThrow("--release given twice");
    expect(() => releaseOption(["sid"])).toThrow(`--release: unknown sandbox release "sid"; ${SUPPORTED}`);
  });

  test.each([
    [["up", "--release", "sid"], 'sandbox: --release: unknown sandbox release "sid"'],
    [["image", "--release"], "sandbox: image: --release needs a value (R)"],
  ])("the CLI refuses `%s` with exit 64 before touching anything, listing the releases", (args, said) => {
    const r = spawnSync(process.execPath, ["-r", "./bin/ts-register.js", "dev/sandbox/cli.ts", ...args], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect({ status: r.status, stdout: r.stdout }).toEqual({ status: 64, stdout: "" });
    expect(r.stderr).toContain(said);
    // The usage below the message lists them.
    expect(r.stderr).toContain("releases (R): bookworm (Debian 12), trixie (Debian 13)");
    expect(r.stderr).toContain("up [name] [--json] [--release R]");
  });

  test("a bad VM_INSTALL_SANDBOX_RELEASE fails the CLI's up the same way", () => {
    const r = spawnSync(process.execPath, ["-r", "./bin/ts-register.js", "dev/sandbox/cli.ts", "up"], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, [RELEASE_ENV]: "sid" },
    });
    expect(r.status).toBe(64);
    expect(r.stderr).toContain(`sandbox: VM_INSTALL_SANDBOX_RELEASE: unknown sandbox release "sid"; ${SUPPORTED}`);
  });
});

describe("a release's image: its own file names, the host's mirror under the release's suite names", () => {
  let dir: string;
  let keyring: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "hostapt-"));
    fs.mkdirSync(path.join(dir, "sources.list.d"));
    fs.mkdirSync(path.join(dir, "apt.conf.d"));
    keyring = path.join(dir, "archive.gpg");
    fs.writeFileSync(keyring, "not really a keyring");
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const bookwormHost = () =>
    fs.writeFileSync(
      path.join(dir, "sources.list.d", "debian.sources"),
      `Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: ${keyring}\n\n` +
        `Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\nComponents: main\nSigned-By: ${keyring}\n`,
    );

  test("each release's tarball and rootfs carry its name, so one release's build never replaces another's", () => {
    const a = imagePaths("0123456789abcdef", "bookworm");
    const b = imagePaths("0123456789abcdef", "trixie");
    expect(path.basename(a.tarball)).toBe("sandbox-base-bookworm-0123456789abcdef.tar.zst");
    expect(path.basename(b.tarball)).toBe("sandbox-base-trixie-0123456789abcdef.tar.zst");
    expect(path.basename(b.rootfs)).toBe("sandbox-rootfs-trixie-0123456789abcdef");
    expect(imagePaths("0123456789abcdef").release).toBe("bookworm");
  });

  test("a Debian 12 host lends its mirror and security mirror to trixie: same URIs, keyring and options, the suites renamed", () => {
    bookwormHost();
    const trixie = imageAptConfig(dir, "trixie");
    expect(trixie.mirror).toBe("http://mirror.example/debian");
    expect(trixie.keyring).toBe(keyring);
    expect(trixie.sourcesFile).toContain("Suites: trixie trixie-updates\n");
    expect(trixie.sourcesFile).toContain("URIs: http://mirror.example/debian-security\nSuites: trixie-security\n");
    expect(trixie.sourcesFile).not.toContain("bookworm\n");
    expect(trixie.sourcesFile).not.toMatch(/Suites:.*bookworm/);
    expect(trixie.sourcesFile).toContain(
      `# from the host's ${path.join(dir, "sources.list.d", "debian.sources")} (its bookworm entry, for trixie)`,
    );
    expect(trixie.sourcesFile).not.toContain("the host has no source for");
    // Bookworm itself: the host's entries as they are.
    const bookworm = imageAptConfig(dir, "bookworm");
    expect(bookworm.sourcesFile).toContain("Suites: bookworm bookworm-updates\n");
    expect(bookworm.sourcesFile).not.toContain("for trixie");
  });

  test("a host that has trixie sources of its own gives those, not bookworm's", () => {
    bookwormHost();
    fs.writeFileSync(path.join(dir, "sources.list.d", "trixie.list"), "deb http://other.example/debian trixie main\n");
    const trixie = imageAptConfig(dir, "trixie");
    expect(trixie.mirror).toBe("http://other.example/debian");
    expect(trixie.sourcesFile).not.toContain("mirror.example");
    expect(trixie.sourcesFile).toContain(
      "# the host has no source for trixie-updates, trixie-security, so neither has the image",
    );
  });

  test("a host with no Debian source of a supported release: refused, naming the release and where it looked", () => {
    fs.writeFileSync(path.join(dir, "sources.list"), "deb http://archive.ubuntu.com/ubuntu jammy main\n");
    expect(() => imageAptConfig(dir, "trixie")).toThrow(
      /^no apt source for Debian trixie on this host, nor for bookworm to lend its mirror \(looked in /,
    );
  });
});
