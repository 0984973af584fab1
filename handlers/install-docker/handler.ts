// install-docker: Docker Engine (and compose) on the VM, the way Docker's install docs do it, Ansible-style.
//   event: { compose: true,                               compose v2 (the plugin) as well
//            channel: "official" | "distro",              Docker's apt repository, or the OS's docker.io
//            repo_url: "https://download.docker.com/linux", Docker's repository or a mirror of it (+ /ubuntu | /debian)
//            users: ["ubuntu"],                           added to the docker group; default [SSH_USER]
//            verify: "hello-world" | "daemon",            `docker run --rm hello-world`, or `docker info` (no registry)
//            update: true, cache_valid_sec: 3600,         as install-packages: apt-get update first / unless fresher
//            ssh: {...}, apt: {...} }                     retry and apt lock settings (see common/ssh.ts, common/apt.ts)
//   env:   VM_IP, SSH_USER, SSH_KEY, optional SSH_PORT, SSH_HOST_KEY_SHA256
//
// Flow: validate -> one read-only look at the VM (docker, compose, the service, dpkg, the group) ->
//   already there (CLI works, daemon active, compose when asked, and for "official" it is docker-ce):
//     report "already_installed"; no apt at all, only a missing group membership or a disabled service
//     is fixed;
//   else "official": ca-certificates + curl if missing -> remove the packages Docker's docs list as
//     conflicting (only those installed) -> Docker's key + signed-by source for the detected distribution
//     and codename -> stale Docker sources/keys away -> apt-get update -> docker-ce docker-ce-cli
//     containerd.io [docker-buildx-plugin if offered] [docker-compose-plugin];
//   or "distro": docker.io [+ the distribution's compose, picked by what apt offers];
//   -> service enabled and running -> users in the docker group -> verify -> report what changed.

import { Apt, aptEventSettings, AptEventSettings, aptFailureReason, AptUpdateOutcome, PackageState, parseDpkgQuery, resolveAptSettings } from "../common/apt";
import { ensureAptRepository, removeStaleRepositories } from "../common/apt-repository";
import { CommandError, Remote, tail } from "../common/exec";
import { CommonResult, defineInstaller, runInstaller } from "../common/handler-kit";
import { repoUrl, unixUser } from "../../shared/names";
import { OsInfo } from "../common/os-release";
import { Progress } from "../common/progress";
import { command, quote } from "../../shared/shell-quote";
import { boolean, integer, list, oneOf, optional } from "../../shared/validate";

export type DockerChannel = "official" | "distro";
export type DockerVerify = "hello-world" | "daemon";

export interface InstallDockerEvent {
  compose: boolean;
  channel: DockerChannel;
  repo_url: string;
  /** Absent: the SSH login user. */
  users?: string[];
  verify: DockerVerify;
  update: boolean;
  cache_valid_sec?: number;
  apt?: AptEventSettings;
}

export interface InstallDockerResult {
  status: "ok" | "already_installed";
  /** What this run changed on the VM, one line each; empty when nothing. */
  changed: string[];
  /** The docker CLI's version ("27.0.3", "20.10.24+dfsg1"). */
  docker_version: string;
  /** The daemon's version, from the verification (absent for already_installed). */
  server_version?: string;
  /** Whether compose works on the VM now. */
  compose: boolean;
  compose_version?: string;
  /** How to call it: the v2 plugin ("docker compose") or the standalone v1 ("docker-compose"). */
  compose_command?: "docker compose" | "docker-compose";
  channel: DockerChannel;
  /** Installed version of each Docker package present (docker-ce, containerd.io, docker.io, ...). */
  packages: Record<string, string>;
  /** Users this run added to the docker group (their next SSH session has it). */
  users_added: string[];
  /** Conflicting packages this run removed (official channel). */
  removed: string[];
  /** Docker's repository as configured (official channel). */
  repository?: { uri: string; suite: string; line: string; keyring: string; source_file: string };
  apt_update: AptUpdateOutcome;
  /** How the installation was checked and what it said. */
  verify: { mode: DockerVerify | "skipped"; detail: string };
  /** Notes a person should read (a package skipped, compose v1 only, ...). */
  notes: string[];
  summary: string;
}

