// install-docker in the kit's model. Inspect: one look at Docker (docker-state.ts), the inventory read and
// re-checked against it (record-check.ts), the group step decided, the daemon asked when no package work is
// due. Plan: the package work by channel (it replans: packages start and create things; a check previews it),
// records the VM left forgotten, a restart of a daemon that does not answer, daemon.json, the service, the
// group. Verify (a run only): the daemon answers, and hello-world unless `verify: "daemon"`.

import { GRANTS_FILE, readGrants } from "../common/grants";
import type { Change, InstallerModel, ModelRun } from "../common/installer-model";
import type { InstallerReport } from "../common/installer-result";
import type { Progress } from "../common/progress";
import { requireSystemdFrom } from "../common/systemd";
import type { DaemonFile } from "./daemon-config";
import { daemonConfigChange, daemonFileOf } from "./daemon-config-apply";
import type { DaemonRecord } from "./daemon-record";
import type { DockerChannel, DockerVerify } from "./definition";
import type { DockerRepository } from "./docker-repository";
import {
  type ComposeReport,
  composeReport,
  type DockerNeed,
  type DockerState,
  dockerNeeds,
  inspectDocker,
  needsPackages,
  needWords,
  packageVersions,
} from "./docker-state";
import { installsEngine } from "./package-choice";
import { previewPackages } from "./package-preview";
import { type DockerEvent, installDistro, installOfficial, type PackageWork } from "./package-work";
import { checkRecords, forgetChange, type RecordCheck } from "./record-check";
import {
  applyGroupStep,
  ensureService,
  type GroupStep,
  groupStepIsEmpty,
  planGroupStep,
  planService,
} from "./service-and-group";
import {
  type DaemonAnswer,
  type DaemonLook,
  helloWorld,
  lookAtDaemon,
  restartDocker,
  restartLine,
  verifyDocker,
} from "./verify";

/**
 * Every field tells the VM as the last look saw it and what was applied: in a check (nothing applied)
 * docker_version, packages and compose as they are, server_version from `docker info` when the daemon
 * answers, and users_added, revoked and removed empty: what a run would do is in would_change.
 */
export interface InstallDockerReport extends InstallerReport, ComposeReport {
  /** The docker CLI's version ("27.0.3", "20.10.24+dfsg1"); absent only in a check of a VM without Docker. */
  docker_version?: string;
  /** The daemon's version, from the verification (absent when the daemon was not asked, in check mode). */
  server_version?: string;
  channel: DockerChannel;
  /** Installed version of each Docker package present (docker-ce, containerd.io, docker.io, ...). */
  packages: Record<string, string>;
  /** Users this run added to the docker group (their next SSH session has it). */
  users_added: string[];
  /** Grants this run took back ("group docker: <user>"): members vm-install had added that users no longer lists. */
  revoked: string[];
  /** Conflicting packages this run removed (official channel). */
  removed: string[];
  /** Docker's repository as configured (official channel). */
  repository?: DockerRepository;
  apt_update: PackageWork["apt_update"];
  /** How the installation was checked and what it said (on every run, installed now or before). */
  verify: { mode: DockerVerify; detail: string };
}

/** Docker as one look saw it, with what the plan and the report need beside it. */
export interface DockerSeen {
  docker: DockerState;
  users: string[];
  needs: DockerNeed[];
  /** The group step decided (before package work, as far as the VM lets it be foreseen). */
  group: GroupStep;
  /** The daemon asked (on the first look, when its service is active). */
  daemon?: DaemonLook;
  /** /etc/docker/daemon.json as found. */
  daemonFile: DaemonFile;
  /** The inventory re-checked against the VM. */
  records: RecordCheck;
  /** What vm-install wrote into daemon.json and replaced there, as the file bears it out. */
  daemonRecord?: DaemonRecord;
}

