// A stateful double of a Debian 12 VM for install-docker, for tests that run it more than once against the
// same machine: apt and dpkg as apt-vm.ts keeps them (Docker's repository joins what apt-get update fetches
// once a source names it), files under /etc/apt, daemon.json and grants.json (docker-vm-files.ts),
// docker.service, the docker group and the users, and dockerd (what it loaded, whether it answers).
// A command it does not know fails the test, naming it.

import { TRANSACTION_PROLOGUE } from "../../../handlers/common/apt-transaction";
import { BOOT_LOOK } from "../../../handlers/common/boot-look";
import type { RunOptions, RunResult } from "../../../handlers/common/exec";
import { LOCK_TABLE_LOOK } from "../../../handlers/common/lock-holders";
import { DAEMON_JSON } from "../../../handlers/install-docker/daemon-config";
import { AptVm, type AptVmState } from "./apt-vm";
import { CURSOR } from "./docker-journal";
import {
  type Files,
  fileProbe,
  keyAndSource,
  keyFetch,
  removeFiles,
  removeStale,
  sourcesProbe,
  staleKeyringsAsked,
  writeFiles,
} from "./docker-vm-files";
import { answerLookWith, isLook, type ProbeAnswer, type Reply } from "./look-answers";

const DOCKER_BASE = "https://download.docker.com/linux/debian";
/** Debian 12's own packages (bookworm, with the prerequisites of Docker's key fetch). */
export const DISTRO: Record<string, string[]> = {
  "docker.io": ["20.10.24+dfsg1-1+b3"],
  "docker-compose": ["1.29.2-3"],
  containerd: ["1.6.20~ds1-1+b1"],
  runc: ["1.1.5+ds1-1+b1"],
  "ca-certificates": ["20230311"],
  curl: ["7.88.1-10+deb12u8"],
};
/** What Docker's repository offers for bookworm. */
export const OFFICIAL: Record<string, string[]> = {
  "docker-ce": ["5:27.0.3-1~debian.12~bookworm"],
  "docker-ce-cli": ["5:27.0.3-1~debian.12~bookworm"],
  "containerd.io": ["1.7.18-1"],
  "docker-buildx-plugin": ["0.15.1-1~debian.12~bookworm"],
  "docker-compose-plugin": ["2.29.1-1~debian.12~bookworm"],
};
/** docker.io's dependencies, pulled in with it. */
const DOCKER_IO_DEPENDS = ["containerd", "runc"];
const ENGINES = ["docker-ce", "docker.io"];

export interface DockerVmState extends AptVmState {
  /** Files by path, bytes as latin1: apt's sources and keyrings, daemon.json, grants.json. */
  files: Files;
  /** /etc/apt/keyrings exists. */
  keyringsDir: { exists: boolean };
  /** docker.service as systemctl says: is-active, is-enabled ("" no unit). */
  service: { active: string; enabled: string };
  /** dockerd runs but does not answer docker info until it is restarted. */
  stuck?: boolean;
  /** daemon.json as dockerd loaded it at its last start or reload. */
  running?: string;
  /** The docker group's members; undefined: no group. */
  group?: string[];
  /** The VM's users (each also in a group of its own name). */
  users: string[];
}

const INFO_RUNNING = /^docker info --format '\{"debug":\{\{json \.Debug\}\}/;

export class DockerVm extends AptVm {
  /** The raw stdin of the command being answered (a keyring is binary). */
  private stdin = Buffer.alloc(0);

  constructor(public state: DockerVmState) {
    super(state);
  }

  async run(command: string, opts: RunOptions = {}): Promise<RunResult> {
    this.stdin = Buffer.from(opts.stdin ?? "");
    return super.run(command, opts);
  }

  /** What apt-get update fetches: the distribution's lists, and Docker's once a source names its repository. */
  mirror(): Record<string, string[]> {
    const named = Object.entries(this.state.files).some(
      ([p, text]) => p.startsWith("/etc/apt/sources.list") && text.includes(DOCKER_BASE),
    );
    return structuredClone(named ? { ...DISTRO, ...OFFICIAL } : DISTRO);
  }

