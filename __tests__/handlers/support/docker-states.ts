// Generated starting states of install-docker's stateful double (docker-vm.ts) and the events run on it, for
// the property test of the promise: nothing installed, Docker's or the distribution's packages, earlier runs
// (their key, source, daemon.json and grants), then hand edits: a stale source, a wrong or legacy keyring,
// daemon.json the admin's, members gone or added by hand, the service stopped or masked, dockerd stuck, Docker
// sources of older docs or of their own.
// Every choice comes from one Draw, so a seed names its state and event.
import { GRANTS_FILE } from "../../../handlers/common/grants";
import { DAEMON_JSON } from "../../../handlers/install-docker/daemon-config";
import { handler } from "../../../handlers/install-docker/handler";
import type { Draw } from "../../support/seeded-random";
import { DISTRO, DockerVm, type DockerVmState, OFFICIAL } from "./docker-vm";
import { DOCKER_LIST, KEYRING } from "./docker-vm-files";
import { jobOn } from "./run-scripted";

/** One install-docker job on `vm`. */
export const dockerJob = (vm: DockerVm, event: object) => jobOn(handler, vm, event);

const USERS = ["ubuntu", "deploy", "ops"];
const STALE_KEYRING = "/usr/share/keyrings/docker-archive-keyring.gpg";
const OWN_KEYRING = "/etc/apt/trusted.gpg.d/docker-mirror.gpg";
const OLD_LINE = `deb [arch=amd64 signed-by=${STALE_KEYRING}] https://download.docker.com/linux/debian bookworm stable\n`;
const ADMIN_DAEMON = [
  { "log-driver": "journald" },
  { debug: true },
  { "registry-mirrors": ["https://admin-mirror.example.test"] },
  { "log-opts": { "max-size": "50m" }, "live-restore": true },
];

/** An event: channel, compose, users (now and then one the VM lacks), daemon settings, mirrors, update. */
function drawEvent(d: Draw): Record<string, unknown> {
  const users = d.chance(0.3) ? {} : { users: d.subset([...USERS, ...(d.chance(0.05) ? ["ghost"] : [])], 0.4) };
  return {
    channel: d.pick(["official", "distro"]),
    compose: d.chance(0.7),
    ...users,
    verify: d.pick(["hello-world", "daemon"]),
    log_rotation: d.chance(),
    log_max_size: d.pick(["10m", "50m"]),
    registry_mirrors: d.subset(["https://mirror.gcr.io", "http://10.0.0.9:5000"], 0.3),
    daemon_config: d.pick([{}, {}, { "live-restore": true }, { debug: true }, { "max-concurrent-downloads": 6 }]),
    update: d.chance(0.7),
  };
}

/** Packages an image may come with: nothing of Docker's, or the distribution's docker.io (and its compose). */
function drawPackages(d: Draw): Record<string, string> {
  const installed: Record<string, string> = { "ca-certificates": DISTRO["ca-certificates"][0] };
  if (d.chance(0.7)) installed.curl = DISTRO.curl[0];
  if (d.chance(0.25)) {
    for (const n of ["docker.io", "containerd", "runc"]) installed[n] = DISTRO[n][0];
    if (d.chance()) installed["docker-compose"] = DISTRO["docker-compose"][0];
  }
  return installed;
}

