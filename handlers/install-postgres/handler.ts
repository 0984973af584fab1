// install-postgres: a PostgreSQL server with one application database and role, Ansible
// postgresql_user/postgresql_db style: look at the state first, change only what differs, report what
// changed, and prove the result by logging in as the role over TCP.
//   event: { db_name: "myapp", db_user: "app_user", db_password: "...",      required
//            pg_version: "15",                       optional: the major; default below
//            listen_addresses: "localhost",          postgresql.conf listen_addresses ("*" or a list)
//            allow_remote: false,                    pg_hba.conf `host <db> <user> <cidr> scram-sha-256` ...
//            allowed_cidrs: ["0.0.0.0/0"],           ... one per network (only with allow_remote)
//            repo_url: "https://apt.postgresql.org/pub/repos/apt",     PGDG or a mirror of it
//            repo_key_url, repo_key_fingerprint,     optional: the PGDG key (derived from repo_url)
//            ssh: {...}, apt: {...} }                as for every installer
//   env:   VM_IP, SSH_USER, SSH_KEY, optional SSH_PORT, SSH_HOST_KEY_SHA256
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
// The TCP login check reads it from a 0600 pgpass file in a private temporary directory, removed when
// psql exits. The value is registered as a secret, so no output, error or progress line can carry it.
//
// Configuration: listen_addresses goes into a conf.d drop-in (Debian's postgresql.conf includes
// conf.d last) and needs a restart; pg_hba.conf lines need only a reload. Both files are checked by
// the server itself (pg_file_settings, pg_hba_file_rules) before it is restarted or reloaded, so a
// broken file is put back instead of leaving a server that will not start.

import { Apt, aptEventSettings, AptEventSettings, ensurePackages, resolveAptSettings } from "../common/apt";
import { Remote } from "../common/exec";
import { CommonResult, defineInstaller, runInstaller } from "../common/handler-kit";
import { cidr, listenAddresses, pgDatabaseName, pgMajor, pgRoleName, repoUrl } from "../../shared/names";
import { OsInfo } from "../common/os-release";
import { SecretScrubber } from "../../shared/secrets";
import { command, quote } from "../../shared/shell-quote";
import { boolean, integer, list, optional, required, string, Validator } from "../../shared/validate";
import {
  Cluster, clusterUnit, DISTRIBUTION_MAJOR, DROPIN_NAME, parseUnits, distributionMajor, dropInContent, dropInPath, listenOverride, normalizeListen, parseClusters,
  parsePsqlJson, parseServerPackages, pgpassField, pickCluster, planHba, psqlMetaQuote, ServerPackage, ServerState,
  shortServerVersion, verifyHost,
} from "./pg";
import { DEFAULT_PGDG_URL, ensurePgdgRepository, PGDG_KEY_FINGERPRINT, pgdgKeyUrl } from "./pgdg";
import { isAscii, scramSecret, storedPasswordState } from "./scram";
import { applySql, CONFIG_CHECK_SQL, ConfigCheck, inspectSql, planIsEmpty, RoleDbPlan, Settled, SETTLED_SQL, WHOAMI_SQL } from "./sql";

export interface InstallPostgresEvent {
  pg_version?: string;
  db_name: string;
  db_user: string;
  db_password: string;
  listen_addresses: string;
  allow_remote: boolean;
  allowed_cidrs: string[];
  repo_url: string;
  repo_key_url?: string;
  repo_key_fingerprint?: string;
  /** apt-get update before installing. @default true */
  update: boolean;
  /** Skip that update when the lists are younger than this many seconds. @default none */
  cache_valid_sec?: number;
  apt?: AptEventSettings;
}

export interface InstallPostgresResult {
  status: "ok";
  /** What this run changed, one line each; empty on a rerun with nothing to do. */
  changed: string[];
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
  /** Things a person should know that did not stop the job (settings pending a restart we did not make). */
  warnings: string[];
  summary: string;
}

// ---------------------------------------------------------------------------------------------------
// Event validation: everything checked before any SSH command.

/** Names pg_hba.conf reads as keywords (all, sameuser, ...) or PostgreSQL keeps for itself. */