/** Docker's upstream, also what stale-entry clean-up recognises when repo_url is a mirror. */
export const DOCKER_UPSTREAM = "https://download.docker.com/linux";
/** Docker's release signing key (docs: "9DC8 5822 9FC7 DD38 854A E2D8 8D81 803C 0EBF CD88"), as apt-key put it in trusted.gpg. */
export const DOCKER_KEY_FINGERPRINT = "9DC858229FC7DD38854AE2D88D81803C0EBFCD88";
/** Keyrings earlier versions of Docker's docs (and common guides) told people to create. */
export const LEGACY_DOCKER_KEYRINGS = [
  "/usr/share/keyrings/docker-archive-keyring.gpg",
  "/usr/share/keyrings/docker.gpg",
  "/etc/apt/keyrings/docker.gpg",
  "/etc/apt/keyrings/docker.asc",
  "/etc/apt/trusted.gpg.d/docker.gpg",
  "/etc/apt/trusted.gpg.d/docker.asc",
];
/** What Docker's docs remove before installing docker-ce ("Uninstall old versions"). */
export const CONFLICTING_PACKAGES = ["docker.io", "docker-doc", "docker-compose", "docker-compose-v2", "podman-docker", "containerd", "runc"];
/** Docker's packages; docker-buildx-plugin only when the repository offers it (mirrors may not). */
export const OFFICIAL_PACKAGES = ["docker-ce", "docker-ce-cli", "containerd.io"];
export const OPTIONAL_OFFICIAL_PACKAGES = ["docker-buildx-plugin"];
export const COMPOSE_PLUGIN = "docker-compose-plugin";
/**
 * The distribution's compose, best first: Ubuntu's v2 plugin (universe), Docker's plugin when its
 * repository happens to be configured, then "docker-compose" (v1, Python, on Debian 12 and Ubuntu 22.04;
 * v2 from Debian 13 on). Which one exists is read from apt, not assumed per release.
 */
export const DISTRO_COMPOSE_CHOICES = ["docker-compose-v2", "docker-compose-plugin", "docker-compose"];
const PREREQUISITES = ["ca-certificates", "curl"];
const WATCHED = [...new Set([...OFFICIAL_PACKAGES, ...OPTIONAL_OFFICIAL_PACKAGES, COMPOSE_PLUGIN, ...CONFLICTING_PACKAGES, ...PREREQUISITES])];
const DOCKER_PACKAGES = WATCHED.filter((p) => !PREREQUISITES.includes(p));

// ---------------------------------------------------------------------------------------------------
// Looking at the VM: one unprivileged command, read-only.

/** Docker as the VM has it right now. */
export interface DockerState {
  /** `docker --version` worked: the version it printed. */
  cli?: string;
  /** `docker compose version` (the v2 plugin) worked: its version. */
  composeV2?: string;
  /** `docker-compose --version` (standalone) worked: its version. Only asked when the plugin is absent. */
  composeV1?: string;
  /** systemctl is-active docker.service: "active", "inactive", "failed", ... */
  active: string;
  /** systemctl is-enabled docker.service: "enabled", "disabled", "masked", "" (no unit) ... */
  enabled: string;
  packages: Map<string, PackageState>;
  /** The docker group exists. */
  group: boolean;
  /** Per user asked about: undefined when the user does not exist, else their groups. */
  users: Map<string, string[] | undefined>;
  curl: boolean;
}

/** The inspect command for `users`. Each probe prints "@@@<name> <exit status>" and then its output. */
export function inspectCommand(users: string[]): string {
  const probe = (name: string, cmd: string) => `o=$(${cmd} 2>&1); r=$?; printf '@@@%s %s\\n%s\\n' ${name} "$r" "$o"`;
  return [
    probe("docker", "docker --version"),
    probe("compose", "docker compose version"),
    // The standalone v1 starts a Python interpreter (half a second): only asked when the plugin is not there.
    `if [ "$r" -ne 0 ] && command -v docker-compose >/dev/null 2>&1; then ${probe("compose_v1", "docker-compose --version")}; fi`,
    probe("active", "systemctl is-active docker.service"),
    probe("enabled", "systemctl is-enabled docker.service"),
    probe("dpkg", `dpkg-query -W -f='\${Package}\\t\${Status}\\t\${Version}\\n' ${WATCHED.join(" ")}`),
    probe("group", "getent group docker"),
    ...users.map((u) => probe(`user:${u}`, `id -nG ${quote(u)}`)),
    probe("curl", "command -v curl"),
  ].join("\n");
}

