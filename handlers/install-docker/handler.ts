// install-docker: Docker Engine (and compose) on the VM, the way Docker's install docs do it, Ansible-style,
// in the kit's model (docker-model.ts). The event's keys, rules and defaults are in definition.ts; the
// result is the common shape (installer-result.ts) plus Docker's own fields below. Channels: "official" =
// Docker's repository and docker-ce, "distro" = docker.io [+ the distribution's compose] (package-work.ts).

import { defineHandler, runHandler } from "../common/handler-kit";
import type { InstallerReport, InstallerResult } from "../common/installer-result";
import type { DockerChannel, DockerVerify } from "./definition";
import { dockerDefinition } from "./definition";
import { dockerModel } from "./docker-model";
import type { ComposeReport } from "./docker-state";
import type { DockerRepository, PackageWork } from "./package-work";

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

export const handler = defineHandler({ definition: dockerDefinition, model: dockerModel });

/** The job's entrypoint (handler.install). */
export async function install(event: unknown): Promise<InstallerResult<InstallDockerReport>> {
  return runHandler(handler, event);
}
