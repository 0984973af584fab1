// What a run decides from what it found: which major, which role/database changes, which password forms
// to scrub. Pure, so the tests drive them directly.

import { isSafeAbsolutePath } from "../../lib/shared/names";
import type { SecretScrubber } from "../../lib/shared/secrets";
import type { EventOf } from "../../lib/shared/settings";
import type { OsInfo } from "../common/os-release";
import type { postgresDefinition } from "./definition";
import {
  type Cluster,
  type ClusterListing,
  DISTRIBUTION_MAJOR,
  distributionMajor,
  pickCluster,
  psqlMetaQuote,
  type ServerPackage,
  type ServerState,
} from "./pg";
import { iterationCap, scramVerifierProblem, storedPasswordState } from "./scram";
import type { RoleDbPlan } from "./sql";

export type PostgresEvent = EventOf<typeof postgresDefinition.settings>;

/**
 * Which major this run is about: pg_version when given. Without it, the distribution's own (14 on Ubuntu
 * 22.04, 15 on Debian 12) when that is installed or nothing is; a VM that already runs only another major
 * keeps it (a second server beside it is never what an omitted version means).
 */
export function chooseMajor(event: Pick<PostgresEvent, "pg_version">, os: OsInfo, installed: ServerPackage[]): string {
  if (event.pg_version) return event.pg_version;
  const own = distributionMajor(os);
  if (own && (installed.length === 0 || installed.some((p) => p.major === own))) return own;
  if (installed.length > 0) return installed[installed.length - 1].major;
  throw new Error(
    "pg_version is not set and this installer does not know which PostgreSQL " +
      `${os.pretty_name ?? `${os.id} ${os.codename}`} ships ` +
      `(known: ${Object.entries(DISTRIBUTION_MAJOR)
        .map(([family, releases]) => `${family} ${Object.keys(releases).join("/")}`)
        .join(", ")}); set pg_version, e.g. "16"`,
  );
}

/**
 * Where the server package comes from: the distribution's `postgresql` for its own major, PGDG
 * (`<repo_url> <codename>-pgdg main`, key in /etc/apt/keyrings) for any other.
 */
export function serverSource(os: OsInfo, major: string): { own: boolean; name: string } {
  const own = major === distributionMajor(os);
  return { own, name: own ? "postgresql" : `postgresql-${major}` };
}

/**
 * The cluster of `major` this run manages, from what pg_lsclusters listed (parseClusters): a cluster whose
 * fields all passed their rules, "main" first. Lines refused there are never used, and:
 * - a line that does not read as columns (a name with blanks or a newline) could be any cluster, and the
 *   lines after it could be forged by it: nothing listed can be trusted, so the run is refused;
 * - a refused cluster of this major with no usable one beside it is refused too (creating a "main" next to
 *   the cluster that is really there would be worse than stopping);
 * - otherwise a refused cluster is skipped, with a warning naming it.
 * - a cluster directory whose name has blanks or line breaks (`hidden`, counted apart from the listing, as
 *   pg_lsclusters skips a name with a newline) refuses the run as well.
 * Refusals and warnings say which directory to rename; nothing has been changed when they are thrown.
 */
/** The cluster `major`/main as the package creates it: pg_createcluster takes the first free port from 5432. */
export function newClusterOf(major: string, clusters: readonly Cluster[]): Cluster {
  let port = 5432;
  while (clusters.some((c) => c.port === port)) port++;
  const dataDir = `/var/lib/postgresql/${major}/main`;
  return { major, name: "main", port, status: "down", owner: "postgres", dataDir };
}

