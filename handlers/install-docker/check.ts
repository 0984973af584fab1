// install-docker in check mode (the event's `check: true`, handlers/common/check-mode.ts): the same look
// at the VM as a real run, then the lines a real run would report, worked out from that look and other
// read-only questions (apt-cache policy of the lists as they are, the inventory, `docker info`). The
// report's own fields say how the VM is now; what would change is only in `changes` (would_change).
//
// What a check cannot know, it says so rather than guess: Docker's repository is not fetched (its key
// and files are not compared), packages the current lists do not offer are reported with a warning that
// a real run refreshes the lists first, and the verification is `docker info` only (never hello-world:
// that pulls an image and creates a container).

import type { Apt, AptUpdateOutcome } from "../common/apt";
import { SOURCES_DIR } from "../common/apt-repository";
import type { Remote } from "../common/exec";
import type { OsInfo } from "../common/os-release";
import type { Progress } from "../common/progress";
import { DISTRO_COMPOSE_CHOICES, OPTIONAL_OFFICIAL_PACKAGES } from "./docker-packages";
import { composeReport, type DockerState, installed, packageVersions } from "./docker-state";
import type { InstallDockerReport } from "./handler";
import {
  conflictingInstalled,
  type DockerEvent,
  distroNeeds,
  missingPrerequisites,
  officialWanted,
  pickDistroCompose,
} from "./package-work";
import { planGroupStep, planService } from "./service-and-group";
import { failureOf, restartLine, verifyDocker } from "./verify";

export interface CheckContext {
  remote: Remote;
  apt: Apt;
  os: OsInfo;
  event: DockerEvent;
  progress: Progress;
}

/** What the package work would do: its change lines, and whether it installs an engine (which brings the group). */
interface ForeseenPackages {
  changes: string[];
  warnings: string[];
  apt_update: AptUpdateOutcome;
  installsEngine: boolean;
}

/** Check mode: what a run would change on this VM, from `before` (the usual look) and `needs` (unmetNeeds). */
export async function foreseeDocker(
  ctx: CheckContext,
  before: DockerState,
  users: string[],
  needs: string[],
): Promise<InstallDockerReport> {
  const { event, progress } = ctx;
  const packageWork = needs.some((n) => !n.startsWith("docker.service"));
  const packages = packageWork
    ? await foreseePackages(ctx, before)
    : { changes: [], warnings: [], apt_update: { ran: false, reason: "nothing to install" }, installsEngine: false };
  // On the current state: a real run looks again after installing, and whether a package's own scripts
  // enable and start the unit (Debian's do, unless policy-rc.d forbids it) is only known then.
  const service = planService(before).changes;
  const group = await planGroupStep(ctx.remote, before, users, progress);
  // docker.io's and docker-ce's maintainer scripts create the group: a run installing them does not.
  const groupChanges = packages.installsEngine
    ? group.changes.filter((c) => c !== "created group docker")
    : group.changes;
  const daemon = await progress.step(
    "verify (docker info only: check mode)",
    () => lookAtDaemon(ctx.remote, before, event, needs.length === 0),
    "verify",
  );
  const changes = [...packages.changes, ...service, ...groupChanges, ...daemon.changes];
  const summary = before.cli
    ? `Docker ${before.cli} is installed${daemon.server ? ` (server ${daemon.server})` : ""}`
    : `Docker is not installed (channel ${event.channel})`;
  progress.info(`check: ${changes.length ? changes.join("; ") : "nothing would change"}`);
  return {
    status: "ok",
    changes,
    summary,
    warnings: [...packages.warnings, ...daemon.warnings],
    ...(before.cli ? { docker_version: before.cli } : {}),
    ...(daemon.server ? { server_version: daemon.server } : {}),
    ...composeReport(before),
    channel: event.channel,
    packages: packageVersions(before),
    users_added: [],
    revoked: [],
    removed: [],
    apt_update: packages.apt_update,
    verify: { mode: event.verify, detail: daemon.detail },
  };
}

/**
 * `docker info`, only when docker.service is active: with the service stopped, docker.socket would
 * start the daemon on the first call, a change. When Docker is already as asked (`restarts`), a daemon
 * that does not answer is the restart a real run makes; otherwise the real run verifies after its own
 * changes, so the silence now is only a warning.
 */
async function lookAtDaemon(
  remote: Remote,
  state: DockerState,
  event: DockerEvent,
  restarts: boolean,
): Promise<{ server?: string; detail: string; changes: string[]; warnings: string[] }> {
  if (!state.cli || state.active !== "active") {
    const why = state.cli ? `docker.service is ${state.active || "missing"}` : "Docker is not installed";
    return { detail: `not verified in check mode: ${why}`, changes: [], warnings: [] };
  }
  const skipped = event.verify === "hello-world" ? " (check mode: hello-world is not run)" : "";
  try {
    const { server, detail } = await verifyDocker(remote, "daemon");
    return { server, detail: `${detail}${skipped}`, changes: [], warnings: [] };
  } catch (err) {
    const why = failureOf(err);
    if (restarts) return { detail: why, changes: [restartLine(why, false)], warnings: [] };
    return {
      detail: why,
      changes: [],
      warnings: [`${why} (a real run verifies again after its changes and fails if it still does not answer)`],
    };
  }
}

