// The SQL install-postgres sends, always on psql's stdin (`psql -X -v ON_ERROR_STOP=1 -f -` as the
// postgres user): names and the password secret are set as psql variables and interpolated by psql
// itself (:"name" as an identifier, :'name' as a literal, via libpq's PQescapeIdentifier/Literal), or
// quoted by the server with format('%I', ...). Nothing user-given is pasted into SQL text by the handler.

import { psqlMetaQuote, TLS_FILE_NAMES } from "./pg";

/** `\set name 'value'` lines for psql; values are psql-quoted (see psqlMetaQuote). */
function setVars(vars: Record<string, string>): string {
  return Object.entries(vars)
    .map(([name, value]) => `\\set ${name} ${psqlMetaQuote(value)}\n`)
    .join("");
}

/**
 * The comment vm-install puts on a role it creates or gives LOGIN (only where the role has no comment, so
 * an admin's is never overwritten). The inventory says which roles a later run may take LOGIN back from;
 * the mark is the server's own proof, which a hand edit of the inventory cannot add: only a superuser or
 * a CREATEROLE role can comment on a role. A role without it is never revoked (grants.ts planRoles).
 */
const ROLE_MARK = {
  created: "vm-install: created by install-postgres; a later run that no longer names it as db_user takes LOGIN back",
  login: "vm-install: LOGIN given by install-postgres; a later run that no longer names it as db_user takes LOGIN back",
};
const MARK_PATTERN = "'vm-install: %'";

/** Each role of pg_roles `where` keeps, with what grants.ts planRoles decides on. */
const rolesWhere = (where: string) =>
  `(SELECT json_object_agg(rolname, json_build_object('login', rolcanlogin, 'superuser', rolsuper,
                       'bootstrap', oid = 10,
                       'marked', coalesce(shobj_description(oid, 'pg_authid') LIKE ${MARK_PATTERN}, false)))
                     FROM pg_roles WHERE ${where})`;

/** The roles of psql variable `recorded` (a JSON list) that exist. */
const RECORDED_ROLES = rolesWhere("rolname IN (SELECT json_array_elements_text(:'recorded'::json))");

/**
 * Every role that may log in: a recorded role without LOGIN has nothing to take back (planRoles), so the
 * state query needs no list from the inventory and is read beside it (server-look.ts).
 */
const LOGIN_ROLES = rolesWhere("rolcanlogin");

/** The recorded roles alone, as the server has them now (state absent's look before taking LOGIN back). */
export function recordedRolesSql(roles: string[]): string {
  const vars = setVars({ recorded: JSON.stringify(roles) });
  return `${vars}SELECT json_build_object('recorded_roles', ${RECORDED_ROLES});\n`;
}

/**
 * One JSON object describing the server, the role, the database, and the two files the handler may
 * edit (read by the server itself with pg_read_file: one round trip instead of three on a rerun), and which
 * of vm-install's TLS files exist, so tls "debian" costs no look of its own when none does (pg_stat_file's
 * modification time: its row as a whole is never IS NOT NULL, creation being null outside Windows).
 * The 4-argument pg_read_file (missing_ok) is there in every supported major.
 */
export function inspectSql(db: string, user: string, dropInName: string): string {
  const tlsFiles = JSON.stringify(Object.values(TLS_FILE_NAMES));
  return (
    setVars({ db_name: db, db_user: user, dropin: dropInName, tls_files: tlsFiles }) +
    `SELECT json_build_object(
  'server_version', current_setting('server_version'),
  'hba_file', current_setting('hba_file'),
  'config_file', current_setting('config_file'),
  'listen_addresses', current_setting('listen_addresses'),
  'pending_restart', coalesce((SELECT json_agg(name ORDER BY name) FROM pg_settings WHERE pending_restart),
                             '[]'::json),
  'role', (SELECT json_build_object('login', rolcanlogin, 'superuser', rolsuper, 'secret', rolpassword)
           FROM pg_authid WHERE rolname = :'db_user'),
  'database', (SELECT json_build_object('owner', pg_get_userbyid(datdba)) FROM pg_database WHERE datname = :'db_name'),
  'hba_text', pg_read_file(current_setting('hba_file'), 0, 67108864, false),
  'dropin_text', pg_read_file(regexp_replace(current_setting('config_file'), '[^/]*$', '') || 'conf.d/' || :'dropin',
                              0, 67108864, true),
  'ssl', current_setting('ssl'),
  'tls_left', (SELECT json_agg(p ORDER BY i)
               FROM json_array_elements_text(:'tls_files'::json) WITH ORDINALITY AS t(n, i),
                    LATERAL (SELECT regexp_replace(current_setting('config_file'), '[^/]*$', '') || n AS p) f
               WHERE (pg_stat_file(p, true)).modification IS NOT NULL),
  'scram_iterations', current_setting('scram_iterations', true),
  'recorded_roles', ${LOGIN_ROLES}
);
`
  );
}

/** What the role/database step does: decided by planRoleAndDatabase (decisions.ts), the password made on apply. */
export interface RoleDbPlan {
  createRole: boolean;
  /** The role exists but may not log in. */
  grantLogin: boolean;
  /** The value for ALTER ROLE ... PASSWORD: a SCRAM secret (preferred) or, for non-ASCII, the password. */
  password?: string;
  createDatabase: boolean;
  /** The database exists with another owner. */
  changeOwner: boolean;
}