export function chooseCluster(
  listing: ClusterListing & { hidden?: number },
  major: string,
): { cluster?: Cluster; warnings: string[] } {
  const shown = (line: string) => JSON.stringify(line.length > 200 ? `${line.slice(0, 200)}...` : line);
  const fix =
    "Clusters are named as pg_createcluster accepts (letters, digits, _ . - only): " +
    "as root, rename the directory under /etc/postgresql/<version>/ " +
    "back to such a name (or remove it if it is not a cluster), then run the job again. Nothing was changed";
  if (listing.hidden) {
    // postgresql-common itself skips a name with a line break (PgCommon's /^(.*)$/ does not match it), so
    // pg_lsclusters may show nothing of it: only the directory look in inspectInstallation finds it.
    throw new Error(
      `${listing.hidden === 1 ? "a cluster directory" : `${listing.hidden} cluster directories`} ` +
        "under /etc/postgresql/<version>/ " +
        `${listing.hidden === 1 ? "has a name" : "have names"} with blanks, tabs or line breaks, ` +
        "which pg_lsclusters cannot list as one cluster (or at all), so its listing cannot be trusted " +
        `and no cluster is created beside ${listing.hidden === 1 ? "it" : "them"}. ${fix}`,
    );
  }
  const unreadable = listing.refused.filter((r) => r.major === undefined);
  if (unreadable.length) {
    throw new Error(
      `pg_lsclusters printed ${unreadable.length === 1 ? "a line" : "lines"} ` +
        "this installer cannot read as a cluster: " +
        `${unreadable.map((r) => `${shown(r.line)} (${r.reason})`).join("; ")}. ` +
        "A directory under /etc/postgresql has a name with blanks or " +
        `line breaks, so no line of the listing can be trusted. ${fix}`,
    );
  }
  const cluster = pickCluster(listing.clusters, major);
  const ofMajor = listing.refused.filter((r) => r.major === major);
  if (!cluster && ofMajor.length) {
    throw new Error(
      `refusing the PostgreSQL ${major} cluster${ofMajor.length === 1 ? "" : "s"} pg_lsclusters lists: ` +
        `${ofMajor.map((r) => `${shown(r.line)}: ${r.reason}`).join("; ")}. ` +
        `No other cluster of ${major} is usable, and none is created beside it. ${fix}`,
    );
  }
  const warnings = listing.refused.map(
    (r) =>
      `skipped a cluster pg_lsclusters lists, never used by this installer: ${shown(r.line)}: ${r.reason} ` +
      `(rename its directory under /etc/postgresql/${r.major}/ to a name pg_createcluster accepts)`,
  );
  return { cluster, warnings };
}

/**
 * The files the server names (hba_file, config_file) are written by this installer: a superuser can point
 * them anywhere (ALTER SYSTEM SET hba_file), so they must be plain absolute paths, or the run stops before
 * any change. (They are written as postgres, and quoted, either way.)
 */
export function requireSafePaths(state: Pick<ServerState, "hba_file" | "config_file">): void {
  const bad = (["hba_file", "config_file"] as const).filter(
    (k) => typeof state[k] !== "string" || !isSafeAbsolutePath(state[k]),
  );
  if (!bad.length) return;
  throw new Error(
    `the server reports ${bad.map((k) => `${k} ${JSON.stringify(String(state[k]).slice(0, 120))}`).join(" and ")}, ` +
      "not a plain absolute path (letters, digits and _ . , + @ % = : / - only) that this installer will write to: " +
      "set it back to the cluster's own file under /etc/postgresql/<version>/<cluster>/ " +
      "(postgresql.conf, or ALTER SYSTEM RESET), restart the cluster and run the job again. Nothing was changed.",
  );
}

/**
 * db_user naming a role that is already a superuser: the job would set its password, give it the
 * database and list it as its own, so a later run could take its LOGIN away. Refused before any change.
 */
export function refuseSuperuser(event: Pick<PostgresEvent, "db_user">, state: Pick<ServerState, "role">): void {
  if (!state.role?.superuser) return;
  throw new Error(
    `db_user ${event.db_user} is an existing superuser role on the server: ` +
      "this installer sets its role's password, makes it own the database and may later take its LOGIN back, " +
      "which it never does to a superuser. Choose another dbUser for the application (a role without SUPERUSER), " +
      "or, if this role should be the application's, remove SUPERUSER from it first (ALTER ROLE ... NOSUPERUSER). " +
      "Nothing was changed.",
  );
}

