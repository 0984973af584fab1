// install-postgres: a PostgreSQL server with one application database and role, Ansible
// postgresql_user/postgresql_db style: look at the state first, change only what differs, report what
// changed, and prove the result by logging in as the role over TCP.
// The event's keys, rules and defaults are in definition.ts; the result is the common shape
// (handler-kit.ts) plus the server's own fields (report.ts). Phases: server package -> cluster running
// (below) -> role and database (role-database.ts) -> configuration files -> restart or reload
// (configuration.ts) -> TCP login (verify.ts). In check mode (the event's check: true) check.ts runs
// the same inspections and decisions and reports what these phases would change, changing nothing.
//
// Which major: pg_version when given. Without it, the distribution's own (14 on Ubuntu 22.04, 15 on
// Debian 12) when that is installed or nothing is; a VM that already runs only another major keeps it
// (a second server beside it is never what an omitted version means).
// Where from: the distribution's `postgresql` for its own major, PGDG (`<repo_url> <codename>-pgdg main`,
// key in /etc/apt/keyrings) for any other. Installed only when postgresql-<major> is missing.
//
// The password never travels on a command line or in an environment variable, and never in clear to
// the server when it is ASCII: the job computes the SCRAM-SHA-256 secret itself (scram.ts) and sends
// that on psql's stdin, in a session that keeps its statements out of the log (sql.ts QUIET_SESSION).
// The TCP login check reads it from a 0600 pgpass file in memory (/dev/shm), unlinked before psql
// starts (server.ts tcpLogin), so a dropped connection cannot leave it behind. The value is registered as a secret, so no output, error or progress line can carry it.
//
// Configuration: listen_addresses goes into a conf.d drop-in (Debian's postgresql.conf includes
// conf.d last) and needs a restart; pg_hba.conf lines need only a reload. Both files are checked by
// the server itself (pg_file_settings, pg_hba_file_rules) before it is restarted or reloaded, so a
// broken file is put back instead of leaving a server that will not start.

import { command } from "../../shared/shell-quote";
import { GRANTS_FILE, readGrants } from "../common/grants";
import { defineHandler, runHandler } from "../common/handler-kit";
import type { InstallerResult } from "../common/installer-result";
import { requireSystemd } from "../common/systemd";
import { resolveListenNames } from "./addresses";
import { checkInstallation } from "./check";
import { applyConfiguration, writeConfiguration } from "./configuration";
import {
  chooseCluster,
  chooseMajor,
  clusterCreatedLine,
  clusterStartedLine,
  installedLine,
  planRoleAndDatabase,
  registerPasswordForms,
  serverSource,
} from "./decisions";
import { postgresDefinition } from "./definition";
import { planRoles, postgresSection, reportSkippedRoles, revokeRoles, saveGrants, updatedSection } from "./grants";
import { type Cluster, clusterUnit } from "./pg";
import { ensurePgdgRepository, LEGACY_PGDG_KEYRING, pgdgKeyUrl } from "./pgdg";
import { startFixingDropIn } from "./recovery";
import { type InstallPostgresReport, postgresReport } from "./report";
import { ensureRoleAndDatabase } from "./role-database";
import { type Run, warn } from "./run";
import { inspectInstallation, installPackages, type ServerInventory } from "./server";
import { verifyLogin } from "./verify";

export type { InstallPostgresReport };
export { chooseMajor, planRoleAndDatabase };

// ---------------------------------------------------------------------------------------------------
// 1. The server package: look, install only when missing.

async function ensureServer(
  run: Run,
): Promise<{ found: ServerInventory; major: string; installedFrom: InstallPostgresReport["installed_from"] }> {
  const { event, remote, os, progress } = run;
  const found = await progress.step(
    "looking for PostgreSQL packages and clusters",
    () => inspectInstallation(remote),
    "inspect",
  );
  const major = chooseMajor(event, os, found.packages);
  if (found.packages.some((p) => p.major === major)) {
    if (found.legacyPgdgKeyring) {
      // apt trusts every key in the served file an earlier version kept: rebuilt now, not when PGDG is next needed.
      progress.info(
        `${LEGACY_PGDG_KEYRING} is the key file an earlier version wrote as served: setting PGDG up again from the verified key`,
      );
      await ensurePgdg(run, { update: event.update, cacheValidSec: event.cache_valid_sec });
    }
    return { found, major, installedFrom: "already installed" };
  }

  const { own, name } = serverSource(os, major);
  progress.info(
    `PostgreSQL ${major} is not installed; installing it from ${own ? `${os.id} ${os.codename} (postgresql)` : `PGDG (${event.repo_url})`}`,
  );
  // As install-packages: refresh the lists first unless told not to or they are fresh enough; a
  // repository just added is read whatever the policy says.
  let policy = { update: event.update, cacheValidSec: event.cache_valid_sec };
  if (!own && (await ensurePgdg(run, policy))) policy = { update: true, cacheValidSec: undefined };
  await installPackages(
    run.apt,
    [name],
    own
      ? `PostgreSQL ${major} from ${os.id} ${os.codename}`
      : `PostgreSQL ${major} from ${event.repo_url} ${os.codename}-pgdg`,
    policy,
  );
  const after = await inspectInstallation(remote);
  const pkg = after.packages.find((p) => p.major === major);
  if (!pkg) {
    throw new Error(
      `apt-get installed ${name} but postgresql-${major} is still not installed (installed: ${after.packages.map((p) => `postgresql-${p.major}`).join(", ") || "none"}); ` +
        (own
          ? `another repository on the VM (PGDG?) provides a newer "postgresql": set pg_version to the major you want`
          : "check the repository on the VM"),
    );
  }
  run.changes.push(installedLine(major, pkg.version));
  return { found: after, major, installedFrom: own ? "distribution" : "pgdg" };
}