/** The probes' output as name -> {code, out}. */
function sections(stdout: string): Map<string, { code: number; out: string }> {
  const out = new Map<string, { code: number; out: string }>();
  let current: { code: number; lines: string[] } | undefined;
  const flush = (name: string | undefined) => {
    if (name && current) out.set(name, { code: current.code, out: current.lines.join("\n").trim() });
  };
  let name: string | undefined;
  for (const line of stdout.split("\n")) {
    const m = /^@@@(\S+) ([0-9]+)$/.exec(line);
    if (m) {
      flush(name);
      name = m[1];
      current = { code: Number(m[2]), lines: [] };
    } else if (current) {
      current.lines.push(line);
    }
  }
  flush(name);
  return out;
}

/** "Docker version 27.0.3, build 7d4bcd8" -> "27.0.3"; "Docker Compose version v2.29.1" -> "2.29.1". */
export function versionIn(text: string): string | undefined {
  return /version v?([0-9][^\s,]*)/i.exec(text)?.[1];
}

export function parseInspect(stdout: string, users: string[]): DockerState {
  const s = sections(stdout);
  const ok = (name: string) => (s.get(name)?.code === 0 ? s.get(name)!.out : undefined);
  const cliOut = ok("docker");
  const v2 = ok("compose");
  const v1 = ok("compose_v1");
  const firstLine = (name: string) => (s.get(name)?.out ?? "").split("\n")[0].trim();
  const userMap = new Map<string, string[] | undefined>();
  for (const u of users) {
    const r = s.get(`user:${u}`);
    userMap.set(u, r && r.code === 0 ? r.out.split(/\s+/).filter(Boolean) : undefined);
  }
  return {
    cli: cliOut ? versionIn(cliOut) ?? cliOut : undefined,
    composeV2: v2 ? versionIn(v2) ?? v2 : undefined,
    composeV1: v1 ? versionIn(v1) ?? v1 : undefined,
    // "active", "inactive", "failed", ...; an error text (no systemd, no bus) counts as "".
    active: /^[a-z-]+$/.test(firstLine("active")) ? firstLine("active") : "",
    // "enabled", "disabled", "masked", "static", "not-found", ...; an error text (no unit) counts as "".
    enabled: /^[a-z-]+$/.test(firstLine("enabled")) ? firstLine("enabled") : "",
    packages: parseDpkgQuery(s.get("dpkg")?.out ?? "", WATCHED),
    group: s.get("group")?.code === 0,
    users: userMap,
    curl: s.get("curl")?.code === 0,
  };
}

async function inspect(remote: Remote, users: string[]): Promise<DockerState> {
  const result = await remote.run(inspectCommand(users), { env: { LC_ALL: "C" }, label: "checking Docker on the VM", timeoutMs: 60_000 });
  return parseInspect(result.stdout, users);
}

const installed = (state: DockerState, name: string) => state.packages.get(name)?.installed === true;

/** Why Docker is not yet as asked, in words; empty when it is. */
export function unmetNeeds(state: DockerState, event: Pick<InstallDockerEvent, "channel" | "compose">): string[] {
  const needs: string[] = [];
  if (!state.cli) needs.push("the docker CLI is not installed");
  if (event.channel === "official" && !installed(state, "docker-ce")) {
    const other = installed(state, "docker.io") ? " (docker.io from the distribution is, and is replaced)" : "";
    needs.push(`docker-ce from Docker's repository is not installed${other}`);
  }
  if (state.cli && state.active !== "active") needs.push(`docker.service is ${state.active || "missing"}`);
  if (event.compose) {
    const composeOk = state.composeV2 !== undefined || (event.channel === "distro" && state.composeV1 !== undefined);
    if (!composeOk) needs.push(event.channel === "official" ? "the compose plugin (docker compose) is not installed" : "compose is not installed");
  }
  return needs;
}

// ---------------------------------------------------------------------------------------------------
// Acting.

