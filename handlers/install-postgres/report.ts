// install-postgres' result: the common shape (installer-result.ts) plus the server's own fields, made the same
// way by a real run and by a check.

import type { InstallerReport } from "../common/installer-result";
import type { PostgresEvent } from "./decisions";

export interface InstallPostgresReport extends InstallerReport {
  /**
   * The running server's version, e.g. "15.20". In a check that finds no running server (not installed,
   * no cluster, stopped): "".
   */
  pg_version: string;
  pg_major: string;
  /**
   * Where the server package came from in this run. In a check: where a real run would take it from
   * ("distribution" or "pgdg" when it is missing).
   */
  installed_from: "already installed" | "distribution" | "pgdg";
  /** "15/main" (in a check before the cluster exists: the one a real run would create or the package makes). */
  cluster: string;
  /** The cluster's port; in a check before the cluster exists: 5432, the port a first cluster gets. */
  port: number;
  db_name: string;
  db_user: string;
  /** As applied (in a check: as a real run would apply it). */
  listen_addresses: string;
  allow_remote: boolean;
  /** The networks pg_hba.conf admits for the role (empty without allow_remote). */
  allowed_cidrs: string[];
  /**
   * The server was restarted (listen_addresses, a postmaster parameter or shared_preload_libraries
   * changed). Always false in a check (would_change says it).
   */
  restarted: boolean;
  /** The configuration was reloaded (pg_hba.conf or a reloadable parameter, no restart). Always false in a check. */
  reloaded: boolean;
  /**
   * The TCP login that proved it works: SCRAM-SHA-256 to the cluster's own postmaster, the server's
   * signature verified (verify.ts). null in a check that did not log in (it does only when nothing would
   * change, as until then the login cannot be expected to work) and when the VM's sshd opens no TCP
   * channels (a warning says so).
   */
  verified: { host: string; port: number; user: string; database: string; auth: "scram-sha-256" } | null;
  /**
   * Grants this run took back (in a check: would take back): pg_hba.conf entries and roles' LOGIN that
   * the inventory recorded and the settings no longer ask for.
   */
  revoked: string[];
}

/** The server's facts a phase found; the rest of the report comes from the run and its event. */
export interface ServerFacts {
  serverVersion: string;
  major: string;
  installedFrom: InstallPostgresReport["installed_from"];
  cluster: string;
  port: number;
  listen: string;
  restarted: boolean;
  reloaded: boolean;
  verifiedHost?: string;
}

/** What a run did or a check foresaw, in the result's words. */
export interface ReportLines {
  changes: readonly string[];
  warnings: string[];
  revoked: string[];
}

/** The summary line: what changed, or that nothing needed to. */
function summarize(event: PostgresEvent, changes: readonly string[], f: ServerFacts): string {
  const n = changes.length;
  const server = `PostgreSQL ${f.serverVersion || f.major} (${f.cluster}, port ${f.port})`;
  return n
    ? `${server}: ${n} change${n === 1 ? "" : "s"}${f.restarted ? ", restarted" : f.reloaded ? ", reloaded" : ""}`
    : `nothing to do: ${server}, role ${event.db_user} and database ${event.db_name} are as wanted`;
}

/** The report of a run or a check, from what it found and did (or would do); the kit adds `changes`. */
export function postgresReport(
  event: PostgresEvent,
  f: ServerFacts,
  lines: ReportLines,
): Omit<InstallPostgresReport, "changes"> {
  return {
    status: "ok",
    summary: summarize(event, lines.changes, f),
    warnings: lines.warnings,
    pg_version: f.serverVersion,
    pg_major: f.major,
    installed_from: f.installedFrom,
    cluster: f.cluster,
    port: f.port,
    db_name: event.db_name,
    db_user: event.db_user,
    listen_addresses: f.listen,
    allow_remote: event.allow_remote,
    allowed_cidrs: event.allow_remote ? event.allowed_cidrs : [],
    restarted: f.restarted,
    reloaded: f.reloaded,
    verified:
      f.verifiedHost === undefined
        ? null
        : { host: f.verifiedHost, port: f.port, user: event.db_user, database: event.db_name, auth: "scram-sha-256" },
    revoked: lines.revoked,
  };
}
