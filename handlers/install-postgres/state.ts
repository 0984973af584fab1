// What install-postgres looks at before it decides anything, read in one place so that a check and a run
// see the same thing: a plan (plan.ts) is made from this and nothing else. Read-only throughout; a part
// a change has just learned (the package inventory after an install) is taken from it, not read again.

import { ensurePackages } from "../common/ensure-packages";
import { GRANTS_FILE, type Inventory, readGrants } from "../common/grants";
import { chooseCluster, chooseMajor, serverSource } from "./decisions";
import { type PostgresGrants, postgresSection } from "./grants";
import type { ServerState } from "./pg";
import { readServerState } from "./role-database";
import type { Run } from "./run";
import { inspectInstallation, type ServerInventory } from "./server";

export interface PostgresState {
  /** Server packages, clusters, their units, the legacy PGDG keyring. */
  installation: ServerInventory;
  /**
   * Check mode only, the server package missing: what apt says of installing it from the distribution
   * (failed: why it would not install; wouldInstall empty: something else provides it). A run learns it
   * by installing.
   */
  outlook?: { failed: { name: string; reason: string }[]; wouldInstall: string[] };
  /** The cluster's server, read only when the cluster runs (psql needs it). */
  server?: RunningServer;
}

export interface RunningServer {
  state: ServerState;
  /** The whole inventory file, and install-postgres' section of it (undefined: nothing recorded yet). */
  inventory: Inventory;
  recorded?: PostgresGrants;
}

/** Everything a plan needs; `known`: what a change already learned since the last look. */
export async function inspect(run: Run, check: boolean, known: Partial<PostgresState> = {}): Promise<PostgresState> {
  const { event, remote, os, progress } = run;
  const installation =
    known.installation ??
    (await progress.step("looking for PostgreSQL packages and clusters", () => inspectInstallation(remote), "inspect"));
  const major = chooseMajor(event, os, installation.packages);
  if (!installation.packages.some((p) => p.major === major))
    return { installation, outlook: check ? await packageOutlook(run, major) : undefined };
  const { cluster } = chooseCluster(installation, major);
  if (!cluster || installation.units[`postgresql@${cluster.major}-${cluster.name}`] !== "active")
    return { installation };
  const inventory = await progress.step(`reading ${GRANTS_FILE}`, () => readGrants(remote), "grants");
  const recorded = postgresSection(inventory);
  const state = await readServerState(run, cluster.port, recorded?.roles[`${cluster.major}/${cluster.name}`] ?? []);
  return { installation, server: { state, inventory, recorded } };
}

/**
 * apt's view of installing the server package, without fetching anything. PGDG's packages are not in the
 * lists before its source is added, so they are not looked for; a check's Apt runs no update, it only
 * looks at dpkg's health (a repair is a foreseen change).
 */
async function packageOutlook(run: Run, major: string): Promise<PostgresState["outlook"]> {
  const { event, apt, os } = run;
  const { own, name } = serverSource(os, major);
  if (!own) {
    await apt.update();
    return { failed: [], wouldInstall: [name] };
  }
  const outcome = await ensurePackages(apt, [name], {
    update: event.update,
    cacheValidSec: event.cache_valid_sec,
    check: true,
  });
  return { failed: outcome.failed, wouldInstall: outcome.wouldInstall };
}
