// What install-postgres looks at before it decides anything, read in one place so that a check and a run
// see the same thing: a plan (plan.ts) is made from this and nothing else. Read-only (the kit's look-only
// remote); a part a change has just read (the package inventory after an install) is not read again.

import { listenHostNames } from "../../lib/shared/names";
import type { Inventory } from "../common/grants";
import type { Applied, ApplyOutcome, InspectContext } from "../common/installer-model";
import type { OsInfo } from "../common/os-release";
import { requireSystemdFrom } from "../common/systemd";
import type { Fact } from "../common/vm-facts";
import type { PostgresOutcome } from "./apply";
import { chooseCluster, chooseMajor, type PostgresEvent, registerPasswordForms } from "./decisions";
import type { ExtensionFacts } from "./extensions";
import { readExtensions, recordedExtensions } from "./extensions-server";
import { type PostgresGrants, postgresSection } from "./grants";
import type { ParameterFacts } from "./parameters";
import { readParameters } from "./parameters-server";
import { type Cluster, clusterUnit, type ServerState } from "./pg";
import type { Run } from "./run";
import {
  type InstallationSeen,
  inspectInstallation,
  installationFromFirstLook,
  installationLook,
  lookAtInstallation,
  SERVER_PACKAGE_PROBE,
  type ServerInventory,
} from "./server";
import { type ListenerSeen, lookAtServer, type ServerSeen, serverLooksProbe, serverSeenFrom } from "./server-look";
import type { TlsSeen } from "./tls";
import { refuseTlsSettings } from "./tls-problems";
import { readTls } from "./tls-remote";

export interface PostgresState {
  os: OsInfo;
  /**
   * The host names of listen_addresses with the addresses the VM resolved them to, all its own
   * (addresses.ts): looked up once, before anything changes, and used for the login.
   */
  resolved: Record<string, string[]>;
  /** Server packages, clusters, their units, the legacy PGDG keyring. */
  installation: ServerInventory;
  /** The cluster's server, read only when the cluster runs (psql needs it). */
  server?: RunningServer;
  /** Round 0, from the kit's first look: dpkg's word on the distribution's postgresql (SERVER_PACKAGE_PROBE). */
  serverPackage?: Fact;
}

export interface RunningServer {
  state: ServerState;
  /** The whole inventory file, and install-postgres' section of it (undefined: nothing recorded yet). */
  inventory: Inventory;
  recorded?: PostgresGrants;
  /** pg_settings for the names `parameters` and the drop-in mention (undefined: none). */
  parameters?: ParameterFacts;
  /** What the server has of the extensions wanted or recorded (undefined: none). */
  extensions?: ExtensionFacts;
  /** The server certificate, and with tls "debian" what is left of vm-install's. */
  tls?: TlsSeen;
  /** Who listened on the cluster's port when this was read: the login check's proof when nothing changed since. */
  listener?: ListenerSeen;
}

const LOOKING = "looking for PostgreSQL packages and clusters";

/** Everything a plan needs; after a change, what it already read is taken from its outcome. */
export async function inspect(ctx: InspectContext<PostgresEvent, PostgresState>): Promise<PostgresState> {
  const { event, remote, os, progress, secrets, previous } = ctx;
  let first: InstallationSeen | undefined;
  if (!previous) {
    registerPasswordForms(secrets, event.db_password);
    // The kit registers the definition's secrets; these two come from a file and a variable of their own.
    secrets.add(event.tls_ca_key || undefined, "tls_ca_key");
    secrets.add(event.tls_key || undefined, "tls_key");
    refuseTlsSettings(event, Date.now());
    // Before anything changes, in a check too: a VM without systemd, a listen_addresses name not the VM's own.
    const names = listenHostNames(event.listen_addresses);
    // On a VM whose first boot was over, the kit's first look read it already (postgresFirstLook).
    first =
      (ctx.firstLook && installationFromFirstLook(ctx.firstLook, names)) ??
      (await progress.step(LOOKING, () => lookAtInstallation(remote, names), "inspect"));
    requireSystemdFrom(first.systemd, "PostgreSQL");
  }
  const resolved = first?.resolved ?? previous?.state.resolved ?? {};
  const installation =
    first?.installation ??
    learned(previous?.applied ?? []) ??
    (await progress.step(LOOKING, () => inspectInstallation(remote), "inspect"));
  const serverPackage = first ? ctx.firstLook?.(SERVER_PACKAGE_PROBE.name) : undefined;
  const seen = { os, resolved, installation, ...(serverPackage ? { serverPackage } : {}) };
  const major = chooseMajor(event, os, installation.packages);
  if (!installation.packages.some((p) => p.major === major)) return seen;
  const { cluster } = chooseCluster(installation, major);
  if (!cluster || installation.units[clusterUnit(cluster)] !== "active") return seen;
  const { inventory, state, listener } = await (readWithInstall(ctx, previous?.applied ?? [], cluster) ??
    lookAtServer(ctx, cluster, ctx.firstLook));
  const recorded = postgresSection(inventory);
  const parameters = await readParameters(ctx, cluster, state);
  const name = `${cluster.major}/${cluster.name}`;
  const ext = await readExtensions(ctx, cluster.port, state, recordedExtensions(recorded, name, ctx.event.db_name));
  // tls "debian" looks at the certificate only when the state query found vm-install's files left over.
  const tls =
    event.tls !== "debian" || state.tls_left?.length ? await readTls(ctx, cluster.port, state.config_file) : undefined;
  return { ...seen, server: { state, inventory, recorded, parameters, extensions: ext, tls, listener } };
}

/**
 * The installation look's probes and the running clusters' server looks, read in the kit's first look
 * (installer-model.ts firstLook); none when the TLS settings are refused, which inspect then says before
 * any look of install-postgres' own.
 */
export function postgresFirstLook(event: PostgresEvent) {
  try {
    refuseTlsSettings(event, Date.now());
  } catch {
    return [];
  }
  return [
    ...installationLook(listenHostNames(event.listen_addresses)).probes,
    SERVER_PACKAGE_PROBE,
    serverLooksProbe(event),
  ];
}

/**
 * The package inventory the last change of a round read or updated (a start only marks its unit active),
 * with the served PGDG key file gone when the round rebuilt it; undefined: none did, so it is read.
 */
function learned(applied: readonly Applied<PostgresEvent, ApplyOutcome>[]): ServerInventory | undefined {
  const found = applied.flatMap((a) => (a.outcome as PostgresOutcome | undefined)?.installation ?? []).pop();
  const rebuilt = applied.some((a) => a.change.kind === "pgdg-keyring");
  return found && rebuilt ? { ...found, legacyPgdgKeyring: undefined } : found;
}

/**
 * The server look read with the install's record (apply.ts installServer), when the install was the last
 * change applied and the cluster it predicted is the one found; undefined: looked at now.
 */
function readWithInstall(
  run: Run,
  applied: readonly Applied<PostgresEvent, ApplyOutcome>[],
  cluster: Cluster,
): Promise<ServerSeen> | undefined {
  const read = (applied.at(-1)?.outcome as PostgresOutcome | undefined)?.server;
  const same = (a: Cluster, b: Cluster) => a.major === b.major && a.name === b.name && a.port === b.port;
  if (!read || !same(read.cluster, cluster)) return undefined;
  run.progress.info("the grants inventory, the role, the database and the settings: read with the install's record");
  return serverSeenFrom(run, cluster, read.answer);
}
