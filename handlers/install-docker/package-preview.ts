// A check's preview of Docker's package work (the packages change in docker-model.ts): package-choice.ts's
// decisions over the lists as they are, since a check refreshes nothing. Docker's repository is foreseen as
// the run sets it up (docker-repository.ts); a package those lists do not offer is foreseen with a warning.

import type { Apt } from "../common/apt";
import type { Note, Preview } from "../common/installer-model";
import type { OsInfo } from "../common/os-release";
import type { Progress } from "../common/progress";
import { DISTRO_COMPOSE_CHOICES } from "./docker-packages";
import { foreseeRepository } from "./docker-repository";
import { type DockerState, installed } from "./docker-state";
import { distroNeeds, officialChoice, officialWanted, pickDistroCompose } from "./package-choice";
import { conflictingInstalled, type DockerEvent, missingPrerequisites } from "./package-work";

/** What the preview reads through. */
interface PreviewContext {
  apt: Apt;
  os: OsInfo;
  event: DockerEvent;
  progress: Progress;
}

const warning = (line: string): Note => ({ line, warning: true });
const LISTS_AS_THEY_ARE = "apt-cache policy (the lists as they are)";

/** The package work by channel; `apt.update()` over the look-only VM only looks whether dpkg needs a repair first. */
export async function previewPackages(ctx: PreviewContext, state: DockerState): Promise<Preview> {
  await ctx.apt.update();
  return ctx.event.channel === "official" ? previewOfficial(ctx, state) : previewDistro(ctx, state);
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

/** As installDistro decides. */
async function previewDistro({ event, apt, progress }: PreviewContext, state: DockerState): Promise<Preview> {
  const { needEngine, needCompose } = distroNeeds(event, state);
  if (!needEngine && !needCompose) return { what: [] };
  const names = [...(needEngine ? ["docker.io"] : []), ...(needCompose ? DISTRO_COMPOSE_CHOICES : [])];
  const offers = await progress.step(LISTS_AS_THEY_ARE, () => apt.candidates(names), "candidates");
  const toInstall: string[] = [];
  const notes: Note[] = [];
  if (needEngine) {
    toInstall.push("docker.io");
    if (!offers.get("docker.io")?.candidate) notes.push(warning(notInLists("docker.io", event)));
  }
  if (needCompose) {
    const { pick, warning: v1 } = pickDistroCompose(offers);
    toInstall.push(pick ?? `(compose: whichever of ${DISTRO_COMPOSE_CHOICES.join(", ")} the refreshed lists offer)`);
    if (v1) notes.push(warning(v1));
    if (!pick) notes.push(warning(notInLists(DISTRO_COMPOSE_CHOICES.join(", "), event)));
  }
  return { what: [`installed ${toInstall.join(" ")}`], notes };
}

/**
 * As installOfficial goes: prerequisites, the repository (its key fetched and its files compared as the run
 * does, once curl is there), the conflicting packages, Docker's.
 */
async function previewOfficial({ event, apt, os, progress }: PreviewContext, state: DockerState): Promise<Preview> {
  const base = `${event.repo_url.replace(/\/+$/, "")}/${os.family}`;
  const what: string[] = [];
  const notes: Note[] = [];
  const prereq = missingPrerequisites(state);
  if (prereq.length) what.push(`installed ${prereq.join(" ")}`);
  what.push(
    ...(await foreseeRepository(apt, os, { base, fingerprints: event.repo_key_fingerprint }, prereq, progress)),
  );
  const wanted = officialWanted(event);
  const offers = await progress.step(LISTS_AS_THEY_ARE, () => apt.candidates(wanted), "candidates");
  const choice = officialChoice(event, state, offers);
  // Until the lists hold Docker's repository, what it offers is not known: Docker's own offers them all.
  const toInstall = choice.missingRequired.length ? wanted.filter((p) => !installed(state, p)) : choice.toInstall;
  if (choice.missingRequired.length) {
    notes.push(
      warning(
        `the VM's current package lists offer no ${choice.missingRequired.join(", ")}: a real run reads Docker's ` +
          "repository with apt-get update once its source changes or update allows; the packages above are what " +
          "Docker's own repository offers",
      ),
    );
  }
  for (const p of choice.skipped) notes.push(warning(`${p} is not offered by ${base}; skipped`));
  const conflicting = conflictingInstalled(state);
  if (conflicting.length) what.push(`removed ${conflicting.join(" ")}`);
  if (toInstall.length) what.push(`installed ${toInstall.join(" ")}`);
  return { what, notes };
}