  protected answer(cmd: string, sudo: boolean, stdin: string): Reply {
    const s = this.state;
    if (sudo && cmd.startsWith(`${TRANSACTION_PROLOGUE} && apt-get install `)) return this.installed(cmd, stdin);
    if (sudo && /^apt-get update -q /.test(cmd)) s.mirror = this.mirror();
    if (isLook(cmd) && !cmd.startsWith(BOOT_LOOK.script) && cmd !== LOCK_TABLE_LOOK.script)
      return { stdout: answerLookWith(cmd, (c) => this.probe(c)) };
    if (cmd.startsWith("dpkg --print-architecture && ")) return keyFetch(this.has("curl"));
    if (cmd === "dpkg --print-architecture") return { stdout: "amd64\n" };
    const keyAndSourceScript = cmd.startsWith('if [ -d /etc/apt/keyrings ]; then :; else echo "changed:created ');
    if (sudo && keyAndSourceScript)
      return keyAndSource(s.files, s.keyringsDir, cmd, this.stdin, cmd.includes("mv -fT"));
    if (sudo && cmd.startsWith("set -e\n")) return removeStale(s.files, cmd, this.stdin);
    const files =
      sudo && (writeFiles(s.files, cmd, this.stdin) ?? removeFiles(s.files, cmd) ?? staleKeyringsAsked(s.files, cmd));
    if (files) return files;
    const removal = /^apt-get remove -y -q -o DPkg::Lock::Timeout=\d+ (.*)$/.exec(cmd);
    if (sudo && removal) return this.remove(removal[1].split(" "));
    if (sudo && /^(getent group docker|usermod|gpasswd)/.test(cmd)) return this.groupStep(cmd);
    if (sudo && /^systemctl (unmask|enable|start) (--now )?docker\.service/.test(cmd)) return this.serviceStep(cmd);
    if (sudo && /systemctl (restart|reload) docker\.service$/.test(cmd) && s.service.enabled === "masked")
      return { stderr: "Failed to restart docker.service: Unit docker.service is masked.\n", code: 1 };
    if (sudo && /systemctl restart docker\.service$/.test(cmd)) {
      s.service.active = "active";
      s.stuck = false;
      s.running = s.files[DAEMON_JSON];
      return {};
    }
    if (sudo && cmd === "systemctl reload docker.service") {
      s.running = s.files[DAEMON_JSON];
      return {};
    }
    if (sudo && cmd === "docker info --format '{{.ServerVersion}}'") {
      const server = this.server();
      return server ? { stdout: `${server}\n` } : { code: 1, stderr: "Cannot connect to the Docker daemon\n" };
    }
    if (sudo && cmd === "docker run --rm hello-world" && this.server())
      return { stdout: "\nHello from Docker!\nThis message shows that your installation appears to be working.\n" };
    return super.answer(cmd, sudo, stdin);
  }

  protected probe(cmd: string): ProbeAnswer {
    const s = this.state;
    const answer = fileProbe(s.files, cmd) ?? sourcesProbe(s.files, cmd) ?? this.dockerProbe(cmd);
    if (answer) return answer;
    const user = /^id -nG '?([a-z0-9_-]+)'?$/.exec(cmd)?.[1];
    if (user) {
      if (!s.users.includes(user)) return { stdout: `id: '${user}': no such user\n`, code: 1 };
      return { stdout: [user, ...(s.group?.includes(user) ? ["docker"] : [])].join(" "), code: 0 };
    }
    return super.probe(cmd);
  }

  private has(name: string): boolean {
    return name in this.state.installed;
  }

  /** The server's version docker info prints: the engine's, while it runs and answers. */
  private server(): string | undefined {
    if (this.state.service.active !== "active" || this.state.stuck) return undefined;
    return this.has("docker-ce") ? "27.0.3" : this.has("docker.io") ? "20.10.24+dfsg1" : undefined;
  }