/**
 * The session settings that keep this session's statements out of the server log, out of sampled
 * statement logs, out of pg_stat_statements and out of pg_stat_activity, whatever the server is
 * configured with (log_statement = 'all' included; log_min_error_statement = panic keeps a failing
 * statement's text out too). Only settings this server knows are touched, so one script fits 10 to 17.
 */
const QUIET_SESSION = `DO $quiet$
DECLARE s record;
BEGIN
  FOR s IN SELECT v.name, v.value FROM (VALUES
      ('log_statement', 'none'), ('log_min_error_statement', 'panic'), ('log_min_duration_statement', '-1'),
      ('log_min_duration_sample', '-1'), ('log_transaction_sample_rate', '0'), ('track_activities', 'off'),
      ('pg_stat_statements.track_utility', 'off'), ('password_encryption', 'scram-sha-256')
    ) AS v(name, value) JOIN pg_settings p ON p.name = v.name
  LOOP
    PERFORM set_config(s.name, s.value, false);
  END LOOP;
END
$quiet$;
`;

/**
 * The statements for `plan`, each also guarded on the server (CREATE only when still missing), so a
 * role or database created by someone else in between is not an error. CREATE DATABASE cannot run in
 * a DO block or a transaction: it goes through \gexec as a statement of its own.
 */
export function applySql(plan: RoleDbPlan, db: string, user: string): string {
  let sql = QUIET_SESSION + setVars({ db_name: db, db_user: user });
  if (plan.createRole) {
    sql +=
      "SELECT format('CREATE ROLE %I LOGIN', :'db_user') " +
      "WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'db_user') \\gexec\n";
  }
  if (plan.grantLogin) sql += `ALTER ROLE :"db_user" LOGIN;\n`;
  if (plan.createRole || plan.grantLogin) {
    sql +=
      setVars({ mark: plan.createRole ? ROLE_MARK.created : ROLE_MARK.login }) +
      "SELECT format('COMMENT ON ROLE %I IS %L', :'db_user', :'mark') " +
      "WHERE shobj_description((SELECT oid FROM pg_roles WHERE rolname = :'db_user'), 'pg_authid') IS NULL \\gexec\n";
  }
  if (plan.password !== undefined) {
    sql += `${setVars({ pw: plan.password })}ALTER ROLE :"db_user" PASSWORD :'pw';\n\\unset pw\n`;
  }
  if (plan.createDatabase) {
    sql +=
      "SELECT format('CREATE DATABASE %I OWNER %I', :'db_name', :'db_user') " +
      "WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'db_name') \\gexec\n";
  }
  if (plan.changeOwner) sql += `ALTER DATABASE :"db_name" OWNER TO :"db_user";\n`;
  return sql;
}

/**
 * Takes LOGIN back from roles this project had given it (never DROP: the role keeps what it owns, and
 * its data stays), and ends their open sessions, so access is gone now and not at their next login.
 * The server checks again what planRoles decided from the state read before: roles that no longer exist,
 * already may not log in, are superusers (the bootstrap one above all) or carry no vm-install mark are
 * skipped, and only sessions of roles that may not log in now are ended.
 */
export function revokeLoginSql(roles: string[]): string {
  const ours =
    "rolname = r AND NOT rolsuper AND oid <> 10 AND " +
    `coalesce(shobj_description(oid, 'pg_authid') LIKE ${MARK_PATTERN}, false)`;
  return (
    QUIET_SESSION +
    setVars({ revoke: JSON.stringify(roles) }) +
    `SELECT format('ALTER ROLE %I NOLOGIN', r) FROM json_array_elements_text(:'revoke'::json) AS t(r)
  WHERE EXISTS (SELECT FROM pg_roles WHERE ${ours} AND rolcanlogin) \\gexec
SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
  WHERE usename IN (SELECT r FROM json_array_elements_text(:'revoke'::json) AS t(r)
                    WHERE EXISTS (SELECT FROM pg_roles WHERE ${ours} AND NOT rolcanlogin));
`
  );
}

/**
 * After writing the drop-in and pg_hba.conf, before any reload: what the server would read from the
 * files now (pg_file_settings and pg_hba_file_rules parse them on the spot).
 */
export const CONFIG_CHECK_SQL = `SELECT json_build_object(
  'listen', coalesce((SELECT json_agg(json_build_object('file', sourcefile, 'line', sourceline, 'setting', setting,
                                                    'error', error) ORDER BY seqno)
                      FROM pg_file_settings WHERE name = 'listen_addresses'), '[]'::json),
  'config_errors', coalesce((SELECT json_agg(json_build_object('file', sourcefile, 'line', sourceline, 'error', error))
                      FROM pg_file_settings WHERE name IS NULL AND error IS NOT NULL), '[]'::json),
  'hba_errors', coalesce((SELECT json_agg(json_build_object('line', line_number, 'error', error) ORDER BY line_number)
                      FROM pg_hba_file_rules WHERE error IS NOT NULL), '[]'::json)
);
`;

export interface ConfigCheck {
  listen: { file: string | null; line: number | null; setting: string | null; error: string | null }[];
  config_errors: { file: string | null; line: number | null; error: string }[];
  hba_errors: { line: number; error: string }[];
}

/** After a restart or reload: the live value and anything still waiting for a restart. */
export const SETTLED_SQL = `SELECT json_build_object(
  'listen_addresses', current_setting('listen_addresses'),
  'pending_restart', coalesce((SELECT json_agg(name ORDER BY name) FROM pg_settings WHERE pending_restart),
                             '[]'::json)
);
`;

export interface Settled {
  listen_addresses: string;
  pending_restart: string[];
}
