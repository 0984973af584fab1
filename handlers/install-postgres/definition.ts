// install-postgres as both sides see it: its cdktf.json settings, their event keys, defaults and rules.
import { APT_LIST_SETTINGS, defineInstallerDefinition } from "../../lib/shared/installer-definition";
import {
  cidr,
  keyFingerprints,
  listenAddresses,
  pgDatabaseName,
  pgMajor,
  pgRoleName,
  repoUrl,
} from "../../lib/shared/names";
import { pgExtensions, pgParameters } from "../../lib/shared/pg-parameters";
import { ABSENT_RESULT, REMOVAL_SETTINGS } from "../../lib/shared/removal-settings";
import { setting } from "../../lib/shared/settings";
import { boolean, list, string, type Validator, withSchema } from "../../lib/shared/validate";
import { TLS_SETTINGS, tlsConfigProblems, tlsSecretVariables, tlsStackCaFields } from "./tls-settings";

export const DEFAULT_PGDG_URL = "https://apt.postgresql.org/pub/repos/apt";
/** The PostgreSQL Debian Repository signing key (ACCC4CF8). */
export const PGDG_KEY_FINGERPRINT = "B97B0AFCAA1A47F044F244A07FCC7D46ACCC4CF8";

/** Shorter passwords are refused: at plan time by the Terraform variable's validation, and by the handler. */
const MIN_PASSWORD_CHARS = 12;

/**
 * The password: printable text of 12 to 1024 characters. Control characters (a newline above all)
 * cannot be written into a psql variable. No message ever quotes the value.
 */
const password: Validator<string> = withSchema(
  (value, path, problems) => {
    if (typeof value !== "string") {
      const got = value === null ? "null" : Array.isArray(value) ? "a list" : typeof value;
      problems.push(`${path}: expected a string (the role's password), got ${got}`);
      return "";
    }
    if (value.length === 0)
      problems.push(`${path}: is empty; give the role a password of at least ${MIN_PASSWORD_CHARS} characters`);
    else if (value.length < MIN_PASSWORD_CHARS)
      problems.push(
        `${path}: is too short (${value.length} characters); ` +
          `at least ${MIN_PASSWORD_CHARS} are required (the value is not shown)`,
      );
    if (value.length > 1024) problems.push(`${path}: is ${value.length} characters long; at most 1024 are allowed`);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused here.
    if (/[\x00-\x1f\x7f]/.test(value))
      problems.push(`${path}: contains a control character (newline, tab, ...); use printable characters only`);
    return value;
  },
  { type: "string", minLength: MIN_PASSWORD_CHARS, maxLength: 1024 },
);

const TF_IDENTIFIER = /^[a-z][a-z0-9_]{0,63}$/;

