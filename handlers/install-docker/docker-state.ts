// Docker as the VM has it: one read-only command that probes everything at once, its parser, and what
// the event asks for that the state lacks. Pure apart from inspectDocker, so tests feed real output.

import { quote } from "../../lib/shared/shell-quote";
import { type PackageState, parseDpkgQuery } from "../common/apt-output";
import { legacyKeyring } from "../common/apt-repository";
import type { Remote } from "../common/exec";
import { SYSTEMD_LOOK_PROBE } from "../common/systemd";
import { defineLook, type RootFact, rootFact, type Writer } from "../common/vm-facts";
import { DAEMON_JSON } from "./daemon-config";
import type { DockerChannel } from "./definition";
import { DOCKER_PACKAGES, WATCHED } from "./docker-packages";

const LEGACY_KEYRING = legacyKeyring("docker");

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
  /** Its supplementary members, as `getent group docker` lists them. */
  groupMembers: string[];
  /** Per user asked about: undefined when the user does not exist, else their groups. */
  users: Map<string, string[] | undefined>;
  curl: boolean;
  /**
   * /etc/apt/keyrings/docker.asc exists: the served key file as earlier versions wrote it
   * (common/apt-repository.ts legacyKeyring), rebuilt from the verified key even when Docker needs nothing.
   */
  legacyKeyring: boolean;
  /** /etc/docker/daemon.json: its text, absent, or unreadable without root (read again as root then). */
  daemonJson: { kind: "text"; text: string } | { kind: "absent" } | { kind: "unreadable" };
  /** Whether the VM was booted with systemd (exit 0), checked before any change. */
  systemd: RootFact;
}

/** The probes of Docker's look for `users`; every tool's error words are kept (stderr). */
export function dockerProbes(users: string[]) {
  const probe = <const N extends string, const W extends Writer = "root">(
    name: N,
    command: string,
    use: string,
    writer: W = "root" as W,
  ) => ({ name, command, use, writer, stderr: true }) as const;
  return [
    probe("docker", "docker --version", "the CLI installed, and its version"),
    // The CLI looks for plugins in ~/.docker/cli-plugins first: the login user can put one there.
    probe("compose", "docker compose version", "compose installed, its version (reported)", "anyone"),
    // The standalone v1 starts a Python interpreter (half a second): only asked when the plugin is not there,
    // so a plugin in ~/.docker decides whether it is asked.
    probe(
      "compose_v1",
      "docker compose version >/dev/null 2>&1 && exit 4; command -v docker-compose >/dev/null || exit 5; " +
        "docker-compose --version",
      "the standalone compose v1 (distro channel)",
      "anyone",
    ),
    probe("active", "systemctl is-active docker.service", "start the service"),
    probe("enabled", "systemctl is-enabled docker.service", "enable the service"),
    probe(
      "dpkg",
      `dpkg-query -W -f='\${Package}\\t\${Status}\\t\${Version}\\n' ${WATCHED.join(" ")}`,
      "the package work (docker-ce, docker.io, conflicts)",
    ),
    probe("group", "getent group docker", "the docker group's members: who joins or leaves"),
    ...users.map((u) => probe(`user:${u}`, `id -nG ${quote(u)}`, "the user exists, and its groups")),
    probe("curl", "command -v curl", "install curl before the key fetch"),
    probe("legacy_keyring", `test -e ${LEGACY_KEYRING}`, "rebuild the key file an earlier version wrote"),
    probe(
      "daemon_json",
      `if [ -e ${DAEMON_JSON} ]; then cat ${DAEMON_JSON}; else exit 3; fi`,
      "the daemon.json keys the settings own (rewritten as root)",
    ),
    SYSTEMD_LOOK_PROBE,
  ];
}

type DockerProbeName = ReturnType<typeof dockerProbes>[number]["name"];

/** Docker's one look for `users` (one SSH exec). */
export const dockerLook = (users: string[]) => defineLook("the look at Docker", dockerProbes(users));

/** "Docker version 27.0.3, build 7d4bcd8" -> "27.0.3"; "Docker Compose version v2.29.1" -> "2.29.1". */
export function versionIn(text: string): string | undefined {
  return /version v?([0-9][^\s,]*)/i.exec(text)?.[1];
}