/**
 * The password: any printable text up to 1024 characters. Control characters (a newline above all)
 * cannot be written into pgpass or a psql variable. No message ever quotes the value.
 */
const password: Validator<string> = (value, path, problems) => {
  if (typeof value !== "string") {
    const got = value === null ? "null" : Array.isArray(value) ? "a list" : typeof value;
    problems.push(`${path}: expected a string (the role's password), got ${got}`);
    return "";
  }
  if (value.length === 0) problems.push(`${path}: is empty; give the role a password`);
  if (value.length > 1024) problems.push(`${path}: is ${value.length} characters long; at most 1024 are allowed`);
  if (/[\x00-\x1f\x7f]/.test(value)) problems.push(`${path}: contains a control character (newline, tab, ...); use printable characters only`);
  return value;
};

const fingerprint: Validator<string> = string({ pattern: /^[0-9A-F]{40}$/, allowed: "an OpenPGP key fingerprint: 40 hex digits, upper case, no spaces" });

// ---------------------------------------------------------------------------------------------------
// Talking to the VM.

/** psql as the postgres superuser over the local socket, SQL on stdin, stopping at the first error. */
function psql(remote: Remote, port: number, sql: string, label: string): Promise<{ stdout: string }> {
  // `cd /`: the login user's home may be closed to postgres, and psql would complain about it.
  return remote.run(`cd / && psql -X -q -A -t -v ON_ERROR_STOP=1 -p ${port} -d postgres -f -`, {
    user: "postgres", stdin: sql, env: { PGCLIENTENCODING: "UTF8", LC_MESSAGES: "C" }, label, timeoutMs: 120_000,
  });
}

async function psqlJson<T>(remote: Remote, port: number, sql: string, label: string): Promise<T> {
  return parsePsqlJson<T>((await psql(remote, port, sql, label)).stdout, label);
}

interface Installation {
  packages: ServerPackage[];
  clusters: Cluster[];
  /** `systemctl is-active` of each cluster's unit, by unit name. */
  units: Record<string, string>;
}

/**
 * Server packages (dpkg), clusters (pg_lsclusters, absent before postgresql-common is installed) and
 * whether systemd runs each cluster's unit: one command, as a rerun's first look should be cheap.
 */
async function inspectInstallation(remote: Remote): Promise<Installation> {
  const r = await remote.run(
    `dpkg-query -W -f='\${Package}\\t\${Status}\\t\${Version}\\n' 'postgresql-[0-9]*' 2>/dev/null; echo '--- clusters'; ` +
      `if command -v pg_lsclusters >/dev/null 2>&1; then pg_lsclusters -h; echo '--- units'; ` +
      `pg_lsclusters -h | while read -r v n _; do echo "postgresql@$v-$n $(systemctl is-active "postgresql@$v-$n")"; done; fi; true`,
    { env: { LC_ALL: "C" }, label: "dpkg-query + pg_lsclusters", timeoutMs: 60_000 },
  );
  const [pkgs, rest = ""] = r.stdout.split("--- clusters\n");
  const [clusters, units = ""] = rest.split("--- units\n");
  return { packages: parseServerPackages(pkgs), clusters: parseClusters(clusters), units: parseUnits(units) };
}

/** Replaces a file as postgres, atomically (temporary file in the same directory + mv), keeping its mode. */
async function writeFile(remote: Remote, path: string, content: string, newMode: string): Promise<void> {
  const f = quote(path);
  await remote.run(
    `t=$(mktemp ${quote(path + ".XXXXXX")}) || exit 1; ` +
      `if [ -e ${f} ]; then chmod --reference=${f} "$t"; else chmod ${newMode} "$t"; fi && cat > "$t" && mv -f "$t" ${f} || { rm -f "$t"; exit 1; }`,
    { user: "postgres", stdin: content, label: `writing ${path}`, timeoutMs: 30_000 },
  );
}

/**
 * Logs in as the role over TCP, the password in a pgpass file only the login user can read, in a
 * private directory removed when the shell exits whatever happens. Returns psql's result or stderr.
 */
