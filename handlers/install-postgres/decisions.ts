// What a run decides from what it found: which major, which role/database changes, which password forms
// to scrub. Pure, so the tests drive them directly.

import type { SecretScrubber } from "../../shared/secrets";
import type { EventOf } from "../../shared/settings";
import type { OsInfo } from "../common/os-release";
import type { postgresDefinition } from "./definition";
import { DISTRIBUTION_MAJOR, distributionMajor, pgpassField, psqlMetaQuote, type ServerPackage, type ServerState } from "./pg";
import { isAscii, storedPasswordState } from "./scram";
import type { RoleDbPlan } from "./sql";

export type PostgresEvent = EventOf<typeof postgresDefinition.settings>;

/** Which major this run is about; see the file comment. */
export function chooseMajor(event: Pick<PostgresEvent, "pg_version">, os: OsInfo, installed: ServerPackage[]): string {
  if (event.pg_version) return event.pg_version;
  const own = distributionMajor(os);
  if (own && (installed.length === 0 || installed.some((p) => p.major === own))) return own;
  if (installed.length > 0) return installed[installed.length - 1].major;
  throw new Error(
    `pg_version is not set and this installer does not know which PostgreSQL ${os.pretty_name ?? `${os.id} ${os.codename}`} ships ` +
      `(known: ${Object.entries(DISTRIBUTION_MAJOR)
        .map(([family, releases]) => `${family} ${Object.keys(releases).join("/")}`)
        .join(", ")}); set pg_version, e.g. "16"`,
  );
}

/** Where the server package comes from: the distribution's `postgresql` for its own major, else PGDG. */
export function serverSource(os: OsInfo, major: string): { own: boolean; name: string } {
  const own = major === distributionMajor(os);
  return { own, name: own ? "postgresql" : `postgresql-${major}` };
}

// The result's lines for the server's phases, shared by a real run and a check (which knows no version).
export const installedLine = (major: string, version?: string): string => `installed postgresql-${major}${version ? ` ${version}` : ""}`;
export const clusterCreatedLine = (major: string): string => `cluster ${major}/main created`;
export const clusterStartedLine = (cluster: string, was: string): string => `cluster ${cluster} started (was ${was})`;

/** The role/database changes `state` calls for, and one line per change for the result. */
export function planRoleAndDatabase(
  state: ServerState,
  event: Pick<PostgresEvent, "db_user" | "db_name" | "db_password">,
  secretFor: (password: string) => string,
): { plan: RoleDbPlan; changes: string[] } {
  const user = event.db_user;
  const db = event.db_name;
  const plan: RoleDbPlan = { createRole: false, grantLogin: false, createDatabase: false, changeOwner: false };
  const changes: string[] = [];
  // Non-ASCII passwords are hashed by the server (see scram.ts for why); ASCII ones here.
  const value = () => (isAscii(event.db_password) ? secretFor(event.db_password) : event.db_password);
  if (!state.role) {
    plan.createRole = true;
    plan.password = value();
    changes.push(`role ${user} created (LOGIN, password set)`);
  } else {
    if (!state.role.login) {
      plan.grantLogin = true;
      changes.push(`role ${user} may log in now (LOGIN)`);
    }
    const now = storedPasswordState(state.role.secret, event.db_password, user);
    if (now !== "same") {
      plan.password = value();
      changes.push(
        now === "md5"
          ? `password of ${user} re-hashed as SCRAM-SHA-256 (was md5)`
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
  const forms = [psqlMetaQuote(pw), psqlMetaQuote(pw).slice(1, -1), pgpassField(pw), pw.replace(/'/g, "''"), pw.replace(/\\/g, "\\\\").replace(/'/g, "''")];
  for (const form of forms) if (form !== pw) secrets.add(form, "db_password");
}

/**
 * hostssl entries on a server with ssl off would admit nobody (the server takes them but no connection
 * can match): fail before any change, with both ways out, rather than switch SSL on with a certificate
 * the job would have to choose. Debian's and Ubuntu's clusters are created with ssl = on (snakeoil).
 */
export function requireSsl(event: Pick<PostgresEvent, "allow_remote" | "remote_ssl">, state: Pick<ServerState, "ssl" | "config_file">): void {
  if (!event.allow_remote || !event.remote_ssl || state.ssl === "on") return;
  throw new Error(
    `ssl is ${state.ssl ?? "unknown"} on the server, so hostssl entries (remote_ssl true, the default) would admit no remote client: ` +
      `turn SSL on (ssl = on with ssl_cert_file and ssl_key_file, e.g. in a file under ${state.config_file.replace(/\/[^/]*$/, "")}/conf.d/, then restart the cluster) ` +
      "or set remoteSsl false to admit unencrypted connections. Nothing was changed.",
  );
}
