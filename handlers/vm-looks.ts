// Every look the installers make at the VM, for the docs' audit table (lib/operator/reference/vm-facts-reference.ts:
// docs/vm-facts.md) and the test that every defineLook is listed here. A look
// built at run time (Docker's per user, the stale sources' per keyring) is listed with a placeholder.
// An installer adds its looks with one line: ...looksOf("install-x", LOOK_A, LOOK_B).

import { sourcesLook } from "./common/apt-sources-look";
import { afterTransactionLook, TRANSACTION_LOOK } from "./common/apt-transaction";
import { afterUpdateLook } from "./common/apt-update";
import { BOOT_LOOK } from "./common/boot-look";
import { CLOUD_INIT_LOG_LOOK, CLOUD_INIT_LOOK } from "./common/cloud-init";
import { DPKG_HEALTH_LOOK } from "./common/dpkg-health";
import { packagesProbe, verifyProbe, wantedOf } from "./common/ensure-packages";
import { GRANTS_LOOK } from "./common/grants";
import { LOCK_TABLE_LOOK } from "./common/lock-holders";
import { INVENTORY_LOOK, INVENTORY_PROBE } from "./common/package-inventory";
import { REMOVAL_LOOK } from "./common/removal";
import type { Probe } from "./common/vm-facts";
import { DAEMON_FILE_LOOK, DAEMON_RELOAD_WRITE_LOOK, DAEMON_WRITE_LOOK } from "./install-docker/daemon-config-apply";
import { reloadLook } from "./install-docker/daemon-running";
import { dockerProbes } from "./install-docker/docker-state";
import { POSTGRES_LOOKS } from "./install-postgres/looks";
import { INSTALLATION_PROBES_AS_ROOT, SERVER_PACKAGE_PROBE } from "./install-postgres/server";

/** One look as the audit table lists it: who makes it, its name, its probes. */
export interface ListedLook {
  /** The installer making it, or what part of every installer ("every installer: apt work"). */
  readonly installer: string;
  /** The look's `what` (defineLook's first argument). */
  readonly look: string;
  readonly probes: readonly Probe[];
}

/** `looks` listed under `installer`. */
function looksOf(
  installer: string,
  ...looks: { readonly what: string; readonly probes: readonly Probe[] }[]
): ListedLook[] {
  return looks.map((l) => ({ installer, look: l.what, probes: l.probes }));
}

export const VM_LOOKS: readonly ListedLook[] = [
  ...looksOf("every installer", BOOT_LOOK, CLOUD_INIT_LOOK, CLOUD_INIT_LOG_LOOK),
  // install-packages' own probe rides in the kit's first look (installer-model.ts firstLook).
  ...looksOf("install-packages", { what: BOOT_LOOK.what, probes: [packagesProbe(wantedOf(["name"]))] }),
  // After each install: its record, with the inventory it is added to and dpkg's word on what was asked (one exec).
  ...looksOf(
    "every installer: apt work",
    DPKG_HEALTH_LOOK,
    LOCK_TABLE_LOOK,
    // Read as root right after apt-get update, in its exec: the two looks above and the candidates.
    afterUpdateLook({ health: true, names: ["NAME"] }),
    afterTransactionLook([INVENTORY_PROBE, verifyProbe(wantedOf(["name"]))]),
    INVENTORY_LOOK,
  ),
  ...looksOf("every installer: state absent", REMOVAL_LOOK),
  ...looksOf("install-docker, install-postgres: a repository", sourcesLook(["/etc/apt/keyrings/NAME.asc"], true)),
  ...looksOf("install-docker, install-postgres: grants", GRANTS_LOOK),
  ...looksOf("install-docker", { what: "the look at Docker", probes: dockerProbes(["NAME"]) }),
  ...looksOf("install-docker: daemon.json", DAEMON_FILE_LOOK, DAEMON_WRITE_LOOK, DAEMON_RELOAD_WRITE_LOOK),
  ...looksOf("install-docker: daemon.json reloaded", reloadLook("STATE", "CURSOR")),
  ...looksOf("install-postgres", ...POSTGRES_LOOKS),
  // dpkg's word on the distribution's server package rides in the kit's first look (installer-model.ts firstLook).
  ...looksOf("install-postgres", { what: BOOT_LOOK.what, probes: [SERVER_PACKAGE_PROBE] }),
  // Its installation look's probes, read as root in the look after installing the server package, and the
  // server look's for the cluster the package creates.
  ...looksOf("install-postgres: after installing the server", {
    what: TRANSACTION_LOOK.what,
    probes: [
      ...INSTALLATION_PROBES_AS_ROOT,
      ...(POSTGRES_LOOKS.find((l) => l.what === "the look at the running cluster")?.probes ?? []),
    ],
  }),
];