async function tcpLogin(remote: Remote, t: { host: string; port: number; db: string; user: string; password: string }) {
  const pgpass = [t.host, String(t.port), t.db, t.user, t.password].map(pgpassField).join(":") + "\n";
  const psqlCmd = command("psql", "-X", "-w", "-q", "-A", "-t", "-h", t.host, "-p", String(t.port), "-U", t.user, "-d", t.db, "-c", WHOAMI_SQL);
  return remote.run(
    `umask 077; d=$(mktemp -d) || exit 1; trap 'rm -rf "$d"' EXIT; cat > "$d/pgpass" || exit 1; ` +
      `PGPASSFILE="$d/pgpass" PGCONNECT_TIMEOUT=10 ${psqlCmd}`,
    { stdin: pgpass, check: false, env: { LC_MESSAGES: "C" }, label: `psql -h ${t.host} -p ${t.port} -U ${t.user} -d ${t.db}`, timeoutMs: 60_000 },
  );
}

// ---------------------------------------------------------------------------------------------------
// Decisions.

/** Which major this run is about; see the file comment. */
export function chooseMajor(event: InstallPostgresEvent, os: OsInfo, installed: ServerPackage[]): string {
  if (event.pg_version) return event.pg_version;
  const own = distributionMajor(os);
  if (own && (installed.length === 0 || installed.some((p) => p.major === own))) return own;
  if (installed.length > 0) return installed[installed.length - 1].major;
  throw new Error(
    `pg_version is not set and this installer does not know which PostgreSQL ${os.pretty_name ?? `${os.id} ${os.codename}`} ships ` +
      `(known: ${Object.entries(DISTRIBUTION_MAJOR).map(([family, releases]) => `${family} ${Object.keys(releases).join("/")}`).join(", ")}); set pg_version, e.g. "16"`,
  );
}

