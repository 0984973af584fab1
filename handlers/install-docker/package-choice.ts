// Which of Docker's packages apt is asked for, decided from the VM's packages and what the lists offer: one
// pure decision that the package work (package-work.ts) acts on with the lists refreshed, and a check's
// preview (package-preview.ts) words with the lists as they are.

import type { Candidate } from "../common/apt-output";
import type { DockerChannel } from "./definition";
import {
  COMPOSE_PLUGIN,
  DISTRO_COMPOSE_CHOICES,
  OFFICIAL_PACKAGES,
  OPTIONAL_OFFICIAL_PACKAGES,
} from "./docker-packages";
import { type DockerState, installed } from "./docker-state";

type Offers = Map<string, Candidate>;
/** What of the event the choice reads. */
type Wants = { channel: DockerChannel; compose: boolean };

/** Docker's packages the official channel installs, before the repository's offer is read. */
export function officialWanted(event: Pick<Wants, "compose">): string[] {
  return [...OFFICIAL_PACKAGES, ...OPTIONAL_OFFICIAL_PACKAGES, ...(event.compose ? [COMPOSE_PLUGIN] : [])];
}

/** The official channel's choice: what to install, optional packages not offered (skipped), required ones missing. */
export interface OfficialChoice {
  toInstall: string[];
  skipped: string[];
  missingRequired: string[];
}

/** From the repository's offer: a required package it lacks is the caller's to refuse; an optional one is skipped. */
export function officialChoice(event: Wants, state: DockerState, offers: Offers): OfficialChoice {
  const wanted = officialWanted(event);
  const unavailable = wanted.filter((p) => !offers.get(p)?.candidate);
  const missingRequired = unavailable.filter((p) => !OPTIONAL_OFFICIAL_PACKAGES.includes(p));
  return {
    toInstall: wanted.filter((p) => !unavailable.includes(p) && !installed(state, p)),
    skipped: missingRequired.length ? [] : unavailable,
    missingRequired,
  };
}

/** What the distro channel installs: the engine, compose, or both (or neither). */
export function distroNeeds(event: Wants, state: DockerState): { needEngine: boolean; needCompose: boolean } {
  // A docker-ce already there is Docker too: installing docker.io would only make apt remove it.
  const needEngine = !installed(state, "docker.io") && !installed(state, "docker-ce");
  const needCompose =
    event.compose &&
    state.composeV2 === undefined &&
    state.composeV1 === undefined &&
    !DISTRO_COMPOSE_CHOICES.some((p) => installed(state, p));
  return { needEngine, needCompose };
}

/** The distribution's compose apt offers, best first, and a note when it is v1. */
export function pickDistroCompose(offers: Offers): { pick?: string; warning?: string } {
  const pick = DISTRO_COMPOSE_CHOICES.find((p) => offers.get(p)?.candidate);
  if (!pick) return {};
  const version = offers.get(pick)!.candidate!;
  const v1 = pick === "docker-compose" && /^(\d+:)?1\./.test(version);
  return {
    pick,
    warning: v1
      ? `the distribution's compose is ${pick} ${version}: compose v1 (Python), called as docker-compose; channel ` +
        `"official" has v2`
      : undefined,
  };
}

/** Whether the package work installs an engine: its maintainer scripts create the docker group. */
export function installsEngine(event: Wants, state: DockerState): boolean {
  return event.channel === "official" ? !installed(state, "docker-ce") : distroNeeds(event, state).needEngine;
}
