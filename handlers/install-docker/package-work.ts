// Installing Docker's packages, by channel: Docker's own repository ("official", as Docker's docs
// "Install using the apt repository" do it) or the distribution's docker.io ("distro").

import type { EventOf } from "../../lib/shared/settings";
import { quote } from "../../lib/shared/shell-quote";
import type { Apt, AptUpdateOutcome } from "../common/apt";
import { aptFailureReason } from "../common/apt-output";
import { CommandError } from "../common/exec";
import type { OsInfo } from "../common/os-release";
import type { Progress } from "../common/progress";
import type { dockerDefinition } from "./definition";
import { CONFLICTING_PACKAGES, DISTRO_COMPOSE_CHOICES, PREREQUISITES } from "./docker-packages";
import { configureRepository, type DockerRepository } from "./docker-repository";
import { type DockerState, installed } from "./docker-state";
import { distroNeeds, officialChoice, officialWanted, pickDistroCompose } from "./package-choice";

export type DockerEvent = EventOf<typeof dockerDefinition.settings>;

/** What installing the packages did. */
export interface PackageWork {
  changes: string[];
  /** Conflicting packages removed (official channel). */
  removed: string[];
  warnings: string[];
  apt_update: AptUpdateOutcome;
  repository?: DockerRepository;
}

function noPackageWork(): PackageWork {
  return { changes: [], removed: [], warnings: [], apt_update: { ran: false, reason: "nothing to install" } };
}

/**
 * apt-get update with the event's policy; `force` (a source just changed) ignores update/cache_valid_sec.
 * `policyOf`: the names whose candidates are asked next, read with the update (one exec).
 */
async function updateLists(
  apt: Apt,
  progress: Progress,
  event: DockerEvent,
  force: boolean,
  policyOf: readonly string[] = [],
): Promise<AptUpdateOutcome> {
  if (!force && !event.update) return { ran: false, reason: "update: false" };
  const cacheValidSec = force ? undefined : event.cache_valid_sec;
  const outcome = await progress.step("apt-get update", () => apt.update({ cacheValidSec, policyOf }), "apt_update");
  if (force) outcome.reason = "an apt source changed";
  if (!outcome.ran) progress.info(`apt-get update skipped: ${outcome.reason}`);
  return outcome;
}

/** Docker's own repository and packages, as in "Install using the apt repository". */
export async function installOfficial(
  apt: Apt,
  os: OsInfo,
  event: DockerEvent,
  state: DockerState,
  progress: Progress,
): Promise<PackageWork> {
  const out = noPackageWork();
  out.apt_update = { ran: false, reason: "" };
  const base = `${event.repo_url.replace(/\/+$/, "")}/${os.family}`;
  // Prerequisites, then the repository (its key verified), then its package index read and the packages
  // found in it; only then do the conflicting packages go. A wrong key, an unreachable mirror or one
  // without this release must leave an installed docker.io running as it was.
  await installPrerequisites(apt, event, state, progress, out);
  const written = out.changes.length;
  const configured = await configureRepository(apt, os, { base, fingerprints: event.repo_key_fingerprint }, progress);
  const { changed: force, architectures } = configured;
  out.changes.push(...configured.changes);
  out.repository = configured.repository;
  const repo = { os, base, architectures };
  let toInstall: string[];
  try {
    // A changed source must be read whatever update/cache_valid_sec say; otherwise the event's policy,
    // unless the update for ca-certificates/curl just ran.
    try {
      if (force || !out.apt_update.ran)
        out.apt_update = await updateLists(apt, progress, event, force, officialWanted(event));
    } catch (err) {
      throw new Error(
        `apt-get update failed with Docker's repository configured (${out.repository!.source_file}: ` +
          `${out.repository!.line}): ` +
          `${err instanceof CommandError ? aptFailureReason(err) : (err as Error).message}. ` +
          `Check repo_url: ${base} must serve dists/${os.codename}/ signed by ${base}/gpg (Docker publishes only ` +
          `supported releases).`,
      );
    }
    toInstall = await officialPackagesToInstall(apt, repo, event, state, progress, out);
  } catch (err) {
    const undone = await forgetNewRepository(apt, out, out.changes.slice(written), progress);
    const kept = conflictingInstalled(state);
    throw new Error(
      `${(err as Error).message}${undone}${kept.length ? ` The installed ${kept.join(", ")} were not touched.` : ""}`,
    );
  }
  await removeConflicting(apt, state, progress, out);
  if (toInstall.length) {
    await progress.step(`apt-get install ${toInstall.join(" ")}`, () => apt.install(toInstall), "apt_install");
    out.changes.push(`installed ${toInstall.join(" ")}`);
  }
  return out;
}

/**
 * Removes the source and keyring this run wrote new for a repository that then failed, so it does not
 * break every later apt-get update; a file that was there before and rewritten is left (and said so).
 */