  /** The look at Docker's probes (docker-state.ts) and the daemon.json step's (daemon-config-apply.ts). */
  private dockerProbe(cmd: string): ProbeAnswer | undefined {
    const s = this.state;
    const cli = this.has("docker-ce-cli") ? "27.0.3" : this.has("docker.io") ? "20.10.24+dfsg1" : undefined;
    const v2 = cli && this.has("docker-compose-plugin") ? "2.29.1" : undefined;
    const unit = ENGINES.some((e) => this.has(e)) || s.service.enabled === "masked";
    switch (cmd) {
      case "docker --version":
        return cli ? { stdout: `Docker version ${cli}, build 7d4bcd8\n`, code: 0 } : { stdout: "", code: 127 };
      case "docker compose version":
        if (v2) return { stdout: `Docker Compose version v${v2}\n`, code: 0 };
        return { stdout: "docker: 'compose' is not a docker command.\n", code: cli ? 1 : 127 };
      case "systemctl is-active docker.service": {
        const active = unit ? s.service.active : "inactive";
        return { stdout: `${active}\n`, code: active === "active" ? 0 : 3 };
      }
      case "systemctl is-enabled docker.service":
        if (!unit) return { stdout: "Failed to get unit file state for docker.service: No such file\n", code: 1 };
        return { stdout: `${s.service.enabled}\n`, code: s.service.enabled === "enabled" ? 0 : 1 };
      case "getent group docker":
        return s.group ? { stdout: `docker:x:999:${s.group.join(",")}\n`, code: 0 } : { stdout: "", code: 2 };
      case "command -v curl":
        return this.has("curl") ? { stdout: "/usr/bin/curl\n", code: 0 } : { stdout: "", code: 1 };
      case "test -e /etc/apt/keyrings/docker.asc":
        return { stdout: "", code: s.files["/etc/apt/keyrings/docker.asc"] === undefined ? 1 : 0 };
      case "[ -d /run/systemd/system ]":
        return { stdout: "", code: 0 };
    }
    if (cmd.startsWith("docker compose version >/dev/null 2>&1 && exit 4; ")) {
      if (v2) return { stdout: "", code: 4 };
      if (!this.has("docker-compose")) return { stdout: "", code: 5 };
      return { stdout: "docker-compose version 1.29.2, build unknown\n", code: 0 };
    }
    if (cmd.startsWith("journalctl -u docker.service -n 1 -o export")) return { stdout: `${CURSOR}\n`, code: 0 };
    if (cmd.startsWith("journalctl -u docker.service --after-cursor=")) return { stdout: "", code: 0 };
    if (INFO_RUNNING.test(cmd) || cmd.startsWith("before=")) return { stdout: this.runningInfo(), code: 0 };
    return undefined;
  }

  /** dockerd's running configuration as daemon-running.ts' template prints it. */
  private runningInfo(): string {
    const loaded = JSON.parse(this.state.running ?? "{}") as Record<string, unknown>;
    const mirrors = (loaded["registry-mirrors"] as string[] | undefined) ?? [];
    return JSON.stringify({
      debug: loaded.debug ?? false,
      labels: loaded.labels ?? [],
      "live-restore": loaded["live-restore"] ?? false,
      "registry-mirrors": mirrors.map((m) => `${m.replace(/\/+$/, "")}/`),
    });
  }

  /** An install as apt-vm.ts makes it; an engine's maintainer scripts unmask, enable and start docker.service. */
  private installed(cmd: string, stdin: string): Reply {
    const engines = ENGINES.filter((e) => this.has(e));
    const reply = super.answer(cmd, true, stdin);
    const s = this.state;
    if (this.has("docker.io")) for (const d of DOCKER_IO_DEPENDS) s.installed[d] ??= DISTRO[d][0];
    if (ENGINES.some((e) => this.has(e) && !engines.includes(e))) {
      s.service = { active: "active", enabled: "enabled" };
      s.group ??= [];
      s.running = s.files[DAEMON_JSON];
      s.stuck = false;
    }
    return reply;
  }

  /** apt-get remove: an engine's removal masks docker.service (debhelper's postrm) and stops it. */
  private remove(names: string[]): Reply {
    const s = this.state;
    const gone = names.filter((n) => n in s.installed);
    const lines = gone.map((n) => `Removing ${n} (${s.installed[n]}) ...\n`);
    for (const n of gone) delete s.installed[n];
    if (gone.some((n) => ENGINES.includes(n))) s.service = { active: "inactive", enabled: "masked" };
    return { stdout: lines.join("") };
  }

  private groupStep(cmd: string): Reply {
    const s = this.state;
    for (const part of cmd.split(" && ")) {
      if (part.includes("groupadd --system docker")) s.group ??= [];
      const add = /^usermod -aG docker '?([a-z0-9_-]+)'?$/.exec(part)?.[1];
      if (add && !s.group?.includes(add)) s.group = [...(s.group ?? []), add];
      const drop = /^gpasswd -d '?([a-z0-9_-]+)'? docker$/.exec(part)?.[1];
      if (drop) s.group = s.group?.filter((u) => u !== drop);
    }
    return {};
  }

  private serviceStep(cmd: string): Reply {
    const s = this.state;
    for (const part of cmd.split(" && ")) {
      if (part === "systemctl unmask docker.service") s.service.enabled = "disabled";
      if (/^systemctl enable /.test(part)) s.service.enabled = "enabled";
      if (part.endsWith("--now docker.service") || part === "systemctl start docker.service") {
        if (s.service.active !== "active") s.running = s.files[DAEMON_JSON];
        s.service.active = "active";
      }
    }
    return {};
  }
}
