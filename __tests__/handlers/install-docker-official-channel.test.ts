// install-docker's official channel on a VM without Docker: Docker's key checked and written as a binary
// keyring, a signed-by source for the release's suite (Ubuntu 22.04 and 24.04, Debian 12 from a mirror),
// curl installed first when missing, and a repository that lacks a package: skipped if optional, else a
// readable error and the source and key taken back. Replacing docker.io and failing mirrors have files of their own.
import {
  CE,
  CE_NOBLE,
  dockerList,
  hello,
  info,
  install,
  keyFetch,
  keyWrite,
  look,
  nobleOffer,
  OFFICIAL_ALL,
  officialLine,
  officialOffer,
  os,
  policy,
  run,
  running,
  staleLook,
  update,
  usermod,
} from "./support/docker-steps";
import { DEBIAN_12, UBUNTU_2204, UBUNTU_2404 } from "./support/fixtures";
import { grantsRead, grantsWrite } from "./support/grants-steps";

describe("install-docker: official channel", () => {
  it.each([
    { release: "Ubuntu 22.04", os: UBUNTU_2204, codename: "jammy", offer: officialOffer(), packages: CE },
    { release: "Ubuntu 24.04", os: UBUNTU_2404, codename: "noble", offer: nobleOffer(), packages: CE_NOBLE },
  ])("$release ($codename) from nothing: Docker's key, signed-by source, packages, group, hello-world", async (t) => {
    const line = officialLine(t.codename);
    const { result, remote, lines, error } = await run({}, [
      os(t.os),
      look({}),
      keyFetch("ubuntu"),
      keyWrite(line),
      staleLook([dockerList(line)]),
      update,
      policy(OFFICIAL_ALL, t.offer),
      install(OFFICIAL_ALL),
      look({ cli: "27.0.3", compose: "2.29.1", active: "active", enabled: "enabled", packages: t.packages, group: [] }),
      grantsRead(),
      usermod(["ubuntu"]),
      grantsWrite((w) => expect(w).toMatchObject({ version: 1, docker: { group_members: ["ubuntu"] } })),
      info(),
      hello,
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({
      status: "ok",
      docker_version: "27.0.3",
      server_version: "27.0.3",
      compose: true,
      compose_version: "2.29.1",
      compose_command: "docker compose",
      channel: "official",
      users_added: ["ubuntu"],
      removed: [],
      changed: true,
      changes: [
        "wrote /etc/apt/keyrings/docker.gpg (new key)",
        "wrote /etc/apt/sources.list.d/docker.list (new source)",
        `installed ${OFFICIAL_ALL}`,
        "added ubuntu to group docker",
      ],
      repository: {
        uri: "https://download.docker.com/linux/ubuntu",
        suite: t.codename,
        line,
        keyring: "/etc/apt/keyrings/docker.gpg",
        source_file: "/etc/apt/sources.list.d/docker.list",
      },
      apt_update: { ran: true, reason: "an apt source changed" },
      verify: { mode: "hello-world", detail: "docker run --rm hello-world: Hello from Docker!" },
      packages: { "docker-ce": t.packages["docker-ce"], "containerd.io": "1.7.18-1" },
      os: { id: "ubuntu", codename: t.codename },
    });
    expect(Object.keys(result!.timings_ms)).toEqual([
      "validate",
      "connect",
      "os",
      "check",
      "grants",
      "apt_repository",
      "apt_update",
      "candidates",
      "apt_install",
      "users",
      "verify",
      "total",
    ]);
    expect(lines).toContain(
      "[install-docker] to do (channel official): the docker CLI is not installed; docker-ce from Docker's " +
        "repository is not installed; the compose plugin (docker compose) is not installed",
    );
    expect(lines.some((l) => /^\[install-docker\] apt-get install docker-ce .* \.\.\. \d+\.\ds$/.test(l))).toBe(true);
  });

  it("Debian 12 (bookworm): the debian tree of the repository and a mirror from repo_url", async () => {
    const mirror = "https://mirror.example.com/docker-ce/linux";
    const line = officialLine("bookworm", `${mirror}/debian`);
    const { result, remote, error } = await run({ repo_url: `${mirror}/`, verify: "daemon", users: [] }, [
      os(DEBIAN_12),
      look({}, (c) => expect(c).not.toContain("id -nG")),
      keyFetch("debian", mirror),
      keyWrite(line),
      {
        ...staleLook(),
        check: (c) => {
          expect(c).toContain("/usr/share/keyrings/docker-archive-keyring.gpg");
        },
      },
      update,
      policy(OFFICIAL_ALL, officialOffer(`${mirror}/debian`)),
      install(OFFICIAL_ALL),
      look({ cli: "27.0.3", compose: "2.29.1", active: "active", enabled: "enabled", packages: CE, group: [] }),
      info(),
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({
      status: "ok",
      repository: { uri: `${mirror}/debian`, suite: "bookworm", line },
      users_added: [],
      verify: { mode: "daemon", detail: "docker info: server version 27.0.3" },
    });
  });

  it(
    "a repository without docker-buildx-plugin: skipped with a note; " + "without docker-ce: a readable error",
    async () => {
      const line = officialLine();
      const noBuildx = officialOffer().replace(/docker-buildx-plugin:[\s\S]*?(?=docker-compose-plugin:)/, "");
      const ok = await run({ verify: "daemon" }, [
        os(),
        look({}),
        keyFetch("ubuntu"),
        keyWrite(line, false),
        staleLook(),
        update,
        policy(OFFICIAL_ALL, noBuildx),
        install("docker-ce docker-ce-cli containerd.io docker-compose-plugin"),
        look(running()),
        info(),
      ]);
      expect(ok.error).toBeUndefined();
      expect(ok.result!.warnings).toEqual([
        "docker-buildx-plugin is not offered by https://download.docker.com/linux/ubuntu; skipped",
      ]);
      expect(ok.result!.apt_update).toEqual({ ran: true, reason: "update requested" });

      const bad = await run({}, [
        os(),
        look({}),
        keyFetch("ubuntu"),
        keyWrite(line),
        staleLook(),
        update,
        policy(OFFICIAL_ALL, ""),
        { match: "rm -f /etc/apt/sources.list.d/docker.list /etc/apt/keyrings/docker.gpg", sudo: true },
      ]);
      expect(bad.error?.message).toBe(
        "install-docker failed while installing: Docker's repository https://download.docker.com/linux/ubuntu " +
          "(jammy, amd64) offers no docker-ce, docker-ce-cli, containerd.io, docker-compose-plugin: " +
          "check repo_url (a mirror must carry ubuntu/dists/jammy/stable) and that Docker supports " +
          "Ubuntu 22.04.4 LTS on amd64. " +
          "The source and key this run wrote were removed again (/etc/apt/sources.list.d/docker.list, " +
          "/etc/apt/keyrings/docker.gpg).",
      );
    },
  );

  it("installs curl first when the VM lacks it (Docker's docs, step 1: ca-certificates curl)", async () => {
    const line = officialLine();
    const { result, error, remote } = await run({ verify: "daemon", compose: false }, [
      os(),
      look({ curl: false, packages: { curl: "" } as never }),
      update,
      install("curl"),
      keyFetch("ubuntu"),
      keyWrite(line),
      staleLook(),
      update,
      policy("docker-ce docker-ce-cli containerd.io docker-buildx-plugin", officialOffer()),
      install("docker-ce docker-ce-cli containerd.io docker-buildx-plugin"),
      look(running({ compose: undefined })),
      info(),
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(result!.changes[0]).toBe("installed curl");
  });
});
