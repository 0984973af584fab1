// The plan's role and database, and LOGIN taken back from roles vm-install gave it that the settings no
// longer name (plan.ts planRunning runs it first): the decisions are decisions.ts' and grants.ts', pure.

import * as apply from "./apply";
import type { PostgresEvent } from "./decisions";
import { planRoleAndDatabase } from "./decisions";
import { planRoles, revokedRoleLines } from "./grants";
import type { PostgresChange, Said } from "./plan-change";
import { ROLE_DB_LABEL, roleDatabaseSql } from "./role-database";
import type { RunningServer } from "./state";

/** The role and database, and LOGIN taken back from roles no longer named; `record`: the roles to keep listed. */
export function planAccess(
  event: PostgresEvent,
  port: number,
  cluster: string,
  { state, recorded }: RunningServer,
): { changes: PostgresChange[]; said: Said[]; record: string[] } {
  const changes: PostgresChange[] = [];
  const said: Said[] = [];
  const roleDb = planRoleAndDatabase(state, event);
  const grantedLogin = roleDb.plan.createRole || roleDb.plan.grantLogin;
  if (roleDb.changes.length) {
    changes.push({
      kind: "role-database",
      what: roleDb.changes,
      why: "the role or the database differs from the settings",
      apply: (run) => apply.roleAndDatabase(run, port, roleDb.plan, roleDb.changes),
      joined: {
        sql: (run) => ({
          sql: roleDatabaseSql(run, roleDb.plan),
          label: ROLE_DB_LABEL,
          step: roleDb.changes.join("; "),
        }),
      },
    });
  } else {
    said.push({
      line:
        `role ${event.db_user} (password unchanged) and database ${event.db_name} ` +
        `(owner ${event.db_user}) are as wanted`,
    });
  }
  const roles = planRoles(recorded?.roles[cluster] ?? [], event.db_user, grantedLogin, state.recorded_roles ?? {});
  for (const line of roles.skipped) said.push({ line, warning: true });
  if (roles.revoke.length) {
    changes.push({
      kind: "revoke-login",
      ...revokedRoleLines(roles.revoke),
      why: "the inventory lists roles vm-install gave LOGIN that the settings no longer name",
      apply: (run) => apply.revokeLogin(run, port, roles.revoke),
    });
  }
  return { changes, said, record: roles.record };
}
