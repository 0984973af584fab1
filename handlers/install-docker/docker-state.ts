// Docker as the VM has it: one read-only command that probes everything at once, its parser, and what
// the event asks for that the state lacks. Pure apart from inspectDocker, so tests feed real output.

import { quote } from "../../shared/shell-quote";
import { type PackageState, parseDpkgQuery } from "../common/apt-output";
import { legacyKeyring } from "../common/apt-repository";
import type { Remote } from "../common/exec";
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
}

/** The inspect command for `users`. Each probe prints "@@@<name> <exit status>" and then its output. */
export function inspectCommand(users: string[]): string {
  const probe = (name: string, cmd: string) => `o=$(${cmd} 2>&1); r=$?; printf '@@@%s %s\\n%s\\n' ${name} "$r" "$o"`;
  return [
    probe("docker", "docker --version"),
    probe("compose", "docker compose version"),
    // The standalone v1 starts a Python interpreter (half a second): only asked when the plugin is not there.
    `if [ "$r" -ne 0 ] && command -v docker-compose >/dev/null 2>&1; then ` +
      `${probe("compose_v1", "docker-compose --version")}; fi`,
    probe("active", "systemctl is-active docker.service"),
    probe("enabled", "systemctl is-enabled docker.service"),
    probe("dpkg", `dpkg-query -W -f='\${Package}\\t\${Status}\\t\${Version}\\n' ${WATCHED.join(" ")}`),
    probe("group", "getent group docker"),
    ...users.map((u) => probe(`user:${u}`, `id -nG ${quote(u)}`)),
    probe("curl", "command -v curl"),
    probe("legacy_keyring", `test -e ${LEGACY_KEYRING}`),
    probe("daemon_json", `if [ -e ${DAEMON_JSON} ]; then cat ${DAEMON_JSON}; else exit 3; fi`),
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

/** The inspect command's output as a DockerState. */
export function parseDockerState(stdout: string, users: string[]): DockerState {
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
    cli: cliOut ? (versionIn(cliOut) ?? cliOut) : undefined,
    composeV2: v2 ? (versionIn(v2) ?? v2) : undefined,
    composeV1: v1 ? (versionIn(v1) ?? v1) : undefined,
    // "active", "inactive", "failed", ...; an error text (no systemd, no bus) counts as "".
    active: /^[a-z-]+$/.test(firstLine("active")) ? firstLine("active") : "",
    // "enabled", "disabled", "masked", "static", "not-found", ...; an error text (no unit) counts as "".
    enabled: /^[a-z-]+$/.test(firstLine("enabled")) ? firstLine("enabled") : "",
    packages: parseDpkgQuery(s.get("dpkg")?.out ?? "", WATCHED),
    group: s.get("group")?.code === 0,
    groupMembers: s.get("group")?.code === 0 ? groupMembers(s.get("group")!.out) : [],
    users: userMap,
    curl: s.get("curl")?.code === 0,
    legacyKeyring: s.get("legacy_keyring")?.code === 0,
    daemonJson: daemonJsonIn(s.get("daemon_json")),
  };
}

/** The daemon_json probe: exit 3 is "no file" (also when the probe is missing: a VM double without it). */
function daemonJsonIn(probe: { code: number; out: string } | undefined): DockerState["daemonJson"] {
  if (!probe || probe.code === 3) return { kind: "absent" };
  return probe.code === 0 ? { kind: "text", text: probe.out } : { kind: "unreadable" };
}

/** "docker:x:999:ubuntu,deploy" -> ["ubuntu", "deploy"]. */
export function groupMembers(getent: string): string[] {
  const members = getent.split("\n")[0].trim().split(":")[3] ?? "";
  return members.split(",").filter(Boolean);
}

/** One unprivileged, read-only look at Docker on the VM. */
export async function inspectDocker(remote: Remote, users: string[]): Promise<DockerState> {
  const result = await remote.run(inspectCommand(users), {
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
