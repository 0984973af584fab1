// install-postgres in check mode (the event's check: true; handlers/common/check-mode.ts): the phases of
// a real run (handler.ts) look and decide as they do there, with the same code, and report the lines a
// real run would, without making the change. Nothing on the VM changes: no apt-get, no PGDG key or
// source, no cluster created or started, no SQL but the read-only state query, no file written, no
// restart or reload, no inventory written.
//
// How much can be inspected depends on how far the server is. Without its package or its cluster
// there is nothing to ask, so what follows is what a real run always does to a new cluster (Debian's
// and Ubuntu's defaults: listen_addresses 'localhost', no role, database or pg_hba line of ours). A
// stopped cluster cannot be asked either, and a warning says what was left out. A running one is read
// with a real run's own query. The TCP login check runs only when nothing would change: before a
// change is made, the login cannot be expected to work; after, a failure is the same error a real
// run would end with.

import { checkSummary } from "../common/check-mode";
import { ensurePackages } from "../common/ensure-packages";
import { GRANTS_FILE, readGrants } from "../common/grants";
import { type ConfigPlan, planConfiguration, reportConfiguration, warnUnapplied } from "./configuration";
import {
  chooseCluster,
  chooseMajor,
  clusterCreatedLine,
  clusterStartedLine,
  installedLine,
  serverSource,
} from "./decisions";
import { planRoles, postgresSection, reportRevokedRoles, reportSkippedRoles } from "./grants";
import { type Cluster, clusterUnit, normalizeListen, type ServerState, shortServerVersion } from "./pg";
import { LEGACY_PGDG_KEYRING, pgdgKeyUrl } from "./pgdg";
import { type InstallPostgresReport, postgresReport, type ServerFacts } from "./report";
import { planRoleDatabase, readServerState } from "./role-database";
import { type Run, warn } from "./run";
import { inspectInstallation } from "./server";
import { verifyLogin } from "./verify";

/** The check: the report a real run would make, its `changes` being what it would change. */
export async function checkInstallation(run: Run): Promise<InstallPostgresReport> {
  const { event, remote, os, progress } = run;
  const found = await progress.step(
    "looking for PostgreSQL packages and clusters",
    () => inspectInstallation(remote),
    "inspect",
  );
  const major = chooseMajor(event, os, found.packages);
  if (!found.packages.some((p) => p.major === major)) {
    const installedFrom = await predictServerPackage(run, major);
    // The package creates the cluster "main" (postgresql-common's default), so a real run creates none.
    return finish(run, predictNewCluster(run, major, installedFrom, found.clusters));
  }
  if (found.legacyPgdgKeyring) run.changes.push(legacyPgdgLine(event.repo_url));
  const chosen = chooseCluster(found, major);
  for (const w of chosen.warnings) warn(run, w);
  const cluster = chosen.cluster;
  if (!cluster) {
    run.changes.push(clusterCreatedLine(major));
    return finish(run, predictNewCluster(run, major, "already installed", found.clusters));
  }
  const name = `${cluster.major}/${cluster.name}`;
  const unit = clusterUnit(cluster);
  const active = found.units[unit] ?? "unknown";
  if (active === "active") return finish(run, await checkRunning(run, cluster, major));

  run.changes.push(clusterStartedLine(name, active));
  warn(
    run,
    `${unit} is ${active}, so the role, the database and the configuration files could not be inspected (psql needs a running server): ` +
      "what a real run would change there is not listed. Run the job (it starts the cluster first), or start the cluster and check again",
  );
  const listen = normalizeListen(event.listen_addresses);
  return finish(run, {
    serverVersion: "",
    major,
    installedFrom: "already installed",
    cluster: name,
    port: cluster.port,
    listen,
    restarted: false,
    reloaded: false,
  });
}

/** A running cluster: read as a real run reads it, every decision made, none carried out. */
async function checkRunning(run: Run, cluster: Cluster, major: string): Promise<ServerFacts> {
  const { remote, progress } = run;
  const name = `${cluster.major}/${cluster.name}`;
  const port = cluster.port;
  const inventory = await progress.step(`reading ${GRANTS_FILE}`, () => readGrants(remote), "grants");
  const recorded = postgresSection(inventory);
  const recordedRoles = recorded?.roles[name] ?? [];
  const state = await readServerState(run, port, recordedRoles);
  const config = predictChanges(
    run,
    state,
    clusterUnit(cluster),
    recordedRoles,
    recorded ? (recorded.hba[state.hba_file] ?? []) : undefined,
  );
  const facts: ServerFacts = {
    serverVersion: shortServerVersion(state.server_version),
    major,
    installedFrom: "already installed",
    cluster: name,
    port,
    listen: config.listen,
    restarted: false,
    reloaded: false,
  };
  if (run.changes.length) return facts;
  const { host, serverVersion } = await verifyLogin(run, port, config.listen, state.hba_file, false);
  return { ...facts, serverVersion, verifiedHost: host };
}

