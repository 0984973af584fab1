// install-docker: Docker Engine (and compose) on the VM, the way Docker's install docs do it, Ansible-style.
// The event's keys, rules and defaults are in definition.ts; the result is the common shape
// (handler-kit.ts) plus Docker's own fields.
//
// Phases: look (docker-state.ts, one read-only command) ->
//   already there (CLI works, daemon active, compose when asked, and for "official" it is docker-ce):
//     no apt at all, only a missing group membership or a stopped service is put right;
//   else install by channel (package-work.ts): "official" = Docker's repository and docker-ce,
//     "distro" = docker.io [+ the distribution's compose]
// -> service enabled and running, users in the docker group (service-and-group.ts) -> verify (verify.ts)
// -> report what changed.
// Check mode (the event's `check: true`) shares the look, then only foresees the rest (check.ts).

import type { Remote } from "../common/exec";
import { defineHandler, runHandler } from "../common/handler-kit";
import type { InstallerReport, InstallerResult } from "../common/installer-result";
import type { Progress } from "../common/progress";
import { requireSystemd } from "../common/systemd";
import { foreseeDocker } from "./check";
import { type DockerChannel, type DockerVerify, dockerDefinition } from "./definition";
import {
  type ComposeReport,
  composeReport,
  type DockerState,
  inspectDocker,
  packageVersions,
  unmetNeeds,
} from "./docker-state";
import {
  type DockerEvent,
  type DockerRepository,
  installDistro,
  installOfficial,
  noPackageWork,
  type PackageWork,
} from "./package-work";
import { ensureGroup, ensureService } from "./service-and-group";
import { verifyDocker, verifyOrRestart } from "./verify";

/**
 * In check mode every field tells the VM as it is now (docker_version, packages, compose: from the look;
 * server_version: from `docker info` when the daemon answers). users_added, revoked and removed stay
 * empty there, since the check did none of it: what a real run would do is in would_change.
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

/** Fails before any change when a user to add to the group does not exist. */
function requireUsers(state: DockerState, users: string[]): void {
  const unknown = users.filter((u) => state.users.get(u) === undefined);
  if (unknown.length === 0) return;
  const one = unknown.length === 1;
  throw new Error(
    `user${one ? "" : "s"} ${unknown.join(", ")} ${one ? "does" : "do"} not exist on the VM, so ${one ? "it" : "they"} cannot join the docker group: ` +
      "create them first or remove them from users. Nothing was changed.",
  );
}

/** The service and the group put right; what that changed, and who joined the group. */
async function serviceAndGroup(
  remote: Remote,
  state: DockerState,
  users: string[],
  progress: Progress,
): Promise<{ changes: string[]; added: string[]; revoked: string[] }> {
  const service = await ensureService(remote, state, progress);
  const group = await ensureGroup(remote, state, users, progress);
  return { changes: [...service, ...group.changes], added: group.added, revoked: group.revoked };
}

/** Docker found as asked: no package work, only the service and the group. */
async function alreadyThere(
  remote: Remote,
  event: DockerEvent,
  before: DockerState,
  users: string[],
  progress: Progress,
): Promise<InstallDockerReport> {
  progress.info(
    `Docker ${before.cli} is installed and running${before.composeV2 || before.composeV1 ? `, compose ${before.composeV2 ?? before.composeV1}` : ""}: no package work`,
  );
  const fixed = await serviceAndGroup(remote, before, users, progress);
  // Verified on every run: an installed Docker that does not answer is restarted once, and said so.
  const verified = await progress.step(
    `verify (${event.verify})`,
    () => verifyOrRestart(remote, event.verify, progress),
    "verify",
  );
  fixed.changes.push(...verified.changes);
  const summary = `Docker ${before.cli} already installed; ${fixed.changes.length ? fixed.changes.join("; ") : "nothing changed"}`;
  progress.info(summary);
  return {
    status: "ok",
    changes: fixed.changes,
    summary,
    docker_version: before.cli!,
    ...composeReport(before),
    channel: event.channel,
    packages: packageVersions(before),
    users_added: fixed.added,
    revoked: fixed.revoked,
    removed: [],
    apt_update: { ran: false, reason: "nothing to install" },
    server_version: verified.server,
    verify: { mode: event.verify, detail: verified.detail },
  };
}

export const handler = defineHandler({
  definition: dockerDefinition,
  async run({ event, check, remote, apt, os, progress, user }) {
    await requireSystemd(remote, "Docker");
    const users = event.users ?? [user];
    const before = await progress.step("checking Docker on the VM", () => inspectDocker(remote, users), "check");
    requireUsers(before, users);
    const needs = unmetNeeds(before, event);
    if (check) return foreseeDocker({ remote, apt, os, event, progress }, before, users, needs);
    if (needs.length === 0) return alreadyThere(remote, event, before, users, progress);
    progress.info(`to do (channel ${event.channel}): ${needs.join("; ")}`);

    // Not when only the service is down: that is the service step's, and needs no network.
    const packageWork = needs.some((n) => !n.startsWith("docker.service"));
    const done = !packageWork
      ? noPackageWork()
      : event.channel === "official"
        ? await installOfficial(apt, os, event, before, progress)
        : await installDistro(apt, event, before, progress);

    // A fresh look: packages start and create things themselves.
    const after = packageWork
      ? await progress.step("checking Docker after installing", () => inspectDocker(remote, users), "check")
      : before;
    if (!after.cli)
      throw new Error(
        `the packages are installed (${Object.keys(packageVersions(after)).join(", ") || "none"}) but \`docker --version\` still fails on the VM`,
      );
    const fixed = await serviceAndGroup(remote, after, users, progress);

    const verified = await progress.step(
      `verify (${event.verify})`,
      () => verifyDocker(remote, event.verify),
      "verify",
    );
    const compose = composeReport(after);
    if (event.compose && !compose.compose)
      throw new Error(
        "compose was installed but neither `docker compose version` nor `docker-compose --version` works on the VM",
      );
    const source = done.repository ? done.repository.uri : "the distribution";
    const summary =
      `Docker ${after.cli} (server ${verified.server}) ${packageWork ? `installed from ${source}` : "was installed; its service was not running and now is"}` +
      (compose.compose ? `, compose ${compose.compose_version}` : "") +
      (fixed.added.length ? `; added ${fixed.added.join(", ")} to group docker` : "") +
      (fixed.revoked.length ? `; revoked ${fixed.revoked.join(", ")}` : "");
    progress.info(summary);
    return {
      status: "ok",
      changes: [...done.changes, ...fixed.changes],
      summary,
      warnings: done.warnings,
      docker_version: after.cli,
      server_version: verified.server,
      ...compose,
      channel: event.channel,
      packages: packageVersions(after),
      users_added: fixed.added,
      revoked: fixed.revoked,
      removed: done.removed,
      ...(done.repository ? { repository: done.repository } : {}),
      apt_update: done.apt_update,
      verify: { mode: event.verify, detail: verified.detail },
    };
  },
});

/** The job's entrypoint (handler.install). */
export async function install(event: unknown): Promise<InstallerResult<InstallDockerReport>> {
  return runHandler(handler, event);
}
