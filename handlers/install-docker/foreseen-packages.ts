// What a check foresees of Docker's package work, from read-only questions only (apt-cache policy of the
// lists as they are): Docker's repository is not fetched (its key and files are not compared), and a
// package the current lists do not offer is foreseen with a warning that a real run refreshes them.

import type { Apt, AptUpdateOutcome } from "../common/apt";
import { SOURCES_DIR } from "../common/apt-repository";
import type { OsInfo } from "../common/os-release";
import type { Progress } from "../common/progress";
import { DISTRO_COMPOSE_CHOICES, OPTIONAL_OFFICIAL_PACKAGES } from "./docker-packages";
import { type DockerState, installed } from "./docker-state";
import {
  conflictingInstalled,
  type DockerEvent,
  distroNeeds,
  missingPrerequisites,
  officialWanted,
  pickDistroCompose,
} from "./package-work";

/** What a look needs to foresee the package work. */
export interface ForeseeContext {
  apt: Apt;
  os: OsInfo;
  event: DockerEvent;
  progress: Progress;
}

/** What the package work would do: its change lines, and whether it installs an engine (which brings the group). */
export interface ForeseenPackages {
  changes: string[];
  warnings: string[];
  apt_update: AptUpdateOutcome;
  installsEngine: boolean;
}

/** The package work by channel; `apt.update()` in check mode only looks whether dpkg would need a repair first. */
export async function foreseePackages(ctx: ForeseeContext, state: DockerState): Promise<ForeseenPackages> {
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
async function foreseeDistro(ctx: ForeseeContext, state: DockerState): Promise<Omit<ForeseenPackages, "apt_update">> {
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
async function foreseeOfficial(ctx: ForeseeContext, state: DockerState): Promise<Omit<ForeseenPackages, "apt_update">> {
  const { event, apt, os, progress } = ctx;
  const base = `${event.repo_url.replace(/\/+$/, "")}/${os.family}`;
  const changes: string[] = [];
  const warnings: string[] = [];
  const prereq = missingPrerequisites(state);
  if (prereq.length) changes.push(`installed ${prereq.join(" ")}`);
  changes.push(
    `Docker's apt repository ${base} ${os.codename} stable configured in ${SOURCES_DIR}/docker.list with its key ` +
      `from ${base}/gpg ` +
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
      `the VM's current package lists offer no ${notOffered.join(", ")}: a real run reads Docker's repository with ` +
        `apt-get update once its source changes ` +
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
