// install-docker's look on the scripted double: each probe's answer for a VM in a given state (VmState: the
// CLI, compose, the service, packages, the docker group and users), and the state the daemon.json test files
// share: Docker installed and running (Debian 12, distro channel), admin in group docker, daemon.json as needed.
import { dpkgLine } from "./fixtures";
import type { Answer } from "./look-answers";
import type { Step } from "./scripted-remote";

const sec = (name: string, code: number, text: string): Record<string, Answer> => ({
  [name]: { text: `${text}\n`, code },
});

/** The look's one command; `daemonJson` undefined: no daemon.json on the VM. */
export function dockerLook(daemonJson: string | undefined): Step {
  const facts = {
    ...sec("docker", 0, "Docker version 20.10.24+dfsg1, build 297e128"),
    ...sec("compose", 1, "docker: 'compose' is not a docker command."),
    ...sec("active", 0, "active"),
    ...sec("enabled", 0, "enabled"),
    ...sec("dpkg", 0, dpkgLine("docker.io", "20.10.24+dfsg1-1+b3").trimEnd()),
    ...sec("group", 0, "docker:x:999:admin"),
    ...sec("user:admin", 0, "admin docker"),
    ...sec("curl", 0, "/usr/bin/curl"),
    ...sec("legacy_keyring", 1, ""),
    ...(daemonJson === undefined ? sec("daemon_json", 3, "") : sec("daemon_json", 0, daemonJson)),
  };
  return { match: /^printf '%s ' docker; /, sudo: false, facts };
}

/** A VM's state as the look sees it; what is left out is not there (no docker, no group, no such package). */
export interface VmState {
  cli?: string;
  compose?: string;
  composeV1?: string;
  active?: string;
  enabled?: string;
  packages?: Record<string, string>;
  group?: string[];
  /** Each user's groups (null: no such user); default ubuntu, not in group docker. */
  users?: Record<string, string[] | null>;
  curl?: boolean;
  legacyKeyring?: boolean;
}

/** What the look's probes print for a VM in state `s`. */
export function inspectOut(s: VmState): Record<string, Answer> {
  const pkgs = { "ca-certificates": "20230311ubuntu0.22.04.1", curl: "7.81.0-1ubuntu1.16", ...(s.packages ?? {}) };
  const users = Object.entries(s.users ?? { ubuntu: ["ubuntu", "adm", "sudo"] });
  return {
    ...sec("docker", s.cli ? 0 : 127, s.cli ? `Docker version ${s.cli}, build 7d4bcd8` : "sh: 1: docker: not found"),
    ...sec(
      "compose",
      s.compose ? 0 : s.cli ? 1 : 127,
      s.compose ? `Docker Compose version v${s.compose}` : "docker: 'compose' is not a docker command.",
    ),
    ...(!s.compose && s.composeV1 ? sec("compose_v1", 0, `docker-compose version ${s.composeV1}, build unknown`) : {}),
    ...sec("active", s.active === "active" ? 0 : 3, s.active ?? "inactive"),
    ...sec(
      "enabled",
      s.enabled === "enabled" ? 0 : 1,
      s.enabled ?? "Failed to get unit file state for docker.service: No such file or directory",
    ),
    ...sec(
      "dpkg",
      1,
      Object.entries(pkgs)
        .map(([n, v]) => dpkgLine(n, v).trimEnd())
        .join("\n"),
    ),
    ...sec("group", s.group ? 0 : 2, s.group ? `docker:x:999:${s.group.join(",")}` : ""),
    ...Object.assign(
      {},
      ...users.map(([u, groups]) =>
        sec(`user:${u}`, groups ? 0 : 1, groups ? groups.join(" ") : `id: '${u}': no such user`),
      ),
    ),
    ...sec("curl", s.curl === false ? 1 : 0, s.curl === false ? "" : "/usr/bin/curl"),
    ...sec("legacy_keyring", s.legacyKeyring ? 0 : 1, ""),
  };
}