// The result's lines for the server's phases, shared by a real run and a check. No version: the one apt picks
// is known only once the lists are refreshed, so a check could not say it (the result's pg_version has it).
export const installedLine = (major: string): string => `installed postgresql-${major}`;
export const clusterCreatedLine = (major: string): string => `cluster ${major}/main created`;
export const clusterStartedLine = (cluster: string, was: string): string => `cluster ${cluster} started (was ${was})`;

/** The role/database step as decided; the value the password is set to is made when it is applied. */
export type RoleDbDecision = Omit<RoleDbPlan, "password"> & { setPassword: boolean };

/** The role/database changes `state` calls for, and one line per change for the result. */
export function planRoleAndDatabase(
  state: ServerState,
  event: Pick<PostgresEvent, "db_user" | "db_name" | "db_password">,
): { plan: RoleDbDecision; changes: string[] } {
  const user = event.db_user;
  const db = event.db_name;
  const plan: RoleDbDecision = {
    createRole: false,
    grantLogin: false,
    setPassword: false,
    createDatabase: false,
    changeOwner: false,
  };
  const changes: string[] = [];
  if (!state.role) {
    plan.createRole = true;
    plan.setPassword = true;
    changes.push(`role ${user} created (LOGIN, password set)`);
  } else {
    if (!state.role.login) {
      plan.grantLogin = true;
      changes.push(`role ${user} may log in now (LOGIN)`);
    }
    // A verifier is checked only up to the server's own iteration policy (see iterationCap).
    const cap = iterationCap(state.scram_iterations);
    const now = storedPasswordState(state.role.secret, event.db_password, user, cap);
    if (now !== "same") {
      plan.setPassword = true;
      const unchecked = scramVerifierProblem(state.role.secret, cap);
      changes.push(
        now === "md5"
          ? `password of ${user} re-hashed as SCRAM-SHA-256 (was md5)`
          : unchecked
            ? `password of ${user} set again: ` +
              `its stored SCRAM-SHA-256 verifier was not checked (${unchecked}), so it is replaced`
            : state.role.secret
              ? `password of ${user} updated`
              : `password of ${user} set`,
      );
    }
  }
  if (!state.database) {
    plan.createDatabase = true;
    changes.push(`database ${db} created (owner ${user})`);
  } else if (state.database.owner !== user) {
    plan.changeOwner = true;
    changes.push(`database ${db} owner changed from ${state.database.owner} to ${user}`);
  }
  return { plan, changes };
}

/** Every form the password takes in text we send, so the scrubber catches it in any echo. */
export function registerPasswordForms(secrets: SecretScrubber, pw: string): void {
  const forms = [
    psqlMetaQuote(pw),
    psqlMetaQuote(pw).slice(1, -1),
    pw.replace(/'/g, "''"),
    pw.replace(/\\/g, "\\\\").replace(/'/g, "''"),
  ];
  for (const form of forms) if (form !== pw) secrets.add(form, "db_password");
}

/**
 * hostssl entries on a server with ssl off would admit nobody (the server takes them but no connection
 * can match): fail before any change, with both ways out, rather than switch SSL on with a certificate
 * the job would have to choose. Debian's and Ubuntu's clusters are created with ssl = on (snakeoil).
 */
export function requireSsl(
  event: Pick<PostgresEvent, "allow_remote" | "remote_ssl" | "tls">,
  state: Pick<ServerState, "ssl" | "config_file">,
): void {
  // tls "stack-ca" or "given" turns SSL on with the certificate it installs (ssl is read on reload).
  if (!event.allow_remote || !event.remote_ssl || state.ssl === "on" || event.tls !== "debian") return;
  throw new Error(
    `ssl is ${state.ssl ?? "unknown"} on the server, ` +
      "so hostssl entries (remote_ssl true, the default) would admit no remote client: " +
      "turn SSL on (ssl = on with ssl_cert_file and ssl_key_file, " +
      `e.g. in a file under ${state.config_file.replace(/\/[^/]*$/, "")}/conf.d/, then restart the cluster) ` +
      'or set tls "stack-ca" (the stack issues a certificate), or set remoteSsl false to admit unencrypted ' +
      "connections. Nothing was changed.",
  );
}