/** What a change did, for the report. */
interface DockerOutcome {
  what?: readonly string[];
  work?: PackageWork;
  group?: { added: string[]; revoked: string[] };
  answer?: DaemonAnswer;
}

type DockerChange = Change<DockerEvent, DockerOutcome>;
type DockerRun = ModelRun<DockerSeen, DockerEvent, DockerOutcome, DaemonAnswer | undefined>;

/** Fails before any change when a user to add to the group does not exist. */
function requireUsers(state: DockerState, users: string[]): void {
  const unknown = users.filter((u) => state.users.get(u) === undefined);
  if (unknown.length === 0) return;
  const one = unknown.length === 1;
  throw new Error(
    `user${one ? "" : "s"} ${unknown.join(", ")} ${one ? "does" : "do"} not exist on the VM, so ` +
      `${one ? "it" : "they"} cannot join the docker group: ` +
      "create them first or remove them from users. Nothing was changed.",
  );
}

/** After the package work, what the packages must have brought; else the job fails saying what is missing. */
function requireInstalled(state: DockerState, event: DockerEvent): void {
  if (!state.cli)
    throw new Error(
      `the packages are installed (${Object.keys(packageVersions(state)).join(", ") || "none"}) but \`docker ` +
        `--version\` still fails on the VM`,
    );
  if (event.compose && !composeReport(state).compose)
    throw new Error(
      "compose was installed but neither `docker compose version` nor `docker-compose --version` works on the VM",
    );
}

/** The package work by channel; its lines are what the installs did (a check previews them). */
function packagesChange(seen: DockerSeen, event: DockerEvent): DockerChange {
  const why = seen.needs.map(needWords).join("; ");
  return {
    kind: "packages",
    what: [`installed Docker (channel ${event.channel})`],
    why,
    replan: true,
    async apply({ apt, os, progress }) {
      const work =
        event.channel === "official"
          ? await installOfficial(apt, os, event, seen.docker, progress)
          : await installDistro(apt, event, seen.docker, progress);
      return { what: work.changes, work };
    },
    preview: ({ apt, os, progress }) => previewPackages({ apt, os, event, progress }, seen.docker),
  };
}

function serviceChange(seen: DockerSeen, lines: string[]): DockerChange {
  return {
    kind: "service",
    what: lines,
    why: `docker.service is ${seen.docker.active || "missing"} (${seen.docker.enabled || "no unit"})`,
    apply: async ({ remote, progress }) => ({ what: await ensureService(remote, seen.docker, progress) }),
  };
}

/** docker.io's and docker-ce's maintainer scripts create the group: a run installing them does not. */
function groupChange(step: GroupStep, installsEngine: boolean): DockerChange {
  return {
    kind: "group",
    what: installsEngine ? step.changes.filter((c) => c !== "created group docker") : step.changes,
    why: "the docker group's members differ from users",
    apply: async ({ remote, progress }) => ({ group: await applyGroupStep(remote, step, progress) }),
  };
}

/**
 * The restart of a daemon that does not answer, first: package work that leaves the engine as it is does not
 * wake it, a reload for daemon.json needs a daemon that answers, and the look after the restart plans the rest
 * on a dockerd that does (the check plans on the same).
 */
function restartChange(failure: string): DockerChange {
  return {
    kind: "restart",
    what: [restartLine(failure)],
    why: failure,
    replan: true,
    async apply({ remote, progress }) {
      return { answer: await restartDocker(remote, failure, progress) };
    },
  };
}