/** What a person or another tool did on the VM since: each drawn alone, told in the story. */
function handEdits(d: Draw, vm: DockerVm, story: string[]): void {
  const s = vm.state;
  const edit = (p: number, what: string, fn: () => void) => {
    if (!d.chance(p)) return;
    fn();
    story.push(what);
  };
  edit(0.15, "a stale docker source and keyring", () => {
    s.files["/etc/apt/sources.list.d/docker-ce.list"] = OLD_LINE;
    s.files[STALE_KEYRING] = "an old key";
  });
  edit(0.08, "a Docker line in sources.list", () => {
    s.files["/etc/apt/sources.list"] += OLD_LINE;
  });
  edit(0.1, "the legacy docker.asc keyring", () => {
    s.files["/etc/apt/keyrings/docker.asc"] = "-----BEGIN PGP PUBLIC KEY BLOCK-----\n";
  });
  if (s.files[KEYRING] !== undefined) edit(0.15, "docker.gpg replaced by other bytes", () => (s.files[KEYRING] = "x"));
  if (s.files[DOCKER_LIST] !== undefined)
    edit(0.1, "docker.list edited", () => (s.files[DOCKER_LIST] = OLD_LINE.replace(STALE_KEYRING, KEYRING)));
  edit(0.2, "daemon.json the admin's", () => {
    s.files[DAEMON_JSON] =
      `${JSON.stringify({ ...JSON.parse(s.files[DAEMON_JSON] ?? "{}"), ...d.pick(ADMIN_DAEMON) })}\n`;
  });
  edit(0.03, "daemon.json not JSON", () => (s.files[DAEMON_JSON] = "{ not json"));
  if (s.group) {
    edit(0.15, "a member removed by hand", () => (s.group = s.group?.slice(1)));
    edit(0.15, "ops added by hand", () => (s.group = [...new Set([...(s.group ?? []), "ops"])]));
  }
  edit(0.1, "grants.json recording ops", () => {
    s.files[GRANTS_FILE] = `${JSON.stringify({ version: 1, docker: { group_members: ["ops"] } })}\n`;
  });
  if (s.service.enabled) {
    edit(0.15, "docker.service stopped", () => (s.service.active = "inactive"));
    edit(0.08, "docker.service disabled", () => (s.service.enabled = "disabled"));
    edit(0.05, "docker.service masked", () => (s.service = { active: "inactive", enabled: "masked" }));
    if (s.service.active === "active") edit(0.1, "dockerd stuck", () => (s.stuck = true));
  }
  edit(0.2, "the lists then stale or gone", () => {
    s.lists = d.chance() ? undefined : structuredClone(DISTRO);
  });
  edit(0.08, "docker.list as Docker's older docs wrote it, signed by the archive keyring", () => {
    s.files[DOCKER_LIST] = OLD_LINE;
    s.files[STALE_KEYRING] = "an old key";
  });
  edit(0.08, "a docker source signed by a keyring of its own (outside the legacy ones)", () => {
    s.files["/etc/apt/sources.list.d/docker-mirror.list"] = OLD_LINE.replace(STALE_KEYRING, OWN_KEYRING);
    if (d.chance()) s.files[OWN_KEYRING] = "a key of its own";
  });
}

/** A drawn state (packages, 0 to 2 earlier runs, hand edits) and the event to check and run; `story` says which. */
export async function drawState(d: Draw) {
  const installed = drawPackages(d);
  const state: DockerVmState = {
    installed,
    mirror: structuredClone(DISTRO),
    lists: d.chance(0.85) ? structuredClone(DISTRO) : undefined,
    listsAgeSec: 3600,
    files: { "/etc/apt/sources.list": "deb http://deb.debian.org/debian bookworm main\n" },
    keyringsDir: { exists: d.chance(0.8) },
    service: "docker.io" in installed ? { active: "active", enabled: "enabled" } : { active: "inactive", enabled: "" },
    group: "docker.io" in installed ? ["ubuntu"] : undefined,
    users: USERS,
  };
  const story = [`installed ${Object.keys(installed).join(" ")}`];
  const vm = new DockerVm(state);
  let event: Record<string, unknown> | undefined;
  for (let runs = d.int(0, 2); runs > 0; runs--) {
    event = drawEvent(d);
    const outcome = await dockerJob(vm, event).then(
      (r) => r.status,
      (err: Error) => `failed: ${err.message.split("\n")[0]}`,
    );
    story.push(`run ${JSON.stringify(event)}: ${outcome}`);
  }
  handEdits(d, vm, story);
  const next = event && d.chance(0.3) ? event : drawEvent(d);
  return { vm, story: [...story, `then check and run ${JSON.stringify(next)}`], event: next };
}

/** What apt-get update fetches on `vm` once a run of `event` has configured its channel's sources. */
export function refreshed(vm: DockerVm, event: Record<string, unknown>): Record<string, string[]> {
  return event.channel === "official" ? { ...DISTRO, ...OFFICIAL } : vm.mirror();
}
