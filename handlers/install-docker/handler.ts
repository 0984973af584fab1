// install-docker: Docker Engine (and compose) on the VM, the way Docker's install docs do it, Ansible-style,
// in the kit's model (docker-model.ts). The event's keys, rules and defaults are in definition.ts; the
// result is the common shape (installer-result.ts) plus Docker's own fields below. Channels: "official" =
// Docker's repository and docker-ce, "distro" = docker.io [+ the distribution's compose] (package-work.ts).

import { type AbsentReport, presentOrAbsent } from "../common/absent-model";
import { defineHandler, runHandler } from "../common/handler-kit";
import type { InstallerResult } from "../common/installer-result";
import { dockerAbsentModel } from "./absent";
import { dockerDefinition } from "./definition";
import { dockerModel, type InstallDockerReport } from "./docker-model";

/** State absent takes back what install-docker granted and installed (absent.ts). */
export const handler = defineHandler({
  definition: dockerDefinition,
  model: presentOrAbsent(dockerModel, dockerAbsentModel),
});

/** The job's entrypoint (handler.install). */
export async function install(event: unknown): Promise<InstallerResult<InstallDockerReport | AbsentReport>> {
  return runHandler<typeof dockerDefinition.settings, InstallDockerReport | AbsentReport>(handler, event);
}