/** Pure: a restart, package work, records forgotten (each replans), daemon.json (replans), the service, the group. */
function planDocker(seen: DockerSeen, event: DockerEvent): DockerChange[] {
  const changes: DockerChange[] = [];
  if (seen.daemon?.failure) changes.push(restartChange(seen.daemon.failure));
  if (needsPackages(seen.needs)) changes.push(packagesChange(seen, event));
  const forget = forgetChange(seen.records);
  if (forget) changes.push(forget);
  // An engine's maintainer scripts unmask, enable and start docker.service: what follows the package work
  // is planned on that unit, as the run's replan after it finds it (the check's words are the run's).
  const engine = needsPackages(seen.needs) && installsEngine(event, seen.docker);
  let unit = engine ? { active: "active", enabled: "enabled" } : seen.docker;
  // systemd refuses to restart or reload a masked unit: unmasked (and started) first, daemon.json follows on it.
  const masked = unit.enabled === "masked";
  if (masked) {
    changes.push(serviceChange(seen, planService(unit).changes));
    unit = { active: "active", enabled: "enabled" };
  }
  const config = daemonConfigChange(seen.daemonFile, unit.active === "active", event, seen.daemonRecord);
  if (config) changes.push(config);
  // A restart for daemon.json starts a stopped unit: the run's replan after it finds docker.service active.
  const service = planService(config?.restarts ? { ...unit, active: "active" } : unit);
  if (!masked && service.cmds.length) changes.push(serviceChange(seen, service.changes));
  if (!groupStepIsEmpty(seen.group)) changes.push(groupChange(seen.group, engine));
  return changes;
}

export const dockerModel: InstallerModel<
  DockerEvent,
  DockerSeen,
  InstallDockerReport,
  DockerOutcome,
  DaemonAnswer | undefined
> = {
  async inspect({ event, remote, progress, user, round, previous }) {
    const users = event.users ?? [user];
    const installed = previous?.applied.some((a) => a.change.kind === "packages") ?? false;
    const label =
      round === 0
        ? "checking Docker on the VM"
        : installed
          ? "checking Docker after installing"
          : "checking Docker again";
    const docker = await progress.step(label, () => inspectDocker(remote, users), "check");
    // systemd is asked in the same look: no change was made before this refusal.
    if (round === 0) requireSystemdFrom(docker.systemd, "Docker");
    if (installed) requireInstalled(docker, event);
    requireUsers(docker, users);
    const needs = dockerNeeds(docker, event);
    if (round === 0) sayWhatIsToDo(docker, needs, event, progress);
    const daemonFile = await daemonFileOf(remote, docker, progress);
    // Every record is re-checked before use: one the VM no longer bears out is forgotten, never acted on.
    const inventory = await progress.step(`reading ${GRANTS_FILE}`, () => readGrants(remote), "grants");
    const records = checkRecords(inventory, docker, users, daemonFile);
    const group = planGroupStep(docker, users, records.inventory);
    const seen: DockerSeen = { docker, users, needs, daemonFile, records, daemonRecord: records.daemon, group };
    // Package work that installs an engine starts a new daemon, which the verification after it asks; any other
    // leaves the daemon as it is, so it is asked now (the same in a check): a silent one is restarted first.
    if (round === 0 && (!needsPackages(needs) || !installsEngine(event, docker)))
      seen.daemon = await progress.step("docker info", () => lookAtDaemon(remote, docker), "verify");
    return seen;
  },
  plan: planDocker,
  verify: (ctx, run) => verifyRun(ctx.remote, ctx.progress, run),
  report,
};

function sayWhatIsToDo(docker: DockerState, needs: DockerNeed[], event: DockerEvent, progress: Progress): void {
  if (needs.length) {
    progress.info(`to do (channel ${event.channel}): ${needs.map(needWords).join("; ")}`);
    return;
  }
  const compose = docker.composeV2 ?? docker.composeV1;
  progress.info(
    `Docker ${docker.cli} is installed and running${compose ? `, compose ${compose}` : ""}: no package work`,
  );
}

/**
 * After the changes: the daemon answers (asked again unless nothing that touches it was changed since
 * the look, or the restart just asked it), then hello-world unless the event says "daemon".
 */