export const postgresDefinition = defineInstallerDefinition({
  key: "postgres",
  handler: "install-postgres",
  doc:
    "PostgreSQL (the distribution's, or another major from PGDG), a role and a database, listen_addresses and " +
    "pg_hba entries for remote clients, verified by a TCP login with the password",
  enabledByDefault: false,
  waitTimeoutSec: 900,
  settings: {
    version: setting(pgMajor, {
      event: "pg_version",
      defaultDoc: "the distribution's (14 on Ubuntu 22.04, 16 on 24.04, 15 on Debian 12, 17 on Debian 13)",
      doc: "PostgreSQL major; another than the distribution's comes from PGDG.",
    }),
    dbName: setting(pgDatabaseName, {
      event: "db_name",
      eventRequired: true,
      default: "myapp",
      doc: "Database to create (lowercase, digits, _; postgres, pg_* and pg_hba keywords are refused).",
    }),
    dbUser: setting(pgRoleName, {
      event: "db_user",
      eventRequired: true,
      default: "app_user",
      doc:
        "Role to create, owner of the database (same rules as dbName; an existing superuser is refused). A role " +
        "vm-install created (or gave LOGIN), marked so by a comment on the role, loses LOGIN when a later run no " +
        "longer names it (kept, not dropped); a role without that mark, a superuser or the bootstrap superuser " +
        "never does, whatever the inventory says.",
    }),
    passwordVariable: setting(
      string({
        pattern: TF_IDENTIFIER,
        allowed: 'a Terraform variable name (lowercase, digits, _), e.g. "pg_password", set as TF_VAR_pg_password',
      }),
      {
        defaultDoc: "none; required when enabled",
        doc: "Terraform variable holding the role's password, set as TF_VAR_<name>; the job gets it as db_password.",
      },
    ),
    dbPassword: setting(password, {
      event: "db_password",
      eventOnly: true,
      eventRequired: true,
      doc: "The role's password (from passwordVariable): printable, 12 to 1024 characters.",
    }),
    listenAddresses: setting(listenAddresses, {
      event: "listen_addresses",
      default: "localhost",
      doc:
        'postgresql.conf listen_addresses: "*", "localhost", IP literals (dotted-quad IPv4, RFC 4291 IPv6; no ' +
        "numbers, octal, hex, short forms, CIDR or zone ids) or host names; a name must resolve on the VM to the " +
        "VM's own addresses (checked before any change, and the login check connects to the address found).",
    }),
    allowRemote: setting(boolean(), {
      event: "allow_remote",
      default: false,
      doc:
        "Add pg_hba.conf entries admitting remote clients of this database and role. Entries vm-install wrote " +
        "that the settings no longer ask for (another dbName, dbUser or network) are removed on the next run.",
    }),
    remoteSsl: setting(boolean(), {
      event: "remote_ssl",
      default: true,
      doc:
        'Remote entries are "hostssl" (clients must use SSL; the server must have ssl = on, as Debian and Ubuntu ' +
        'clusters do); false writes "host" (unencrypted connections admitted too).',
    }),
    allowedCidrs: setting(list(cidr, { minItems: 1, unique: true }), {
      event: "allowed_cidrs",
      default: ["0.0.0.0/0"],
      doc: "Networks those entries admit (scram-sha-256), one entry each.",
    }),
    repoUrl: setting(repoUrl, {
      event: "repo_url",
      default: DEFAULT_PGDG_URL,
      doc: "PGDG repository base or a mirror of it (used only for a major the distribution lacks).",
    }),
    repoKeyUrl: setting(repoUrl, {
      event: "repo_key_url",
      defaultDoc: "postgresql.org's key for PGDG, <repoUrl>/ACCC4CF8.asc for a mirror",
      doc: "Where the PGDG key is fetched from.",
    }),
    repoKeyFingerprint: setting(keyFingerprints, {
      event: "repo_key_fingerprint",
      default: [PGDG_KEY_FINGERPRINT],
      doc:
        "The key(s) the fetched PGDG keyring must hold, exactly, before apt may trust it; set it only for a " +
        "mirror that signs with its own key.",
    }),
    parameters: setting(pgParameters, {
      event: "parameters",
      default: {},
      doc:
        "postgresql.conf settings, written to vm-install's conf.d drop-in; names and values are checked by the " +
        "server itself before anything changes (unknown names fail with the nearest ones). A reload applies " +
        "them, a restart those the server reads only at start; a value the server refuses on restart is " +
        "rolled back with its log lines. listen_addresses, shared_preload_libraries and ssl* belong to other " +
        "settings. A name removed from here is removed from the drop-in (a reload, or a restart for a name read " +
        "only at start), so postgresql.conf's own value or the default applies again; changes name the value " +
        "then in effect and where it comes from, as the server reports it.",
    }),
    extensions: setting(pgExtensions, {
      event: "extensions",
      default: [],
      doc:
        "Extensions created (CREATE EXTENSION IF NOT EXISTS) in dbName; a package is installed for one the " +
        "server lacks (vector: postgresql-<major>-pgvector, postgis: -postgis-3, else postgresql-<major>-<name>), " +
        "and shared_preload_libraries in the drop-in gets the libraries of those that work only preloaded " +
        "(pg_stat_statements, pg_cron, pg_squeeze, timescaledb, pgaudit), keeping the server's other ones, with " +
        "a restart. One removed from here is reported in warnings and left in place, never dropped (dropping " +
        "loses data).",
    }),
    ...TLS_SETTINGS,
    ...APT_LIST_SETTINGS,
    ...REMOVAL_SETTINGS,
    purgeData: setting(boolean(), {
      event: "purge_data",
      default: false,
      doc:
        'With state "absent": also purge the packages and remove the data and configuration directories of the ' +
        "clusters of a major vm-install installed (/var/lib/postgresql/<major>, /etc/postgresql/<major>; a data " +
        "directory a cluster's configuration puts elsewhere is never removed). Without it they stay, and the " +
        "result's data_kept says where.",
    }),
  },
  secrets: { db_password: "passwordVariable" },
  conditionalSecrets: tlsSecretVariables,
  stackCaSecrets: tlsStackCaFields,
  check: (c) => [
    ...tlsConfigProblems(c),
    ...(c.passwordVariable
      ? []
      : [
          'passwordVariable: required when postgres is enabled; name a Terraform variable (e.g. "pg_password") ' +
            "and set TF_VAR_pg_password",
        ]),
    ...(c.allowRemote && c.listenAddresses === "localhost"
      ? [
          'listenAddresses: "localhost" with allowRemote true admits no remote client; set listenAddresses to ' +
            '"*" or the VM\'s address',
        ]
      : []),
  ],
  warnings: (c) => {
    const open = c.allowRemote ? (c.allowedCidrs as string[]).filter((n) => n === "0.0.0.0/0" || n === "::/0") : [];
    if (open.length === 0) return [];
    return [
      `allowedCidrs: ${open.join(", ")} admits every address to database ${c.dbName} as ${c.dbUser} (password only); ` +
        "list the networks your clients use",
    ];
  },
  result: {
    pg_version: 'the running server\'s version, e.g. "15.10" ("" in check mode when no server runs); pg_major with it',
    installed_from:
      '"already installed", "distribution" or "pgdg" (in check mode: where a real run would install from)',
    cluster: 'the cluster, e.g. "15/main", and its port',
    db_name: "the database; db_user the role",
    listen_addresses: "as applied; allow_remote and allowed_cidrs as admitted",
    restarted:
      "the server was restarted (listen_addresses, a postmaster parameter or shared_preload_libraries " +
      "changed); reloaded: pg_hba.conf or a reloadable parameter changed",
    verified:
      '{host, port, user, database, auth: "scram-sha-256"}: the TCP login that proved it works, to the ' +
      "cluster's own postmaster, the server's SCRAM signature checked (null in check mode when a change would " +
      "come first, and when the VM's sshd opens no TCP channels: a warning says so)",
    revoked:
      'grants this run took back, e.g. "pg_hba.conf: hostssl myapp old_user 0.0.0.0/0 scram-sha-256", "role ' +
      'old_user: LOGIN" (only what /var/lib/vm-install/grants.json records); in check mode what a run would take back',
    state: ABSENT_RESULT.state,
    removed: ABSENT_RESULT.removed,
    kept: ABSENT_RESULT.kept,
    data_kept:
      "state absent: the clusters' data and configuration directories left in place (with purgeData only a data " +
      "directory outside /var/lib/postgresql/<major>)",
  },
});
