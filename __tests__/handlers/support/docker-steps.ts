// install-docker's exchanges with the scripted SSH double, as the handler tests script them: the run (daemon.json
// left out), one builder per exec the job makes (os, the look, Docker's key and source, apt, the group, the
// verification), what Docker's repository offers on jammy, and the VM states the suites start from.
import type { InstallerDeps } from "../../../handlers/common/handler-kit";
import { handler } from "../../../handlers/install-docker/handler";
import { inspectOut, type VmState } from "./docker-look";
import { policyBlock, UBUNTU_2204 } from "./fixtures";
import { sourcesFacts } from "./look-answers";
import { pgpKey } from "./pgp-fixtures";
import { renameOf, writtenFiles } from "./remote-writes";
import { runScripted } from "./run-scripted";
import type { Step } from "./scripted-remote";

/** Docker's real release key: the default repo_key_fingerprint accepts it, and only it. */
const ARMORED = pgpKey("docker-release.asc");

/**
 * install-docker on the double, about packages, the service, the group and the verification: daemon.json is
 * left out (log_rotation false unless the event says otherwise, so the settings own no key of it).
 * install-docker-daemon-config.test.ts tests it, with the default log rotation on.
 */
export const run = (event: unknown, script: Step[], deps: Partial<InstallerDeps> = {}) =>
  runScripted(
    handler,
    typeof event === "object" && event !== null ? { log_rotation: false, ...event } : event,
    script,
    deps,
  );

export const os = (text = UBUNTU_2204): Step => ({
  match: "cat /etc/os-release",
  sudo: false,
  facts: { os_release: text },
});
export const look = (s: VmState, check?: Step["check"]): Step => ({
  match: /^printf '%s ' docker; /,
  sudo: false,
  facts: inspectOut(s),
  check: check ?? ((_c, opts) => expect(opts.env?.LC_ALL).toBe("C")),
});
export const keyFetch = (distro: string, base = "https://download.docker.com/linux"): Step => ({
  match: `curl -fsSL --proto '=http,https' --retry 3 --connect-timeout 20 --max-time 120 -o "$t" ${base}/${distro}/gpg`,
  sudo: false,
  stdout: `amd64\n${Buffer.from(ARMORED).toString("base64")}`,
});
export const keyWrite = (line: string, changed = true): Step => ({
  match: renameOf("/etc/apt/keyrings/docker.gpg"),
  sudo: true,
  stdout: changed
    ? "changed:wrote /etc/apt/keyrings/docker.gpg (new key)\nchanged:wrote /etc/apt/sources.list.d/docker.list (new " +
      "source)\n"
    : "",
  check: (c, o) => {
    // The key, then the source line: the two parts of stdin (apt-repository.ts writeKeyAndSource).
    expect(writtenFiles(c, o.stdin ?? "")[1]).toEqual({
      path: "/etc/apt/sources.list.d/docker.list",
      content: `${line}\n`,
    });
  },
});
/** A check's compare of key and source: the write's decision script, nothing renamed, not marked a change. */
export const keyCompare = (line: string, said: string[] = ["new key", "new source"]): Step => ({
  match: 'if [ -d /etc/apt/keyrings ]; then :; else echo "changed:created /etc/apt/keyrings"; fi',
  sudo: true,
  stdout: said
    .map((why) =>
      why === "new source"
        ? "changed:wrote /etc/apt/sources.list.d/docker.list (new source)\n"
        : `changed:wrote /etc/apt/keyrings/docker.gpg (${why})\n`,
    )
    .join(""),
  check: (c, o) => {
    expect([o.mutates, /mv -fT|mktemp/.test(c)]).toEqual([false, false]);
    expect(String(o.stdin).endsWith(`${line}\n`)).toBe(true);
  },
});
export const staleLook = (files: { path: string; text: string }[] = []): Step => ({
  match: "for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list",
  sudo: true,
  facts: sourcesFacts(files),
});
export const dockerList = (line: string) => ({ path: "/etc/apt/sources.list.d/docker.list", text: `${line}\n` });
export const update: Step = { match: /^apt-get update /, sudo: true };
export const policy = (names: string, stdout: string): Step => ({
  match: `apt-cache policy ${names}`,
  sudo: false,
  stdout,
});
export const install = (specs: string): Step => ({
  match: new RegExp(`^apt-get install -y .*--force-confold ${specs.replace(/[.+]/g, "\\$&")}$`),
  sudo: true,
  check: (_c, opts) => expect(opts.env?.DEBIAN_FRONTEND).toBe("noninteractive"),
});
export const usermod = (users: string[]): Step => ({
  match: users.map((u) => `usermod -aG docker ${u}`).join(" && "),
  sudo: true,
});
export const info = (version = "27.0.3"): Step => ({
  match: "docker info --format '{{.ServerVersion}}'",
  sudo: true,
  stdout: `${version}\n`,
});
export const hello: Step = {
  match: "docker run --rm hello-world",
  sudo: true,
  stdout: "\nHello from Docker!\nThis message shows that your installation appears to be working correctly.\n",
};

export const CE = {
  "docker-ce": "5:27.0.3-1~ubuntu.22.04~jammy",
  "docker-ce-cli": "5:27.0.3-1~ubuntu.22.04~jammy",
  "containerd.io": "1.7.18-1",
};
export const OFFICIAL_ALL = "docker-ce docker-ce-cli containerd.io docker-buildx-plugin docker-compose-plugin";
export const officialOffer = (uri = "https://download.docker.com/linux/ubuntu") =>
  ["docker-ce", "docker-ce-cli", "containerd.io", "docker-buildx-plugin", "docker-compose-plugin"]
    .map((n) =>
      policyBlock(
        n,
        n.startsWith("docker-ce") ? "5:27.0.3-1~ubuntu.22.04~jammy" : "2.29.1-1~ubuntu.22.04~jammy",
      ).replace(/http:\/\/deb\.debian\.org\/debian bookworm\/main/g, `${uri} jammy/stable`),
    )
    .join("");

/** Docker's noble packages as its repository names them (…~ubuntu.24.04~noble), offered from `noble/stable`. */
export const nobleOffer = (offer = officialOffer()) =>
  offer.replace(/ubuntu\.22\.04~jammy/g, "ubuntu.24.04~noble").replace(/ jammy\/stable/g, " noble/stable");
export const CE_NOBLE = {
  "docker-ce": "5:27.0.3-1~ubuntu.24.04~noble",
  "docker-ce-cli": "5:27.0.3-1~ubuntu.24.04~noble",
  "containerd.io": "1.7.18-1",
};

/** Docker's source line for `suite` of the repository tree `tree` (its ubuntu tree unless a case says otherwise). */
export const officialLine = (suite = "jammy", tree = "https://download.docker.com/linux/ubuntu") =>
  `deb [arch=amd64 signed-by=/etc/apt/keyrings/docker.gpg] ${tree} ${suite} stable`;

/** Docker from Docker's repository, complete and running, ubuntu in group docker: `over` says what differs. */
export const running = (over: Partial<VmState> = {}): VmState => ({
  cli: "27.0.3",
  compose: "2.29.1",
  active: "active",
  enabled: "enabled",
  packages: CE,
  group: ["ubuntu"],
  users: { ubuntu: ["docker"] },
  ...over,
});

/** Ubuntu 22.04's own docker.io and what it pulls in, the packages Docker's conflict with. */
export const JAMMY_DOCKER_IO = {
  "docker.io": "24.0.7-0ubuntu2~22.04.1",
  containerd: "1.7.12-0ubuntu2~22.04.1",
  runc: "1.1.12-0ubuntu2~22.04.1",
};
