// Role, password, database: read with the server's settings and files in one read-only query, decided
// by planRoleAndDatabase (decisions.ts), changed in one psql session.

import { type RoleDbDecision, refuseSuperuser, requireSafePaths, requireSsl } from "./decisions";
import { DROPIN_NAME, type ServerState } from "./pg";
import type { Run } from "./run";
import { postgresSaslprep } from "./saslprep";
import { scramSecret } from "./scram";
import { psql, psqlJson } from "./server";
import { applySql, inspectSql } from "./sql";

export const STATE_LABEL = "psql (reading the role, the database and the settings)";

/** The server's state (see inspectSql), on its own: server-look.ts reads it with the inventory and listeners. */
export async function readServerState(run: Run, port: number): Promise<ServerState> {
  const { event, remote, progress } = run;
  const state = await progress.step(
    "reading the role, the database and the settings",
    () => psqlJson<ServerState>(remote, port, inspectSql(event.db_name, event.db_user, DROPIN_NAME), STATE_LABEL),
    "inspect_sql",
  );
  return checkedState(run, state);
}

/** Before any change, in a check too, as the real run would: paths, a superuser db_user, ssl for hostssl. */
export function checkedState(run: Run, state: ServerState): ServerState {
  requireSafePaths(state);
  refuseSuperuser(run.event, state);
  requireSsl(run.event, state);
  return state;
}

export const ROLE_DB_LABEL = "psql (role and database)";

/** The role and database changed as `plan` says, in one psql session; `lines`: the plan's words. */
export async function roleAndDatabase(run: Run, port: number, plan: RoleDbDecision, lines: string[]): Promise<void> {
  const sql = roleDatabaseSql(run, plan);
  await run.progress.step(
    lines.join("; "),
    () => psql(run.remote, port, sql, ROLE_DB_LABEL, { mutates: true }),
    "role_db",
  );
}

/** The SQL that makes the role and database what `plan` says (the password's secret registered). */
export function roleDatabaseSql(run: Run, plan: RoleDbDecision): string {
  const { setPassword, ...rest } = plan;
  const password = setPassword ? passwordValue(run) : undefined;
  return applySql({ ...rest, password }, run.event.db_name, run.event.db_user);
}

/**
 * What ALTER ROLE ... PASSWORD is given: the SCRAM-SHA-256 secret made here (registered as a secret) where what
 * PostgreSQL's SASLprep makes of the password is certain (saslprep.ts), else the password itself, which the
 * server prepares and hashes.
 */
function passwordValue(run: Run): string {
  const pw = run.event.db_password;
  const prepared = postgresSaslprep(pw);
  if (prepared.length !== 1) return pw;
  const secret = scramSecret(prepared[0]);
  run.secrets.add(secret, "db_password_scram");
  return secret;
}
