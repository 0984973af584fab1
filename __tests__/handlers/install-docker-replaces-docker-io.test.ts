// install-docker's official channel over the distribution's docker.io: the packages Docker's conflict with are
// removed only once Docker's repository is in place and its index offers Docker, and only those installed
// (Debian 13's split-off docker-cli and docker-buildx with them); an add-apt-repository source for the same
// repository is taken out, and a masked unit unmasked.
import type { VmState } from "./support/docker-look";
import {
  CE,
  CE_NOBLE,
  dockerList,
  info,
  install,
  JAMMY_DOCKER_IO,
  keyFetch,
  keyWrite,
  look,
  nobleOffer,
  officialLine,
  officialOffer,
  os,
  policy,
  run,
  staleLook,
  update,
} from "./support/docker-steps";
import { DEBIAN_13, UBUNTU_2204, UBUNTU_2404 } from "./support/fixtures";
import type { Step } from "./support/scripted-remote";

/** Docker `cli` from `packages` running, ubuntu in group docker: the VM before the switch and after it. */
const withDocker = (cli: string, packages: Record<string, string>, over: Partial<VmState> = {}): VmState => ({
  cli,
  active: "active",
  enabled: "enabled",
  packages,
  group: ["ubuntu"],
  users: { ubuntu: ["ubuntu", "docker"] },
  ...over,
});

/** apt-get remove of exactly `names`, answering apt's `stdout`. */
const removal = (names: string, stdout: string): Step => ({
  match: new RegExp(`^apt-get remove -y -q -o DPkg::Lock::Timeout=30 ${names.replace(/\./g, "\\.")}$`),
  sudo: true,
  stdout,
});