async function verifyRun(
  remote: Parameters<typeof verifyDocker>[0],
  progress: { step<T>(label: string, fn: () => Promise<T>, timing?: string): Promise<T> },
  run: DockerRun,
): Promise<DaemonAnswer> {
  const mode: DockerVerify = run.event.verify;
  const restarted = run.applied.find((a) => a.change.kind === "restart")?.outcome?.answer;
  const touched = run.applied.some((a) => ["packages", "service", "daemon-config"].includes(a.change.kind));
  const known = restarted ?? (touched ? undefined : run.before.daemon?.answer);
  const verify = () =>
    !known ? verifyDocker(remote, mode) : mode === "daemon" ? Promise.resolve(known) : helloWorld(remote, known.server);
  return progress.step(`verify (${mode})`, verify, "verify");
}

/** What the run found, did and verified; with nothing applied (a check), the VM as the look saw it. */
function report(run: DockerRun): Omit<InstallDockerReport, "changes"> {
  const { event, state } = run;
  const after = state.docker;
  const outcome = (kind: string) => run.applied.find((a) => a.change.kind === kind)?.outcome;
  const work = outcome("packages")?.work;
  const group = outcome("group")?.group ?? { added: [], revoked: [] };
  const answer = run.verified ?? run.before.daemon?.answer;
  const notInstalled = needsPackages(run.before.needs) && !work;
  return {
    status: "ok",
    summary: summaryOf(run, work, group),
    warnings: work?.warnings ?? [],
    ...(after.cli ? { docker_version: after.cli } : {}),
    ...(answer ? { server_version: answer.server } : {}),
    ...composeReport(after),
    channel: event.channel,
    packages: packageVersions(after),
    users_added: group.added,
    revoked: group.revoked,
    removed: work?.removed ?? [],
    ...(work?.repository ? { repository: work.repository } : {}),
    apt_update:
      work?.apt_update ??
      (notInstalled
        ? { ran: false, reason: "nothing was installed, so the package lists were not refreshed" }
        : { ran: false, reason: "nothing to install" }),
    verify: { mode: event.verify, detail: verifyDetail(run) },
  };
}

/** The verification's words; without one, what the look's `docker info` said (after changes: not verified). */
function verifyDetail(run: DockerRun): string {
  if (run.verified) return run.verified.detail;
  if (run.applied.length) return "not verified: the verification did not run after the changes";
  const { docker, daemon } = run.before;
  const answer = daemon?.answer;
  const skipped = run.event.verify === "hello-world" ? " (hello-world runs in a real run only)" : "";
  const why = docker.cli ? `docker.service is ${docker.active || "missing"}` : "Docker is not installed";
  return answer ? `${answer.detail}${skipped}` : (daemon?.failure ?? `not verified (a real run verifies): ${why}`);
}

function summaryOf(run: DockerRun, work: PackageWork | undefined, group: { added: string[]; revoked: string[] }) {
  const after = run.state.docker;
  if (run.before.needs.length === 0) {
    const lines = run.applied.flatMap((a) => a.outcome?.what ?? a.change.what);
    return `Docker ${after.cli} already installed; ${lines.length ? lines.join("; ") : "nothing changed"}`;
  }
  // Nothing applied though Docker needed work (a check: the kit words its summary from would_change): the
  // VM as the look saw it. Whether a verify ran says nothing of that.
  if (run.applied.length === 0) return after.cli ? `Docker ${after.cli} is installed` : "Docker is not installed";
  const compose = composeReport(after);
  const source = work?.repository ? work.repository.uri : "the distribution";
  return (
    `Docker ${after.cli}${run.verified ? ` (server ${run.verified.server})` : ""} ` +
    `${work ? `installed from ${source}` : "was installed; its service was not running and now is"}` +
    (compose.compose ? `, compose ${compose.compose_version}` : "") +
    (group.added.length ? `; added ${group.added.join(", ")} to group docker` : "") +
    (group.revoked.length ? `; revoked ${group.revoked.join(", ")}` : "")
  );
}