async function forgetNewRepository(apt: Apt, out: PackageWork, changes: string[], progress: Progress): Promise<string> {
  const repo = out.repository;
  if (!repo) return "";
  const files = [
    changes.some((c) => c.startsWith(`wrote ${repo.source_file} (new source)`)) ? repo.source_file : "",
    changes.some((c) => c.startsWith(`wrote ${repo.keyring} (new key)`)) ? repo.keyring : "",
  ].filter(Boolean);
  if (files.length === 0) return ` ${repo.source_file} was there before this run and is left as it is now.`;
  progress.info(`removing what this run wrote for the failed repository: ${files.join(" ")}`);
  await apt.remote.run(`rm -f ${files.map((f) => quote(f)).join(" ")}`, {
    sudo: true,
    label: `removing ${files.join(" ")}`,
    timeoutMs: 30_000,
    mutates: true,
  });
  return ` The source and key this run wrote were removed again (${files.join(", ")}).`;
}

/** What fetching Docker's key needs and the VM lacks. */
export function missingPrerequisites(state: DockerState): string[] {
  return PREREQUISITES.filter((p) => !installed(state, p) || (p === "curl" && !state.curl));
}

/** The packages Docker's docs remove first ("Uninstall old versions") that the VM has. */
export function conflictingInstalled(state: DockerState): string[] {
  return CONFLICTING_PACKAGES.filter((p) => installed(state, p));
}

/** Docker's docs, step 1: what fetching the key needs. */
async function installPrerequisites(
  apt: Apt,
  event: DockerEvent,
  state: DockerState,
  progress: Progress,
  out: PackageWork,
): Promise<void> {
  const prereq = missingPrerequisites(state);
  if (prereq.length) {
    out.apt_update = await updateLists(apt, progress, event, false);
    await progress.step(`apt-get install ${prereq.join(" ")}`, () => apt.install(prereq), "apt_install");
    out.changes.push(`installed ${prereq.join(" ")}`);
  }
}

/** Docker's docs, step 0 ("Uninstall old versions"). */
async function removeConflicting(apt: Apt, state: DockerState, progress: Progress, out: PackageWork): Promise<void> {
  const conflicting = conflictingInstalled(state);
  if (conflicting.length) {
    progress.info(`removing packages that conflict with Docker's: ${conflicting.join(" ")}`);
    out.removed = await progress.step(
      `apt-get remove ${conflicting.join(" ")}`,
      () => apt.remove(conflicting),
      "apt_remove",
    );
    out.changes.push(`removed ${out.removed.join(" ")}`);
  }
}

/** Docker's packages its repository offers and the VM lacks; an optional one it lacks is skipped with a warning. */
async function officialPackagesToInstall(
  apt: Apt,
  repo: { os: OsInfo; base: string; architectures: string[] },
  event: DockerEvent,
  state: DockerState,
  progress: Progress,
  out: PackageWork,
): Promise<string[]> {
  const { os, base } = repo;
  const arch = repo.architectures.join(",");
  const wanted = officialWanted(event);
  const offers = await progress.step("apt-cache policy", () => apt.candidates(wanted), "candidates");
  const choice = officialChoice(event, state, offers);
  if (choice.missingRequired.length) {
    throw new Error(
      `Docker's repository ${base} (${os.codename}, ${arch}) offers no ${choice.missingRequired.join(", ")}: ` +
        `check repo_url (a mirror must carry ${os.family}/dists/${os.codename}/stable) and that Docker supports ` +
        `${os.pretty_name ?? os.codename} on ${arch}.`,
    );
  }
  for (const p of choice.skipped) {
    out.warnings.push(`${p} is not offered by ${base}; skipped`);
    progress.info(`${p} is not offered by ${base}; skipped`);
  }
  return choice.toInstall;
}

/** The distribution's docker.io, and its compose when asked: whichever package apt offers. */
export async function installDistro(
  apt: Apt,
  event: DockerEvent,
  state: DockerState,
  progress: Progress,
): Promise<PackageWork> {
  const out = noPackageWork();
  const { needEngine, needCompose } = distroNeeds(event, state);
  if (!needEngine && !needCompose) return out;

  const names = [...(needEngine ? ["docker.io"] : []), ...(needCompose ? DISTRO_COMPOSE_CHOICES : [])];
  out.apt_update = await updateLists(apt, progress, event, false, names);
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
    const { pick, warning } = pickDistroCompose(offers);
    if (!pick)
      throw new Error(
        `the distribution offers none of ${DISTRO_COMPOSE_CHOICES.join(", ")}: set compose to false, or use channel ` +
          `"official" for Docker's compose plugin`,
      );
    if (warning) out.warnings.push(warning);
    toInstall.push(pick);
  }
  await progress.step(`apt-get install ${toInstall.join(" ")}`, () => apt.install(toInstall), "apt_install");
  out.changes.push(`installed ${toInstall.join(" ")}`);
  return out;
}
