// install-postgres: a PostgreSQL server with one application database and role, Ansible
// postgresql_user/postgresql_db style: look at the state first, change only what differs, report what
// changed, and prove the result by logging in as the role over TCP.
// The event's keys, rules and defaults are in definition.ts; the result is the common shape
// (handler-kit.ts) plus the server's own fields. Phases, each a function below: server package ->
// cluster running -> role and database -> configuration files -> restart or reload -> TCP login.
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

import { GRANTS_FILE, readGrants } from "../common/grants";
import { defineHandler, type InstallerReport, type InstallerResult, runHandler } from "../common/handler-kit";
import { applyConfiguration, writeConfiguration } from "./configuration";
import { chooseMajor, planRoleAndDatabase, registerPasswordForms, requireSsl } from "./decisions";
import { postgresDefinition } from "./definition";
import { planRoles, postgresSection, revokeRoles, saveGrants, updatedSection } from "./grants";
import { type Cluster, clusterUnit, DROPIN_NAME, distributionMajor, parsePsqlJson, pickCluster, type ServerState, shortServerVersion, verifyHost } from "./pg";
import { ensurePgdgRepository, pgdgKeyUrl } from "./pgdg";
import { startFixingDropIn } from "./recovery";
import type { Run } from "./run";
import { scramSecret } from "./scram";
import { inspectInstallation, installPackages, psql, psqlJson, type ServerInventory, tcpLogin } from "./server";
import { applySql, inspectSql, planIsEmpty } from "./sql";

export { chooseMajor, planRoleAndDatabase };

export interface InstallPostgresReport extends InstallerReport {
  /** The running server's version, e.g. "15.20". */
  pg_version: string;
  pg_major: string;
  /** Where the server package came from in this run. */
  installed_from: "already installed" | "distribution" | "pgdg";
  /** "15/main" */
  cluster: string;
  port: number;
  db_name: string;
  db_user: string;
  listen_addresses: string;
  allow_remote: boolean;
  /** The networks pg_hba.conf admits for the role (empty without allow_remote). */
  allowed_cidrs: string[];
  /** The server was restarted (listen_addresses changed). */
  restarted: boolean;
  /** The configuration was reloaded (pg_hba.conf changed, no restart needed). */
  reloaded: boolean;
  /** The TCP login that proved it works. */
  verified: { host: string; port: number; user: string; database: string };
  /** Grants this run took back: pg_hba.conf entries and roles' LOGIN that the inventory recorded and the settings no longer ask for. */
  revoked: string[];
}

// ---------------------------------------------------------------------------------------------------
// 1. The server package: look, install only when missing.