/** The look's output as a DockerState. */
export function parseDockerState(stdout: string, users: string[]): DockerState {
  const facts = dockerLook(users).parse(stdout);
  const get = (name: DockerProbeName) => {
    const f = facts.get(name);
    return { ...f, text: f.text.trim() };
  };
  const ok = (name: DockerProbeName) => (get(name).code === 0 ? get(name).text : undefined);
  const cliOut = ok("docker");
  const v2 = ok("compose");
  const v1 = ok("compose_v1");
  const firstLine = (name: DockerProbeName) => get(name).text.split("\n")[0].trim();
  const userMap = new Map<string, string[] | undefined>();
  for (const u of users) {
    const r = get(`user:${u}`);
    userMap.set(u, r.code === 0 ? r.text.split(/\s+/).filter(Boolean) : undefined);
  }
  return {
    cli: cliOut ? (versionIn(cliOut) ?? cliOut) : undefined,
    composeV2: v2 ? (versionIn(v2) ?? v2) : undefined,
    composeV1: v1 ? (versionIn(v1) ?? v1) : undefined,
    // "active", "inactive", "failed", ...; an error text (no systemd, no bus) counts as "".
    active: /^[a-z-]+$/.test(firstLine("active")) ? firstLine("active") : "",
    // "enabled", "disabled", "masked", "static", "not-found", ...; an error text (no unit) counts as "".
    enabled: /^[a-z-]+$/.test(firstLine("enabled")) ? firstLine("enabled") : "",
    packages: parseDpkgQuery(get("dpkg").text, WATCHED),
    group: get("group").code === 0,
    groupMembers: get("group").code === 0 ? groupMembers(get("group").text) : [],
    users: userMap,
    curl: get("curl").code === 0,
    legacyKeyring: get("legacy_keyring").code === 0,
    daemonJson: daemonJsonIn(facts.get("daemon_json")),
    systemd: facts.get("systemd"),
  };
}

/** The daemon_json probe: exit 3 is "no file"; its text decides what root writes into daemon.json. */
export function daemonJsonIn(fact: RootFact): DockerState["daemonJson"] {
  const f = rootFact(fact, "daemon.json's rewrite");
  if (f.code === 3) return { kind: "absent" };
  return f.code === 0 ? { kind: "text", text: f.text.trim() } : { kind: "unreadable" };
}

/** "docker:x:999:ubuntu,deploy" -> ["ubuntu", "deploy"]. */
export function groupMembers(getent: string): string[] {
  const members = getent.split("\n")[0].trim().split(":")[3] ?? "";
  return members.split(",").filter(Boolean);
}

/** One unprivileged, read-only look at Docker on the VM. */
export async function inspectDocker(remote: Remote, users: string[]): Promise<DockerState> {
  const result = await remote.run(dockerLook(users).script, {
    env: { LC_ALL: "C" },
    label: "checking Docker on the VM",
    timeoutMs: 60_000,
  });
  return parseDockerState(result.stdout, users);
}

/** Whether dpkg has `name` installed. */
export const installed = (state: DockerState, name: string) => state.packages.get(name)?.installed === true;

/** One way Docker is not yet as asked: typed, so decisions read kinds, never words. */
export type DockerNeed =
  | { kind: "cli" }
  | { kind: "docker-ce"; replacesDockerIo: boolean }
  | { kind: "legacy-keyring" }
  | { kind: "service"; active: string }
  | { kind: "compose"; channel: DockerChannel };

/** What Docker lacks for `event`; empty when it is as asked. Pure. */
export function dockerNeeds(state: DockerState, event: { channel: DockerChannel; compose: boolean }): DockerNeed[] {
  const needs: DockerNeed[] = [];
  const official = event.channel === "official";
  if (!state.cli) needs.push({ kind: "cli" });
  if (official && !installed(state, "docker-ce"))
    needs.push({ kind: "docker-ce", replacesDockerIo: installed(state, "docker.io") });
  if (official && state.legacyKeyring) needs.push({ kind: "legacy-keyring" });
  if (state.cli && state.active !== "active") needs.push({ kind: "service", active: state.active });
  const composeOk = state.composeV2 !== undefined || (!official && state.composeV1 !== undefined);
  if (event.compose && !composeOk) needs.push({ kind: "compose", channel: event.channel });
  return needs;
}

/** Only the service is down: that needs no package work, and no network. */
export const needsPackages = (needs: DockerNeed[]) => needs.some((n) => n.kind !== "service");

/** A need in words, for progress lines and errors. */
export function needWords(need: DockerNeed): string {
  switch (need.kind) {
    case "cli":
      return "the docker CLI is not installed";
    case "docker-ce":
      return (
        `docker-ce from Docker's repository is not ` +
        `installed${need.replacesDockerIo ? " (docker.io from the distribution is, and is replaced)" : ""}`
      );
    case "legacy-keyring":
      return (
        `${LEGACY_KEYRING} is the key file an earlier version wrote as served (apt trusts every key in it): ` +
        `rebuilt from the verified key`
      );
    case "service":
      return `docker.service is ${need.active || "missing"}`;
    case "compose":
      return need.channel === "official"
        ? "the compose plugin (docker compose) is not installed"
        : "compose is not installed";
  }
}

/** Installed version of each Docker package present. */
export function packageVersions(state: DockerState): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of DOCKER_PACKAGES) {
    const p = state.packages.get(name);
    if (p?.installed && p.version) out[name] = p.version;
  }
  return out;
}

/** Whether compose works, and how it is called. */
export interface ComposeReport {
  compose: boolean;
  compose_version?: string;
  /** The v2 plugin ("docker compose") or the standalone v1 ("docker-compose"). */
  compose_command?: "docker compose" | "docker-compose";
}

export function composeReport(state: DockerState): ComposeReport {
  if (state.composeV2 !== undefined)
    return { compose: true, compose_version: state.composeV2, compose_command: "docker compose" };
  if (state.composeV1 !== undefined)
    return { compose: true, compose_version: state.composeV1, compose_command: "docker-compose" };
  return { compose: false };
}