/** PGDG's key and source in place; true when that changed an apt source. */
async function ensurePgdg(run: Run, policy: { update: boolean; cacheValidSec?: number }): Promise<boolean> {
  const { event, remote, os, progress } = run;
  const repo = await progress.step(
    `PGDG repository ${os.codename}-pgdg`,
    () =>
      ensurePgdgRepository(
        remote,
        os,
        {
          repoUrl: event.repo_url,
          keyUrl: pgdgKeyUrl(event.repo_url, event.repo_key_url),
          fingerprints: event.repo_key_fingerprint,
        },
        {
          progress,
          ensureCurl: () => installPackages(run.apt, ["curl", "ca-certificates"], "curl for the PGDG key", policy),
        },
      ),
    "pgdg",
  );
  run.changes.push(...repo.changes.map((c) => `PGDG repository: ${c}`));
  return repo.changes.length > 0;
}

// ---------------------------------------------------------------------------------------------------
// 2. Its cluster, running.

async function ensureCluster(run: Run, found: ServerInventory, major: string): Promise<Cluster> {
  const { remote, progress } = run;
  // Only clusters whose every field passed its rule; see chooseCluster for what is refused or skipped.
  const chosen = chooseCluster(found, major);
  for (const w of chosen.warnings) warn(run, w);
  let cluster = chosen.cluster;
  let units = found.units;
  if (!cluster) {
    // The package creates "main" unless createcluster.conf says otherwise, or it was dropped since.
    await progress.step(
      `creating cluster ${major}/main`,
      () =>
        remote.run(command("pg_createcluster", major, "main"), {
          sudo: true,
          label: `pg_createcluster ${major} main`,
          timeoutMs: 300_000,
          mutates: true,
        }),
      "cluster",
    );
    run.changes.push(clusterCreatedLine(major));
    const again = await inspectInstallation(remote);
    cluster = chooseCluster(again, major).cluster;
    units = again.units;
    if (!cluster)
      throw new Error(`pg_createcluster ${major} main succeeded but pg_lsclusters does not list the cluster on the VM`);
  }
  const unit = clusterUnit(cluster);
  const active = units[unit] ?? "unknown";
  if (active !== "active") {
    progress.info(`${unit} is ${active}; starting it`);
    const c = cluster;
    await progress.step(`systemctl start ${unit}`, () => startFixingDropIn(run, c), "start");
    run.changes.push(clusterStartedLine(`${cluster.major}/${cluster.name}`, active));
  }
  return cluster;
}

// ---------------------------------------------------------------------------------------------------
// The installer.

export const handler = defineHandler({
  definition: postgresDefinition,
  async run({ event, check, remote, apt, os, progress, secrets }): Promise<InstallPostgresReport> {
    registerPasswordForms(secrets, event.db_password);
    await requireSystemd(remote, "PostgreSQL");
    const run: Run = {
      event,
      remote,
      apt,
      os,
      progress,
      secrets,
      changes: [],
      warnings: [],
      revoked: [],
      resolved: {},
    };
    // Before anything changes, in a check too: a listen_addresses name that is not the VM's own.
    run.resolved = await resolveListenNames(remote, event.listen_addresses);
    if (check) return checkInstallation(run);
    const { found, major, installedFrom } = await ensureServer(run);
    const cluster = await ensureCluster(run, found, major);
    const port = cluster.port;
    const name = `${cluster.major}/${cluster.name}`;
    const inventory = await progress.step(`reading ${GRANTS_FILE}`, () => readGrants(remote), "grants");
    const recorded = postgresSection(inventory);
    const { state, grantedLogin } = await ensureRoleAndDatabase(run, port, recorded?.roles[name] ?? []);
    const roles = planRoles(recorded?.roles[name] ?? [], event.db_user, grantedLogin, state.recorded_roles ?? {});
    reportSkippedRoles(run, roles.skipped);
    await revokeRoles(run, port, roles.revoke);
    const change = await writeConfiguration(
      run,
      state,
      port,
      recorded ? (recorded.hba[state.hba_file] ?? []) : undefined,
    );
    const { restarted, reloaded } = await applyConfiguration(run, cluster, state, change);
    await saveGrants(
      run,
      inventory,
      recorded,
      updatedSection(recorded, state.hba_file, change.owned, name, roles.record),
    );
    const { host, serverVersion } = await verifyLogin(run, port, change.listen, state.hba_file, reloaded);

    const facts = {
      serverVersion,
      major,
      installedFrom,
      cluster: name,
      port,
      listen: change.listen,
      restarted,
      reloaded,
      verifiedHost: host,
    };
    const report = postgresReport(run, facts);
    progress.info(report.summary);
    return report;
  },
});

/** The job's entrypoint (handler.install). */
export async function install(event: unknown): Promise<InstallerResult<InstallPostgresReport>> {
  return runHandler(handler, event);
}