async function ensureServer(run: Run): Promise<{ found: ServerInventory; major: string; installedFrom: InstallPostgresReport["installed_from"] }> {
  const { event, remote, os, progress } = run;
  const found = await progress.step("looking for PostgreSQL packages and clusters", () => inspectInstallation(remote), "inspect");
  const major = chooseMajor(event, os, found.packages);
  if (found.packages.some((p) => p.major === major)) return { found, major, installedFrom: "already installed" };

  const own = major === distributionMajor(os);
  progress.info(`PostgreSQL ${major} is not installed; installing it from ${own ? `${os.id} ${os.codename} (postgresql)` : `PGDG (${event.repo_url})`}`);
  // As install-packages: refresh the lists first unless told not to or they are fresh enough; a
  // repository just added is read whatever the policy says.
  let policy = { update: event.update, cacheValidSec: event.cache_valid_sec };
  if (!own && (await ensurePgdg(run, policy))) policy = { update: true, cacheValidSec: undefined };
  const name = own ? "postgresql" : `postgresql-${major}`;
  await installPackages(
    run.apt,
    [name],
    own ? `PostgreSQL ${major} from ${os.id} ${os.codename}` : `PostgreSQL ${major} from ${event.repo_url} ${os.codename}-pgdg`,
    policy,
  );
  const after = await inspectInstallation(remote);
  const pkg = after.packages.find((p) => p.major === major);
  if (!pkg) {
    throw new Error(
      `apt-get installed ${name} but postgresql-${major} is still not installed (installed: ${after.packages.map((p) => `postgresql-${p.major}`).join(", ") || "none"}); ` +
        (own ? `another repository on the VM (PGDG?) provides a newer "postgresql": set pg_version to the major you want` : "check the repository on the VM"),
    );
  }
  run.changes.push(`installed postgresql-${major} ${pkg.version}`);
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
        { progress, ensureCurl: () => installPackages(run.apt, ["curl", "ca-certificates"], "curl for the PGDG key", policy) },
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
  let cluster = pickCluster(found.clusters, major);
  let units = found.units;
  if (!cluster) {
    // The package creates "main" unless createcluster.conf says otherwise, or it was dropped since.
    await progress.step(
      `creating cluster ${major}/main`,
      () => remote.run(`pg_createcluster ${major} main`, { sudo: true, label: `pg_createcluster ${major} main`, timeoutMs: 300_000, mutates: true }),
      "cluster",
    );
    run.changes.push(`cluster ${major}/main created`);
    const again = await inspectInstallation(remote);
    cluster = pickCluster(again.clusters, major);
    units = again.units;
    if (!cluster) throw new Error(`pg_createcluster ${major} main succeeded but pg_lsclusters does not list the cluster on the VM`);
  }
  const unit = clusterUnit(cluster);
  const active = units[unit] ?? "unknown";
  if (active !== "active") {
    progress.info(`${unit} is ${active}; starting it`);
    const c = cluster;
    await progress.step(`systemctl start ${unit}`, () => startFixingDropIn(run, c), "start");
    run.changes.push(`cluster ${cluster.major}/${cluster.name} started (was ${active})`);
  }
  return cluster;
}

// ---------------------------------------------------------------------------------------------------
// 3. Role, password, database.

/** `recordedRoles`: the roles the inventory lists for this cluster. grantedLogin: this run gave the role LOGIN. */
async function ensureRoleAndDatabase(run: Run, port: number, recordedRoles: string[]): Promise<{ state: ServerState; grantedLogin: boolean }> {
  const { event, remote, progress, secrets } = run;
  const db = event.db_name;
  const user = event.db_user;
  const state = await progress.step(
    "reading the role, the database and the settings",
    () => psqlJson<ServerState>(remote, port, inspectSql(db, user, DROPIN_NAME, recordedRoles), "psql (reading the role, the database and the settings)"),
    "inspect_sql",
  );
  requireSsl(event, state);
  const { plan, changes } = planRoleAndDatabase(state, event, (pw) => {
    const secret = scramSecret(pw);
    secrets.add(secret, "db_password_scram");
    return secret;
  });
  const grantedLogin = plan.createRole || plan.grantLogin;
  if (planIsEmpty(plan)) {
    progress.info(`role ${user} (password unchanged) and database ${db} (owner ${user}) are as wanted`);
    return { state, grantedLogin };
  }
  await progress.step(changes.join("; "), () => psql(remote, port, applySql(plan, db, user), "psql (role and database)", { mutates: true }), "role_db");
  run.changes.push(...changes);
  return { state, grantedLogin };
}

// ---------------------------------------------------------------------------------------------------
// 6. Proof: the role logs in over TCP with the password.

async function verifyLogin(run: Run, port: number, listen: string, hbaFile: string, reloaded: boolean): Promise<{ host: string; serverVersion: string }> {
  const { event, remote, progress } = run;
  const { db_name: db, db_user: user } = event;
  const host = verifyHost(listen);
  const target = { host, port, db, user, password: event.db_password };
  const login = await progress.step(
    `logging in as ${user} to ${db} over TCP (${host}:${port})`,
    async () => {
      const first = await tcpLogin(remote, target);
      // A reload is a signal the postmaster handles a moment later: allow it that moment once.
      if (first.code === 0 || !reloaded) return first;
      await new Promise((res) => setTimeout(res, 1000));
      return tcpLogin(remote, target);
    },
    "verify_login",
  );
  if (login.code !== 0) {
    const why = login.stderr.trim().split("\n").slice(-3).join(" ") || `psql exit ${login.code}`;
    throw new Error(`${user} could not log in to ${db} over TCP at ${host}:${port}: ${why} (${loginHint(why, host, port, hbaFile)})`);
  }
  const who = parsePsqlJson<{ user: string; database: string; server_version: string }>(login.stdout, "the TCP login check");
  if (who.user !== user || who.database !== db) throw new Error(`the TCP login check ran as ${who.user} in ${who.database}, not ${user} in ${db}`);
  return { host, serverVersion: shortServerVersion(who.server_version) };
}