/** Makes docker.service enabled and running; returns what it changed. Names the journal on failure. */
async function ensureService(remote: Remote, state: DockerState, progress: Progress): Promise<string[]> {
  const changes: string[] = [];
  const cmds: string[] = [];
  if (state.enabled === "masked") {
    // Typically left by removing docker.io (debhelper masks the unit of a removed, not purged, package).
    cmds.push("systemctl unmask docker.service");
    changes.push("unmasked docker.service");
  }
  const enable = !/^(enabled|enabled-runtime|static|indirect|generated|alias)$/.test(state.enabled);
  const start = state.active !== "active";
  if (enable && start) cmds.push("systemctl enable --now docker.service");
  else if (enable) cmds.push("systemctl enable docker.service");
  else if (start) cmds.push("systemctl start docker.service");
  if (enable) changes.push("enabled docker.service");
  if (start) changes.push("started docker.service");
  if (cmds.length === 0) return changes;
  try {
    await progress.step(cmds.join(" && "), () => remote.run(cmds.join(" && "), { sudo: true, label: cmds.join(" && "), timeoutMs: 180_000 }), "service");
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    const journal = await remote
      .run("journalctl -u docker.service -n 15 --no-pager -o cat", { sudo: true, check: false, label: "journalctl -u docker.service", timeoutMs: 30_000 })
      .then((r) => tail(r.stdout, 15), () => "");
    throw new Error(
      `docker.service did not start (${cmds.join(" && ")}): ${tail(err.stderr || err.stdout, 5)}` +
        (journal ? `\nlast lines of \`journalctl -u docker.service\` on the VM:\n${journal}` : "") +
        `\nFix the cause on the VM (often a broken /etc/docker/daemon.json, or a kernel without overlay/iptables support), then run the job again.`,
    );
  }
  return changes;
}

/** Creates the docker group if the packages did not, and adds the users not in it yet. */
async function ensureGroup(remote: Remote, state: DockerState, users: string[], progress: Progress): Promise<{ changes: string[]; added: string[] }> {
  const added = users.filter((u) => !(state.users.get(u) ?? []).includes("docker"));
  const cmds: string[] = [];
  const changes: string[] = [];
  if (!state.group) {
    cmds.push("getent group docker >/dev/null || groupadd --system docker");
    changes.push("created group docker");
  }
  for (const u of added) cmds.push(command("usermod", "-aG", "docker", u));
  if (cmds.length === 0) return { changes, added };
  const label = added.length ? `adding ${added.join(", ")} to group docker` : "creating group docker";
  await progress.step(label, () => remote.run(cmds.join(" && "), { sudo: true, label, timeoutMs: 60_000 }), "users");
  for (const u of added) changes.push(`added ${u} to group docker`);
  return { changes, added };
}

/** Both verification modes run as root: the users' new group only applies to new sessions. */
async function verifyDocker(remote: Remote, mode: DockerVerify): Promise<{ server: string; detail: string }> {
  const info = await remote.run("docker info --format '{{.ServerVersion}}'", { sudo: true, check: false, label: "docker info", timeoutMs: 60_000 });
  const server = info.stdout.trim().split("\n").pop() ?? "";
  if (info.code !== 0 || !/^[0-9]/.test(server)) {
    throw new Error(
      `Docker was installed but the daemon does not answer: \`docker info\` exited ${info.code}: ${tail(info.stderr || info.stdout, 5) || "(no output)"}. ` +
        "See `systemctl status docker` and `journalctl -u docker` on the VM.",
    );
  }
  if (mode === "daemon") return { server, detail: `docker info: server version ${server}` };
  const run = await remote.run("docker run --rm hello-world", { sudo: true, check: false, label: "docker run --rm hello-world", timeoutMs: 300_000 });
  if (run.code !== 0 || !/Hello from Docker!/.test(run.stdout)) {
    throw new Error(
      `Docker is installed and its daemon runs (server ${server}), but \`docker run --rm hello-world\` failed (exit ${run.code}): ` +
        `${tail(run.stderr || run.stdout, 6) || "(no output)"}. The VM must reach Docker Hub (or a registry mirror set in /etc/docker/daemon.json); ` +
        `where it cannot, set verify to "daemon".`,
    );
  }
  return { server, detail: "docker run --rm hello-world: Hello from Docker!" };
}

