// Role, password, database: read with the server's settings and files in one read-only query, decided
// by planRoleAndDatabase (decisions.ts), changed in one psql session.

import { planRoleAndDatabase, refuseSuperuser, requireSafePaths, requireSsl } from "./decisions";
import { validRoleNames } from "./grants";
import { DROPIN_NAME, type ServerState } from "./pg";
import type { Run } from "./run";
import { scramSecret } from "./scram";
import { psql, psqlJson } from "./server";
import { applySql, inspectSql, planIsEmpty, type RoleDbPlan } from "./sql";

/** The server's state (see inspectSql); `recordedRoles`: the roles the inventory lists for this cluster. */
export async function readServerState(run: Run, port: number, recordedRoles: string[]): Promise<ServerState> {
  const { event, remote, progress } = run;
  const label = "psql (reading the role, the database and the settings)";
  const state = await progress.step(
    "reading the role, the database and the settings",
    () =>
      psqlJson<ServerState>(
        remote,
        port,
        inspectSql(event.db_name, event.db_user, DROPIN_NAME, validRoleNames(recordedRoles)),
        label,
      ),
    "inspect_sql",
  );
  // Before any change: a check fails here too, as the real run would.
  requireSafePaths(state);
  refuseSuperuser(event, state);
  requireSsl(event, state);
  return state;
}

/** What `state` calls for; an ASCII password's SCRAM secret is made here and registered as a secret. */
export function planRoleDatabase(
  run: Run,
  state: ServerState,
): { plan: RoleDbPlan; changes: string[]; grantedLogin: boolean } {
  const { plan, changes } = planRoleAndDatabase(state, run.event, (pw) => {
    const secret = scramSecret(pw);
    run.secrets.add(secret, "db_password_scram");
    return secret;
  });
  return { plan, changes, grantedLogin: plan.createRole || plan.grantLogin };
}

/** `recordedRoles`: the roles the inventory lists for this cluster. grantedLogin: this run gave the role LOGIN. */
export async function ensureRoleAndDatabase(
  run: Run,
  port: number,
  recordedRoles: string[],
): Promise<{ state: ServerState; grantedLogin: boolean }> {
  const { event, remote, progress } = run;
  const db = event.db_name;
  const user = event.db_user;
  const state = await readServerState(run, port, recordedRoles);
  const { plan, changes, grantedLogin } = planRoleDatabase(run, state);
  if (planIsEmpty(plan)) {
    progress.info(`role ${user} (password unchanged) and database ${db} (owner ${user}) are as wanted`);
    return { state, grantedLogin };
  }
  await progress.step(
    changes.join("; "),
    () => psql(remote, port, applySql(plan, db, user), "psql (role and database)", { mutates: true }),
    "role_db",
  );
  run.changes.push(...changes);
  return { state, grantedLogin };
}