/** The role/database changes `state` calls for, and one line per change for the result. */
export function planRoleAndDatabase(state: ServerState, event: InstallPostgresEvent, secretFor: (password: string) => string): { plan: RoleDbPlan; changes: string[] } {
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
        now === "md5" ? `password of ${user} re-hashed as SCRAM-SHA-256 (was md5)`
          : state.role.secret ? `password of ${user} updated` : `password of ${user} set`,
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
function registerPasswordForms(secrets: SecretScrubber, pw: string): void {
  const forms = [psqlMetaQuote(pw), psqlMetaQuote(pw).slice(1, -1), pgpassField(pw), pw.replace(/'/g, "''"), pw.replace(/\\/g, "\\\\").replace(/'/g, "''")];
  for (const form of forms) if (form !== pw) secrets.add(form, "db_password");
}

// ---------------------------------------------------------------------------------------------------
// The installer.

export const installer = defineInstaller<InstallPostgresEvent, InstallPostgresResult>({
  name: "install-postgres",
  fields: {
    pg_version: optional(pgMajor),
    db_name: required(pgDatabaseName),
    db_user: required(pgRoleName),
    db_password: required(password),
    listen_addresses: optional(listenAddresses, "localhost"),
    allow_remote: optional(boolean(), false),
    allowed_cidrs: optional(list(cidr, { minItems: 1, unique: true }), ["0.0.0.0/0"]),
    repo_url: optional(repoUrl, DEFAULT_PGDG_URL),
    repo_key_url: optional(repoUrl),
    repo_key_fingerprint: optional(fingerprint),
    update: optional(boolean(), true),
    cache_valid_sec: optional(integer(0, 30 * 24 * 3600)),
    apt: optional(aptEventSettings),
  },
  secrets: (event) => ({ db_password: event.db_password }),
  async run({ event, remote, os, progress, secrets }) {
    registerPasswordForms(secrets, event.db_password);
    const changed: string[] = [];
    const warnings: string[] = [];
    const db = event.db_name;
    const user = event.db_user;
    const apt = new Apt(remote, resolveAptSettings(event.apt), { progress });

    // 1. The server package: look, install only when missing.
    let found = await progress.step("looking for PostgreSQL packages and clusters", () => inspectInstallation(remote), "inspect");
    const major = chooseMajor(event, os, found.packages);
    let installedFrom: InstallPostgresResult["installed_from"] = "already installed";
    if (!found.packages.some((p) => p.major === major)) {
      const own = major === distributionMajor(os);
      progress.info(`PostgreSQL ${major} is not installed; installing it from ${own ? `${os.id} ${os.codename} (postgresql)` : `PGDG (${event.repo_url})`}`);
      // As install-packages: refresh the lists first unless told not to or they are fresh enough; a
      // repository just added is read whatever the policy says.
      let aptPolicy = { update: event.update, cacheValidSec: event.cache_valid_sec };
      if (!own) {
        const repo = await progress.step(`PGDG repository ${os.codename}-pgdg`, () =>
          ensurePgdgRepository(remote, os, {
            repoUrl: event.repo_url,
            keyUrl: pgdgKeyUrl(event.repo_url, event.repo_key_url),
            fingerprint: event.repo_key_fingerprint ?? PGDG_KEY_FINGERPRINT,
          }, { progress, ensureCurl: () => installPackages(apt, ["curl", "ca-certificates"], "curl for the PGDG key", aptPolicy) }), "pgdg");
        changed.push(...repo.changes.map((c) => `PGDG repository: ${c}`));
        if (repo.changes.length > 0) aptPolicy = { update: true, cacheValidSec: undefined };
      }
      await installPackages(apt, [own ? "postgresql" : `postgresql-${major}`], own ? `PostgreSQL ${major} from ${os.id} ${os.codename}` : `PostgreSQL ${major} from ${event.repo_url} ${os.codename}-pgdg`, aptPolicy);
      found = await inspectInstallation(remote);
      const pkg = found.packages.find((p) => p.major === major);
      if (!pkg) {
        throw new Error(
          `apt-get installed ${own ? "postgresql" : `postgresql-${major}`} but postgresql-${major} is still not installed (installed: ${found.packages.map((p) => `postgresql-${p.major}`).join(", ") || "none"}); ` +
            (own ? `another repository on the VM (PGDG?) provides a newer "postgresql": set pg_version to the major you want` : "check the repository on the VM"),
        );
      }
      installedFrom = own ? "distribution" : "pgdg";
      changed.push(`installed postgresql-${major} ${pkg.version}`);
    }

    // 2. Its cluster, running.
    let cluster = pickCluster(found.clusters, major);
    if (!cluster) {
      // The package creates "main" unless createcluster.conf says otherwise, or it was dropped since.
      await progress.step(`creating cluster ${major}/main`, () => remote.run(`pg_createcluster ${major} main`, { sudo: true, label: `pg_createcluster ${major} main`, timeoutMs: 300_000 }), "cluster");
      changed.push(`cluster ${major}/main created`);
      found = await inspectInstallation(remote);
      cluster = pickCluster(found.clusters, major);
      if (!cluster) throw new Error(`pg_createcluster ${major} main succeeded but pg_lsclusters does not list the cluster on the VM`);
    }
    const unit = clusterUnit(cluster);
    const name = `${cluster.major}/${cluster.name}`;
    const port = cluster.port;
    const active = found.units[unit] ?? "unknown";
    if (active !== "active") {
      progress.info(`${unit} is ${active}; starting it`);
      await progress.step(`systemctl start ${unit}`, () => startOrExplain(remote, unit, cluster!), "start");
      changed.push(`cluster ${name} started (was ${active})`);
    }

    // 3. Role, password, database.
    const state = await progress.step("reading the role, the database and the settings", () =>
      psqlJson<ServerState>(remote, port, inspectSql(db, user, DROPIN_NAME), "psql (reading the role, the database and the settings)"), "inspect_sql");
    const { plan, changes } = planRoleAndDatabase(state, event, (pw) => {
      const secret = scramSecret(pw);
      secrets.add(secret, "db_password_scram");
      return secret;
    });
    if (!planIsEmpty(plan)) {
      await progress.step(changes.join("; "), () => psql(remote, port, applySql(plan, db, user), "psql (role and database)"), "role_db");
      changed.push(...changes);
    } else {
      progress.info(`role ${user} (password unchanged) and database ${db} (owner ${user}) are as wanted`);
    }

    // 4. Configuration: listen_addresses (restart), pg_hba.conf (reload).
    const listen = normalizeListen(event.listen_addresses);
    const dropIn = dropInPath(state.config_file);
    const hbaText = state.hba_text;
    const dropInText = state.dropin_text ?? "";
    const listenPending = state.pending_restart.includes("listen_addresses");
    const listenChange = normalizeListen(state.listen_addresses) !== listen || listenPending;
    if (listenChange && dropInText !== dropInContent(listen)) await writeFile(remote, dropIn, dropInContent(listen), "0644");
    const hba = planHba(hbaText, db, user, event.allow_remote ? event.allowed_cidrs : []);
    if (hba.content !== hbaText) await writeFile(remote, state.hba_file, hba.content, "0640");

    if (listenChange || hba.content !== hbaText) {
      const check = await psqlJson<ConfigCheck>(remote, port, CONFIG_CHECK_SQL, "psql (checking the configuration files)");
      const problems = [
        ...check.config_errors.map((e) => `${e.file ?? "?"} line ${e.line ?? "?"}: ${e.error}`),
        ...check.hba_errors.map((e) => `${state.hba_file} line ${e.line}: ${e.error}`),
      ];
      const override = listenChange ? listenOverride(check.listen, dropIn) : undefined;
      if (problems.length || override) {
        if (hba.content !== hbaText) await writeFile(remote, state.hba_file, hbaText, "0640");
        throw new Error(
          (problems.length ? `the server would not accept its configuration files: ${problems.join("; ")}; ` : "") +
            (override
              ? `listen_addresses is also set in ${override.file} line ${override.line} ('${override.setting}'), which is read after ${dropIn} and wins: ` +
                `remove it there${override.file?.endsWith("postgresql.auto.conf") ? " (ALTER SYSTEM RESET listen_addresses)" : ""}; `
              : "") +
            `nothing was reloaded${hba.content !== hbaText ? `, and ${state.hba_file} was put back as it was` : ""}. Fix the files on the VM and run the job again`,
        );
      }
      if (listenChange) {
        changed.push(normalizeListen(state.listen_addresses) === listen
          ? `listen_addresses '${listen}' applied (it was waiting for a restart)`
          : `listen_addresses '${state.listen_addresses}' -> '${listen}' (${dropIn})`);
      }
      for (const c of hba.added) changed.push(`pg_hba.conf: host ${db} ${user} ${c} scram-sha-256 added`);
      for (const c of hba.removed) changed.push(`pg_hba.conf: host ${db} ${user} ${c} scram-sha-256 removed`);
    }

    let restarted = false;
    let reloaded = false;
    if (listenChange) {
      // listen_addresses is read only when the postmaster starts.
      await progress.step(`systemctl restart ${unit} (listen_addresses)`, () => remote.run(`systemctl restart ${unit}`, { sudo: true, label: `systemctl restart ${unit}`, timeoutMs: 300_000 }), "restart");
      restarted = true;
    } else if (hba.content !== hbaText) {
      await progress.step(`systemctl reload ${unit} (pg_hba.conf)`, () => remote.run(`systemctl reload ${unit}`, { sudo: true, label: `systemctl reload ${unit}`, timeoutMs: 120_000 }), "reload");
      reloaded = true;
    }
    const settled = restarted || reloaded ? await psqlJson<Settled>(remote, port, SETTLED_SQL, "psql (checking the running settings)") : state;
    if (normalizeListen(settled.listen_addresses) !== listen) {
      throw new Error(`after the restart the server listens on '${settled.listen_addresses}', not '${listen}': see ${cluster.logFile ?? "the cluster's log"} and pg_file_settings on the VM`);
    }
    if (settled.pending_restart.length) {
      const names = settled.pending_restart.join(", ");
      if (restarted) throw new Error(`settings still wait for a restart right after one: ${names}; see ${cluster.logFile ?? "the cluster's log"} on the VM`);
      warnings.push(`settings changed by someone else wait for a restart of ${unit}: ${names} (not restarted by this job)`);
      progress.info(warnings[warnings.length - 1]);
    }

    if (event.allow_remote && listen.split(",").every((a) => a === "localhost" || a === "127.0.0.1" || a === "::1")) {
      warnings.push(`allow_remote is true but listen_addresses '${listen}' accepts local connections only: set listen_addresses to "*" (or the VM's address) for remote clients`);
      progress.info(warnings[warnings.length - 1]);
    }

    // 5. Proof: the role logs in over TCP with the password.
    const host = verifyHost(listen);
    const login = await progress.step(`logging in as ${user} to ${db} over TCP (${host}:${port})`, async () => {
      let r = await tcpLogin(remote, { host, port, db, user, password: event.db_password });
      // A reload is a signal the postmaster handles a moment later: allow it that moment once.
      if (r.code !== 0 && reloaded) r = await new Promise((res) => setTimeout(res, 1000)).then(() => tcpLogin(remote, { host, port, db, user, password: event.db_password }));
      return r;
    }, "verify_login");
    if (login.code !== 0) {
      const why = login.stderr.trim().split("\n").slice(-3).join(" ") || `psql exit ${login.code}`;
      const loopback = host === "127.0.0.1" || host === "::1";
      const hint = /no pg_hba\.conf entry/.test(why)
        ? loopback
          ? `pg_hba.conf (${state.hba_file}) has no host rule for ${host}: the stock rules for 127.0.0.1/32 and ::1/128 were removed? Put one back`
          : `pg_hba.conf (${state.hba_file}) has no host rule for ${host}: add a network covering it to allowed_cidrs (with allow_remote), or add localhost to listen_addresses`
        : /password authentication failed/.test(why)
          ? "the password stored for the role does not match (was it changed while the job ran?)"
          : `is the server listening on ${host}:${port}?`;
      throw new Error(`${user} could not log in to ${db} over TCP at ${host}:${port}: ${why} (${hint})`);
    }
    const who = parsePsqlJson<{ user: string; database: string; server_version: string }>(login.stdout, "the TCP login check");
    if (who.user !== user || who.database !== db) throw new Error(`the TCP login check ran as ${who.user} in ${who.database}, not ${user} in ${db}`);

    const version = shortServerVersion(who.server_version);
    const summary = changed.length
      ? `PostgreSQL ${version} (${name}, port ${port}): ${changed.length} change${changed.length === 1 ? "" : "s"}${restarted ? ", restarted" : reloaded ? ", reloaded" : ""}`
      : `nothing to do: PostgreSQL ${version} (${name}, port ${port}), role ${user} and database ${db} are as wanted`;
    progress.info(summary);
    return {
      status: "ok",
      changed,
      pg_version: version,
      pg_major: major,
      installed_from: installedFrom,
      cluster: name,
      port,
      db_name: db,
      db_user: user,
      listen_addresses: listen,
      allow_remote: event.allow_remote,
      allowed_cidrs: event.allow_remote ? event.allowed_cidrs : [],
      restarted,
      reloaded,
      verified: { host, port, user, database: db },
      warnings,
      summary,
    };
  },
});

/** apt-get install through the shared Apt helper; throws when any of `specs` could not be installed. */
async function installPackages(apt: Apt, specs: string[], what: string, policy: { update: boolean; cacheValidSec?: number }): Promise<void> {
  const outcome = await ensurePackages(apt, specs, policy);
  if (outcome.failed.length) {
    throw new Error(`could not install ${what}: ${outcome.failed.map((f) => `${f.name}: ${f.reason}`).join("; ")}`);
  }
}

/** systemctl start; on failure the message points at the unit's journal and the cluster's log. */
async function startOrExplain(remote: Remote, unit: string, cluster: Cluster): Promise<void> {
  try {
    await remote.run(`systemctl start ${unit}`, { sudo: true, label: `systemctl start ${unit}`, timeoutMs: 300_000 });
  } catch (err) {
    throw new Error(`${(err as Error).message}\nsee \`journalctl -u ${unit}\` and ${cluster.logFile ?? "the cluster's log"} on the VM`);
  }
  const again = await remote.run(`systemctl is-active ${unit}`, { check: false, label: `systemctl is-active ${unit}`, timeoutMs: 30_000 });
  if (again.stdout.trim() !== "active") {
    throw new Error(`${unit} is ${again.stdout.trim()} right after systemctl start: see \`journalctl -u ${unit}\` and ${cluster.logFile ?? "the cluster's log"} on the VM`);
  }
}

/** The job's entrypoint (handler.install). */
export async function install(event: unknown): Promise<InstallPostgresResult & CommonResult> {
  return runInstaller(installer, event);
}