/** apt-get update with the event's policy; `force` (a source just changed) ignores update/cache_valid_sec. */
async function updateLists(apt: Apt, progress: Progress, event: InstallDockerEvent, force: boolean): Promise<AptUpdateOutcome> {
  if (!force && !event.update) return { ran: false, reason: "update: false" };
  const outcome = await progress.step("apt-get update", () => apt.update({ cacheValidSec: force ? undefined : event.cache_valid_sec }), "apt_update");
  if (force) outcome.reason = "an apt source changed";
  if (!outcome.ran) progress.info(`apt-get update skipped: ${outcome.reason}`);
  return outcome;
}

interface Installation {
  changed: string[];
  removed: string[];
  notes: string[];
  apt_update: AptUpdateOutcome;
  repository?: InstallDockerResult["repository"];
}

/** Docker's own repository and packages, as in "Install using the apt repository". */
async function installOfficial(apt: Apt, os: OsInfo, event: InstallDockerEvent, state: DockerState, progress: Progress): Promise<Installation> {
  const out: Installation = { changed: [], removed: [], notes: [], apt_update: { ran: false, reason: "" } };
  const base = `${event.repo_url.replace(/\/+$/, "")}/${os.family}`;

  // Docker's docs, step 1: what fetching the key needs.
  const prereq = PREREQUISITES.filter((p) => !installed(state, p) || (p === "curl" && !state.curl));
  if (prereq.length) {
    out.apt_update = await updateLists(apt, progress, event, false);
    await progress.step(`apt-get install ${prereq.join(" ")}`, () => apt.install(prereq), "apt_install");
    out.changed.push(`installed ${prereq.join(" ")}`);
  }

  const conflicting = CONFLICTING_PACKAGES.filter((p) => installed(state, p));
  if (conflicting.length) {
    progress.info(`removing packages that conflict with Docker's: ${conflicting.join(" ")}`);
    out.removed = await progress.step(`apt-get remove ${conflicting.join(" ")}`, () => apt.remove(conflicting), "apt_remove");
    out.changed.push(`removed ${out.removed.join(" ")}`);
  }

  // The new source first, then the old ones away: a key that cannot be fetched leaves the VM as it was,
  // and the clean-up knows exactly which file and keyring are the ones to keep.
  const repo = await ensureAptRepository(apt.remote, { name: "docker", keyUrl: `${base}/gpg`, uri: base, suite: os.codename, components: ["stable"] }, progress);
  const stale = await removeStaleRepositories(apt.remote, {
    uris: [...new Set([base, `${DOCKER_UPSTREAM}/${os.family}`])],
    keep: { sources: [repo.sourceFile], keyrings: [repo.keyring] },
    keyrings: LEGACY_DOCKER_KEYRINGS,
    trustedFingerprints: [DOCKER_KEY_FINGERPRINT],
  }, progress);
  out.changed.push(...repo.changes, ...stale.changes);
  out.repository = { uri: repo.uri, suite: os.codename, line: repo.line, keyring: repo.keyring, source_file: repo.sourceFile };

  // A changed source must be read whatever update/cache_valid_sec say; otherwise the event's policy,
  // unless the update for ca-certificates/curl just ran.
  const force = repo.changed || stale.changed;
  try {
    if (force || !out.apt_update.ran) out.apt_update = await updateLists(apt, progress, event, force);
  } catch (err) {
    throw new Error(
      `apt-get update failed with Docker's repository configured (${repo.sourceFile}: ${repo.line}): ${err instanceof CommandError ? aptFailureReason(err) : (err as Error).message}. ` +
        `Check repo_url: ${base} must serve dists/${os.codename}/ signed by ${base}/gpg (Docker publishes only supported releases).`,
    );
  }

  const wanted = [...OFFICIAL_PACKAGES, ...OPTIONAL_OFFICIAL_PACKAGES, ...(event.compose ? [COMPOSE_PLUGIN] : [])];
  const offers = await progress.step("apt-cache policy", () => apt.candidates(wanted), "candidates");
  const unavailable = wanted.filter((p) => !offers.get(p)?.candidate);
  const missingRequired = unavailable.filter((p) => !OPTIONAL_OFFICIAL_PACKAGES.includes(p));
  if (missingRequired.length) {
    throw new Error(
      `Docker's repository ${base} (${os.codename}, ${repo.architectures.join(",")}) offers no ${missingRequired.join(", ")}: ` +
        `check repo_url (a mirror must carry ${os.family}/dists/${os.codename}/stable) and that Docker supports ${os.pretty_name ?? os.codename} on ${repo.architectures.join(",")}.`,
    );
  }
  for (const p of unavailable) {
    out.notes.push(`${p} is not offered by ${base}; skipped`);
    progress.info(`${p} is not offered by ${base}; skipped`);
  }
  const toInstall = wanted.filter((p) => !unavailable.includes(p) && !installed(state, p));
  if (toInstall.length) {
    await progress.step(`apt-get install ${toInstall.join(" ")}`, () => apt.install(toInstall), "apt_install");
    out.changed.push(`installed ${toInstall.join(" ")}`);
  }
  return out;
}