/** What to look at when the login check fails, from psql's own words. */
function loginHint(why: string, host: string, port: number, hbaFile: string): string {
  const loopback = host === "127.0.0.1" || host === "::1";
  if (/no pg_hba\.conf entry/.test(why)) {
    return loopback
      ? `pg_hba.conf (${hbaFile}) has no host rule for ${host}: the stock rules for 127.0.0.1/32 and ::1/128 were removed? Put one back`
      : `pg_hba.conf (${hbaFile}) has no host rule for ${host}: add a network covering it to allowed_cidrs (with allow_remote), or add localhost to listen_addresses`;
  }
  if (/password authentication failed/.test(why)) return "the password stored for the role does not match (was it changed while the job ran?)";
  return `is the server listening on ${host}:${port}?`;
}

// ---------------------------------------------------------------------------------------------------
// The installer.

export const handler = defineHandler({
  definition: postgresDefinition,
  async run({ event, remote, apt, os, progress, secrets }): Promise<InstallPostgresReport> {
    registerPasswordForms(secrets, event.db_password);
    const run: Run = { event, remote, apt, os, progress, secrets, changes: [], warnings: [], revoked: [] };
    const { found, major, installedFrom } = await ensureServer(run);
    const cluster = await ensureCluster(run, found, major);
    const port = cluster.port;
    const name = `${cluster.major}/${cluster.name}`;
    const inventory = await progress.step(`reading ${GRANTS_FILE}`, () => readGrants(remote), "grants");
    const recorded = postgresSection(inventory);
    const { state, grantedLogin } = await ensureRoleAndDatabase(run, port, recorded?.roles[name] ?? []);
    const roles = planRoles(recorded?.roles[name] ?? [], event.db_user, grantedLogin, state.recorded_roles ?? {});
    await revokeRoles(run, port, roles.revoke);
    const change = await writeConfiguration(run, state, port, recorded ? (recorded.hba[state.hba_file] ?? []) : undefined);
    const { restarted, reloaded } = await applyConfiguration(run, cluster, state, change);
    await saveGrants(run, inventory, recorded, updatedSection(recorded, state.hba_file, change.owned, name, roles.record));
    const { host, serverVersion } = await verifyLogin(run, port, change.listen, state.hba_file, reloaded);

    const n = run.changes.length;
    const summary = n
      ? `PostgreSQL ${serverVersion} (${name}, port ${port}): ${n} change${n === 1 ? "" : "s"}${restarted ? ", restarted" : reloaded ? ", reloaded" : ""}`
      : `nothing to do: PostgreSQL ${serverVersion} (${name}, port ${port}), role ${event.db_user} and database ${event.db_name} are as wanted`;
    progress.info(summary);
    return {
      status: "ok",
      changes: run.changes,
      summary,
      warnings: run.warnings,
      pg_version: serverVersion,
      pg_major: major,
      installed_from: installedFrom,
      cluster: name,
      port,
      db_name: event.db_name,
      db_user: event.db_user,
      listen_addresses: change.listen,
      allow_remote: event.allow_remote,
      allowed_cidrs: event.allow_remote ? event.allowed_cidrs : [],
      restarted,
      reloaded,
      verified: { host, port, user: event.db_user, database: event.db_name },
      revoked: run.revoked,
    };
  },
});

/** The job's entrypoint (handler.install). */
export async function install(event: unknown): Promise<InstallerResult<InstallPostgresReport>> {
  return runHandler(handler, event);
}