/** The role/database, revocation and configuration lines `state` calls for, in a real run's order and words. */
function predictChanges(
  run: Run,
  state: ServerState,
  unit: string,
  recordedRoles: string[],
  recordedHba: string[] | undefined,
): ConfigPlan {
  const { changes, grantedLogin } = planRoleDatabase(run, state);
  run.changes.push(...changes);
  const roles = planRoles(recordedRoles, run.event.db_user, grantedLogin, state.recorded_roles ?? {});
  reportSkippedRoles(run, roles.skipped);
  reportRevokedRoles(run, roles.revoke);
  const config = planConfiguration(run.event, state, recordedHba);
  reportConfiguration(run, config);
  // A restart for listen_addresses would apply whatever else waits for one.
  warnUnapplied(run, unit, config.listenChanged ? [] : state.pending_restart, config.listen);
  return config;
}

/** A run sets PGDG up again when it finds the keyring an earlier version wrote: in a check's words. */
function legacyPgdgLine(repoUrl: string): string {
  return `PGDG repository: ${LEGACY_PGDG_KEYRING}, the key file an earlier version wrote as served (apt trusts every key in it), rebuilt from the verified key of ${repoUrl}`;
}

/**
 * The server package a real run would install, and the PGDG repository it would set up first for a
 * major the distribution does not ship. dpkg's health is looked at (a repair is a foreseen change) and
 * apt's lists are read as they are; nothing is fetched.
 */
async function predictServerPackage(run: Run, major: string): Promise<"distribution" | "pgdg"> {
  const { event, apt, os } = run;
  const { own, name } = serverSource(os, major);
  if (own) {
    const outcome = await ensurePackages(apt, [name], {
      update: event.update,
      cacheValidSec: event.cache_valid_sec,
      check: true,
    });
    for (const f of outcome.failed) warn(run, `${name} may fail to install: ${f.reason}`);
    if (!outcome.wouldInstall.length) {
      warn(
        run,
        `${name} is installed but postgresql-${major} is not: another repository (PGDG?) provides a newer "${name}"; set pg_version to the major you want`,
      );
    }
  } else {
    // PGDG's packages are not in the lists before its source is added, so they are not looked for there;
    // a check's Apt runs no update, it only looks at dpkg's health (a repair is a foreseen change).
    await apt.update();
    run.changes.push(
      `PGDG repository: ${event.repo_url} ${os.codename}-pgdg main set up where it differs (its key from ${pgdgKeyUrl(event.repo_url, event.repo_key_url)}, ` +
        "checked against repo_key_fingerprint; a check neither fetches the key nor reads the files it would write)",
    );
  }
  run.changes.push(installedLine(major));
  return own ? "distribution" : "pgdg";
}

/** A cluster as Debian's packaging creates it. Its stock pg_hba.conf lines are not needed: ours are appended. */
function newClusterState(major: string): ServerState {
  const dir = `/etc/postgresql/${major}/main`;
  return {
    server_version: "",
    hba_file: `${dir}/pg_hba.conf`,
    config_file: `${dir}/postgresql.conf`,
    listen_addresses: "localhost",
    pending_restart: [],
    role: null,
    database: null,
    hba_text: "",
    dropin_text: null,
    ssl: "on",
  };
}

/** What a real run does to the cluster `major`/main once it exists; `clusters`: the others, whose ports it will not take. */
function predictNewCluster(
  run: Run,
  major: string,
  installedFrom: ServerFacts["installedFrom"],
  clusters: Cluster[],
): ServerFacts {
  run.progress.info(
    `no cluster ${major}/main yet: what follows is predicted for a new one with Debian's defaults, not inspected`,
  );
  // pg_createcluster takes the first free port from 5432.
  let port = 5432;
  while (clusters.some((c) => c.port === port)) port++;
  const config = predictChanges(run, newClusterState(major), `postgresql@${major}-main`, [], undefined);
  return {
    serverVersion: "",
    major,
    installedFrom,
    cluster: `${major}/main`,
    port,
    listen: config.listen,
    restarted: false,
    reloaded: false,
  };
}

function finish(run: Run, facts: ServerFacts): InstallPostgresReport {
  const report = postgresReport(run, facts);
  run.progress.info(checkSummary(run.changes, report.summary));
  return report;
}