/** The distribution's docker.io, and its compose when asked: whichever package apt offers. */
async function installDistro(apt: Apt, event: InstallDockerEvent, state: DockerState, progress: Progress): Promise<Installation> {
  const out: Installation = { changed: [], removed: [], notes: [], apt_update: { ran: false, reason: "nothing to install" } };
  // A docker-ce already there is Docker too: installing docker.io would only make apt remove it.
  const needEngine = !installed(state, "docker.io") && !installed(state, "docker-ce");
  const needCompose = event.compose && state.composeV2 === undefined && state.composeV1 === undefined && !DISTRO_COMPOSE_CHOICES.some((p) => installed(state, p));
  if (!needEngine && !needCompose) return out;

  out.apt_update = await updateLists(apt, progress, event, false);
  const names = [...(needEngine ? ["docker.io"] : []), ...(needCompose ? DISTRO_COMPOSE_CHOICES : [])];
  const offers = await progress.step("apt-cache policy", () => apt.candidates(names), "candidates");
  const toInstall: string[] = [];
  if (needEngine) {
    if (!offers.get("docker.io")?.candidate) {
      throw new Error(
        "the distribution's repositories offer no docker.io on the VM" +
          (event.update ? "" : " (update is false: the package lists may be missing)") +
          '; on Ubuntu it is in "universe" (add-apt-repository universe), or use channel "official"',
      );
    }
    toInstall.push("docker.io");
  }
  if (needCompose) {
    const pick = DISTRO_COMPOSE_CHOICES.find((p) => offers.get(p)?.candidate);
    if (!pick) throw new Error(`the distribution offers none of ${DISTRO_COMPOSE_CHOICES.join(", ")}: set compose to false, or use channel "official" for Docker's compose plugin`);
    const version = offers.get(pick)!.candidate!;
    if (pick === "docker-compose" && /^(\d+:)?1\./.test(version)) {
      out.notes.push(`the distribution's compose is ${pick} ${version}: compose v1 (Python), called as docker-compose; channel "official" has v2`);
    }
    toInstall.push(pick);
  }
  await progress.step(`apt-get install ${toInstall.join(" ")}`, () => apt.install(toInstall), "apt_install");
  out.changed.push(`installed ${toInstall.join(" ")}`);
  return out;
}

// ---------------------------------------------------------------------------------------------------

/** The login user from the kit's "user@host:port". */

function packageVersions(state: DockerState): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of DOCKER_PACKAGES) {
    const p = state.packages.get(name);
    if (p?.installed && p.version) out[name] = p.version;
  }
  return out;
}

function composeReport(state: DockerState): Pick<InstallDockerResult, "compose" | "compose_version" | "compose_command"> {
  if (state.composeV2 !== undefined) return { compose: true, compose_version: state.composeV2, compose_command: "docker compose" };
  if (state.composeV1 !== undefined) return { compose: true, compose_version: state.composeV1, compose_command: "docker-compose" };
  return { compose: false };
}