/** The package work by channel; `apt.update()` in check mode only looks whether dpkg would need a repair first. */
async function foreseePackages(ctx: CheckContext, state: DockerState): Promise<ForeseenPackages> {
  const apt_update = await ctx.apt.update();
  const work = ctx.event.channel === "official" ? await foreseeOfficial(ctx, state) : await foreseeDistro(ctx, state);
  return { ...work, apt_update };
}

/** Why a package the VM's lists do not offer is still foreseen. */
function notInLists(what: string, event: DockerEvent): string {
  return (
    `the VM's current package lists offer no ${what}: ` +
    (event.update
      ? "a real run refreshes them first, which may change that"
      : "update is false, so a real run would read these lists and fail")
  );
}

/** As installDistro decides, from the lists as they are. */
async function foreseeDistro(ctx: CheckContext, state: DockerState): Promise<Omit<ForeseenPackages, "apt_update">> {
  const { event, apt, progress } = ctx;
  const { needEngine, needCompose } = distroNeeds(event, state);
  const none = { changes: [], warnings: [], installsEngine: false };
  if (!needEngine && !needCompose) return none;
  const names = [...(needEngine ? ["docker.io"] : []), ...(needCompose ? DISTRO_COMPOSE_CHOICES : [])];
  const offers = await progress.step(
    "apt-cache policy (the lists as they are)",
    () => apt.candidates(names),
    "candidates",
  );
  const toInstall: string[] = [];
  const warnings: string[] = [];
  if (needEngine) {
    toInstall.push("docker.io");
    if (!offers.get("docker.io")?.candidate) warnings.push(notInLists("docker.io", event));
  }
  if (needCompose) {
    const { pick, warning } = pickDistroCompose(offers);
    toInstall.push(pick ?? `(compose: whichever of ${DISTRO_COMPOSE_CHOICES.join(", ")} the refreshed lists offer)`);
    if (warning) warnings.push(warning);
    if (!pick) warnings.push(notInLists(DISTRO_COMPOSE_CHOICES.join(", "), event));
  }
  return { changes: [`installed ${toInstall.join(" ")}`], warnings, installsEngine: needEngine };
}

/**
 * As installOfficial would go: prerequisites, the repository, the conflicting packages, Docker's. The
 * repository is one honest line: its key is not fetched, so whether its files differ is not known.
 */
async function foreseeOfficial(ctx: CheckContext, state: DockerState): Promise<Omit<ForeseenPackages, "apt_update">> {
  const { event, apt, os, progress } = ctx;
  const base = `${event.repo_url.replace(/\/+$/, "")}/${os.family}`;
  const changes: string[] = [];
  const warnings: string[] = [];
  const prereq = missingPrerequisites(state);
  if (prereq.length) changes.push(`installed ${prereq.join(" ")}`);
  changes.push(
    `Docker's apt repository ${base} ${os.codename} stable configured in ${SOURCES_DIR}/docker.list with its key from ${base}/gpg ` +
      "(if not already as wanted: a check does not fetch the key; older entries for the same repository are removed)",
  );
  const wanted = officialWanted(event);
  const offers = await progress.step(
    "apt-cache policy (the lists as they are)",
    () => apt.candidates(wanted),
    "candidates",
  );
  const offered = (p: string) => Boolean(offers.get(p)?.candidate);
  const notOffered = wanted.filter((p) => !OPTIONAL_OFFICIAL_PACKAGES.includes(p) && !offered(p));
  // Until the lists hold Docker's repository, what it offers is not known: Docker's own offers them all.
  const skipped = notOffered.length ? [] : wanted.filter((p) => !offered(p));
  if (notOffered.length) {
    warnings.push(
      `the VM's current package lists offer no ${notOffered.join(", ")}: a real run reads Docker's repository with apt-get update once its source changes ` +
        `or update allows; the packages above are what Docker's own repository offers`,
    );
  }
  for (const p of skipped) warnings.push(`${p} is not offered by ${base}; skipped`);
  const conflicting = conflictingInstalled(state);
  if (conflicting.length) changes.push(`removed ${conflicting.join(" ")}`);
  const toInstall = wanted.filter((p) => !skipped.includes(p) && !installed(state, p));
  if (toInstall.length) changes.push(`installed ${toInstall.join(" ")}`);
  return { changes, warnings, installsEngine: toInstall.includes("docker-ce") };
}
