import { lookAtBoot } from "../../handlers/common/boot-look";
import { osFromFact, osFromRelease, parseOsReleaseText, UnsupportedOsError } from "../../handlers/common/os-release";
import { DEBIAN_12, FEDORA_39, MINT_21, UBUNTU_2204, UBUNTU_2404 } from "./support/fixtures";
import { ScriptedRemote } from "./support/scripted-remote";

describe("os-release", () => {
  it("reads Ubuntu 22.04 as ubuntu jammy (UBUNTU_CODENAME)", () => {
    expect(osFromRelease(UBUNTU_2204)).toEqual({
      id: "ubuntu",
      family: "ubuntu",
      version_id: "22.04",
      codename: "jammy",
      pretty_name: "Ubuntu 22.04.4 LTS",
    });
  });

  it("reads Ubuntu 24.04 as ubuntu noble", () => {
    expect(osFromRelease(UBUNTU_2404)).toEqual({
      id: "ubuntu",
      family: "ubuntu",
      version_id: "24.04",
      codename: "noble",
      pretty_name: "Ubuntu 24.04.1 LTS",
    });
  });

  it("reads Debian 12 as debian bookworm (VERSION_CODENAME)", () => {
    expect(osFromRelease(DEBIAN_12)).toEqual({
      id: "debian",
      family: "debian",
      version_id: "12",
      codename: "bookworm",
      pretty_name: "Debian GNU/Linux 12 (bookworm)",
    });
  });

  it("takes a derivative by ID_LIKE, with the upstream codename from UBUNTU_CODENAME", () => {
    expect(osFromRelease(MINT_21)).toMatchObject({
      id: "linuxmint",
      family: "ubuntu",
      codename: "jammy",
      version_id: "21.3",
    });
  });

  it("refuses another distribution, saying what it found", () => {
    expect(() => osFromRelease(FEDORA_39)).toThrow(UnsupportedOsError);
    expect(() => osFromRelease(FEDORA_39)).toThrow(
      "unsupported OS on the VM: /etc/os-release says ID=fedora (Fedora Linux 39 (Container Image)); these " +
        "installers support Ubuntu and Debian",
    );
    expect(() => osFromRelease("")).toThrow(/says ID=\(none\)/);
  });

  it("refuses a Debian without a codename (nothing to key repositories by)", () => {
    expect(() => osFromRelease('ID=debian\nPRETTY_NAME="Debian GNU/Linux trixie/sid"\n')).toThrow(
      /neither UBUNTU_CODENAME nor VERSION_CODENAME/,
    );
  });

  it("parses quoting the way os-release(5) defines it", () => {
    expect(parseOsReleaseText(`A="x \\"y\\" \\$z"\nB='lit $x'\nC=bare\n# comment\nD=\n`)).toEqual({
      A: 'x "y" $z',
      B: "lit $x",
      C: "bare",
      D: "",
    });
  });

  it("the kit's boot look reads the file over the remote, unprivileged", async () => {
    const remote = new ScriptedRemote([
      { match: "cat /etc/os-release", sudo: false, facts: { os_release: DEBIAN_12 } },
    ]);
    await expect(lookAtBoot(remote)).resolves.toMatchObject({ os: { family: "debian", codename: "bookworm" } });
    expect(remote.done).toBe(true);
  });

  it("neither file readable: refused, saying so", () => {
    expect(() => osFromFact({ name: "os_release", writer: "root", code: 1, text: "" })).toThrow(
      /cannot read \/etc\/os-release nor \/usr\/lib\/os-release on the VM/,
    );
  });
});