export const installer = defineInstaller<InstallDockerEvent, InstallDockerResult>({
  name: "install-docker",
  fields: {
    compose: optional(boolean(), true),
    channel: optional(oneOf(["official", "distro"] as const), "official"),
    repo_url: optional(repoUrl, DOCKER_UPSTREAM),
    users: optional(list(unixUser, { unique: true })),
    verify: optional(oneOf(["hello-world", "daemon"] as const), "hello-world"),
    update: optional(boolean(), true),
    cache_valid_sec: optional(integer(0, 30 * 24 * 3600)),
    apt: optional(aptEventSettings),
  },
  async run({ event, remote, os, progress, user }) {
    const users = event.users ?? [user];

    // 1. Look (read-only).
    const before = await progress.step("checking Docker on the VM", () => inspect(remote, users), "check");
    const unknown = users.filter((u) => before.users.get(u) === undefined);
    if (unknown.length) {
      throw new Error(
        `user${unknown.length === 1 ? "" : "s"} ${unknown.join(", ")} ${unknown.length === 1 ? "does" : "do"} not exist on the VM, so ${unknown.length === 1 ? "it" : "they"} cannot join the docker group: ` +
          "create them first or remove them from users. Nothing was changed.",
      );
    }
    const needs = unmetNeeds(before, event);

    // 2a. Already there: no apt; only a membership or a disabled unit is put right.
    if (needs.length === 0) {
      progress.info(`Docker ${before.cli} is installed and running${before.composeV2 || before.composeV1 ? `, compose ${before.composeV2 ?? before.composeV1}` : ""}: no package work`);
      const service = await ensureService(remote, before, progress);
      const group = await ensureGroup(remote, before, users, progress);
      const changed = [...service, ...group.changes];
      const summary = changed.length ? `Docker ${before.cli} already installed; ${changed.join("; ")}` : `Docker ${before.cli} already installed; nothing changed`;
      progress.info(summary);
      return {
        status: "already_installed", changed, docker_version: before.cli!, ...composeReport(before), channel: event.channel,
        packages: packageVersions(before), users_added: group.added, removed: [], apt_update: { ran: false, reason: "nothing to install" },
        verify: { mode: "skipped", detail: "already installed: docker --version, docker.service active" + (event.compose ? ", compose present" : "") },
        notes: [], summary,
      };
    }
    progress.info(`to do (channel ${event.channel}): ${needs.join("; ")}`);

    // 2b. Install, by channel; not when only the service is down (that is step 3's, and needs no network).
    const apt = new Apt(remote, resolveAptSettings(event.apt), { progress });
    const packageWork = needs.some((n) => !n.startsWith("docker.service"));
    const done: Installation = !packageWork
      ? { changed: [], removed: [], notes: [], apt_update: { ran: false, reason: "nothing to install" } }
      : event.channel === "official"
        ? await installOfficial(apt, os, event, before, progress)
        : await installDistro(apt, event, before, progress);

    // 3. The service and the group, from a fresh look (packages start and create things themselves).
    const after = packageWork ? await progress.step("checking Docker after installing", () => inspect(remote, users), "check") : before;
    if (!after.cli) throw new Error(`the packages are installed (${Object.keys(packageVersions(after)).join(", ") || "none"}) but \`docker --version\` still fails on the VM`);
    const service = await ensureService(remote, after, progress);
    const group = await ensureGroup(remote, after, users, progress);
    const changed = [...done.changed, ...service, ...group.changes];

    // 4. Verify.
    const verified = await progress.step(`verify (${event.verify})`, () => verifyDocker(remote, event.verify), "verify");
    const compose = composeReport(after);
    if (event.compose && !compose.compose) {
      throw new Error(`compose was installed but neither \`docker compose version\` nor \`docker-compose --version\` works on the VM`);
    }
    const source = done.repository ? done.repository.uri : "the distribution";
    const summary = `Docker ${after.cli} (server ${verified.server}) ${packageWork ? `installed from ${source}` : "was installed; its service was not running and now is"}` +
      (compose.compose ? `, compose ${compose.compose_version}` : "") + (group.added.length ? `; added ${group.added.join(", ")} to group docker` : "");
    progress.info(summary);
    return {
      status: "ok", changed, docker_version: after.cli, server_version: verified.server, ...compose, channel: event.channel,
      packages: packageVersions(after), users_added: group.added, removed: done.removed,
      ...(done.repository ? { repository: done.repository } : {}),
      apt_update: done.apt_update, verify: { mode: event.verify, detail: verified.detail }, notes: done.notes, summary,
    };
  },
});

/** The job's entrypoint (handler.install). */
export async function install(event: unknown): Promise<InstallDockerResult & CommonResult> {
  return runInstaller(installer, event);
}