describe("install-docker: official channel over docker.io", () => {
  it(
    "Ubuntu 24.04 (noble) over noble's docker.io: docker.io containerd runc removed as on jammy, an " +
      "archive_uri-...-noble source taken out",
    async () => {
      const line = officialLine("noble");
      const stray = "/etc/apt/sources.list.d/archive_uri-https_download_docker_com_linux_ubuntu-noble.list";
      const distroDocker = { "docker.io": "24.0.7-0ubuntu4", containerd: "1.7.12-0ubuntu4", runc: "1.1.12-0ubuntu3" };
      const { result, remote, lines, error } = await run({ compose: false, verify: "daemon" }, [
        os(UBUNTU_2404),
        look(withDocker("24.0.7", distroDocker)),
        keyFetch("ubuntu"),
        keyWrite(line),
        staleLook([
          dockerList(line),
          { path: stray, text: "deb [arch=amd64] https://download.docker.com/linux/ubuntu noble stable\n" },
        ]),
        { match: `rm -f ${stray}`, sudo: true, stdout: `changed:removed ${stray}\n` },
        update,
        policy(
          "docker-ce docker-ce-cli containerd.io docker-buildx-plugin",
          nobleOffer().split("docker-compose-plugin:")[0],
        ),
        removal(
          "docker.io containerd runc",
          "Removing docker.io (24.0.7-0ubuntu4) ...\nRemoving containerd (1.7.12-0ubuntu4) ...\nRemoving runc " +
            "(1.1.12-0ubuntu3) ...\n",
        ),
        install("docker-ce docker-ce-cli containerd.io docker-buildx-plugin"),
        look(withDocker("27.0.3", CE_NOBLE)),
        info(),
      ]);
      expect(error).toBeUndefined();
      expect(remote.done).toBe(true);
      expect(result!.repository).toMatchObject({ suite: "noble", line });
      expect(result!.removed).toEqual(["docker.io", "containerd", "runc"]);
      expect(result!.changes).toEqual([
        "wrote /etc/apt/keyrings/docker.gpg (new key)",
        "wrote /etc/apt/sources.list.d/docker.list (new source)",
        `removed ${stray}`,
        "removed docker.io containerd runc",
        "installed docker-ce docker-ce-cli containerd.io docker-buildx-plugin",
      ]);
      expect(lines).toContain(
        "[install-docker] removing packages that conflict with Docker's: docker.io containerd runc",
      );
    },
  );

  it(
    "removes the conflicting packages that are installed (only those) once the repository is in place and its " +
      "index offers Docker, and unmasks the unit",
    async () => {
      const line = officialLine();
      const { result, remote, lines, error } = await run({ compose: false, verify: "daemon" }, [
        os(UBUNTU_2204),
        look(withDocker("24.0.7", JAMMY_DOCKER_IO)),
        keyFetch("ubuntu"),
        keyWrite(line),
        staleLook([
          dockerList(line),
          {
            path: "/etc/apt/sources.list.d/archive_uri-https_download_docker_com_linux_ubuntu-jammy.list",
            text: "deb [arch=amd64] https://download.docker.com/linux/ubuntu jammy stable\n",
          },
        ]),
        {
          match: "rm -f /etc/apt/sources.list.d/archive_uri-https_download_docker_com_linux_ubuntu-jammy.list",
          sudo: true,
          stdout:
            "changed:removed /etc/apt/sources.list.d/archive_uri-https_download_docker_com_linux_ubuntu-jammy.list\n",
        },
        update,
        policy(
          "docker-ce docker-ce-cli containerd.io docker-buildx-plugin",
          officialOffer().split("docker-compose-plugin:")[0],
        ),
        removal(
          "docker.io containerd runc",
          "Removing docker.io (24.0.7-0ubuntu2~22.04.1) ...\nRemoving containerd (1.7.12-0ubuntu2~22.04.1) " +
            "...\nRemoving runc (1.1.12-0ubuntu2~22.04.1) ...\nRemoving pigz (2.6-1) ...\n",
        ),
        install("docker-ce docker-ce-cli containerd.io docker-buildx-plugin"),
        look(withDocker("27.0.3", CE, { active: "inactive", enabled: "masked" })),
        { match: "systemctl unmask docker.service && systemctl enable --now docker.service", sudo: true },
        info(),
      ]);
      expect(error).toBeUndefined();
      expect(remote.done).toBe(true);
      expect(result!.removed).toEqual(["docker.io", "containerd", "runc", "pigz"]);
      expect(result!.changes).toEqual([
        "wrote /etc/apt/keyrings/docker.gpg (new key)",
        "wrote /etc/apt/sources.list.d/docker.list (new source)",
        "removed /etc/apt/sources.list.d/archive_uri-https_download_docker_com_linux_ubuntu-jammy.list",
        "removed docker.io containerd runc pigz",
        "installed docker-ce docker-ce-cli containerd.io docker-buildx-plugin",
        "unmasked docker.service",
        "enabled docker.service",
        "started docker.service",
      ]);
      expect(result!.users_added).toEqual([]);
      expect(lines).toContain(
        "[install-docker] removing packages that conflict with Docker's: docker.io containerd runc",
      );
    },
  );

  it(
    "Debian 13: docker.io's split-off docker-cli and docker-buildx go with it (docker-buildx-plugin could not be " +
      "unpacked over docker-buildx)",
    async () => {
      const line = officialLine("trixie", "https://download.docker.com/linux/debian");
      // As `apt-get install docker.io` leaves Debian 13: the CLI and buildx are packages of their own, pulled in as
      // Recommends.
      const distroDocker = {
        "docker.io": "26.1.5+dfsg1-9+deb13u1+b1",
        "docker-cli": "26.1.5+dfsg1-9+deb13u1+b1",
        "docker-buildx": "0.13.1+ds1-3",
        containerd: "1.7.24~ds1-6+deb13u1",
        runc: "1.1.15+ds1-2+deb13u1",
      };
      const trixieOffer = officialOffer("https://download.docker.com/linux/debian")
        .split("docker-compose-plugin:")[0]
        .replace(/ubuntu\.22\.04~jammy/g, "debian.13~trixie")
        .replace(/ jammy\/stable/g, " trixie/stable");
      const CE13 = {
        "docker-ce": "5:27.0.3-1~debian.13~trixie",
        "docker-ce-cli": "5:27.0.3-1~debian.13~trixie",
        "containerd.io": "1.7.18-1",
      };
      const { result, remote, lines, error } = await run({ compose: false, verify: "daemon" }, [
        os(DEBIAN_13),
        look(withDocker("26.1.5+dfsg1", distroDocker)),
        keyFetch("debian"),
        keyWrite(line),
        staleLook([dockerList(line)]),
        update,
        policy("docker-ce docker-ce-cli containerd.io docker-buildx-plugin", trixieOffer),
        removal(
          "docker.io docker-cli docker-buildx containerd runc",
          "Removing docker.io (26.1.5+dfsg1-9+deb13u1+b1) ...\nRemoving docker-cli (26.1.5+dfsg1-9+deb13u1+b1) " +
            "...\nRemoving docker-buildx (0.13.1+ds1-3) ...\n" +
            "Removing containerd (1.7.24~ds1-6+deb13u1) ...\nRemoving runc (1.1.15+ds1-2+deb13u1) ...\n",
        ),
        install("docker-ce docker-ce-cli containerd.io docker-buildx-plugin"),
        look(withDocker("27.0.3", CE13)),
        info(),
      ]);
      expect(error).toBeUndefined();
      expect(remote.done).toBe(true);
      expect(result!.repository).toMatchObject({ suite: "trixie", line });
      expect(result!.removed).toEqual(["docker.io", "docker-cli", "docker-buildx", "containerd", "runc"]);
      expect(result!.changes).toContain("removed docker.io docker-cli docker-buildx containerd runc");
      expect(lines).toContain(
        "[install-docker] removing packages that conflict with Docker's: docker.io docker-cli docker-buildx " +
          "containerd runc",
      );
    },
  );
});
