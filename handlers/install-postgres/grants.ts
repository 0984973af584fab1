// install-postgres' part of the inventory (handlers/common/grants.ts): the pg_hba.conf entries it wrote,
// per file, and the roles it created or gave LOGIN, per cluster. A role that had LOGIN before the first
// run, or a line the admin wrote, is never listed, so a later run never takes it away.

import { pgRoleName } from "../../lib/shared/names";
import { GRANTS_FILE, type Inventory, stringList } from "../common/grants";
import type { RecordedRole } from "./pg";
import type { Run } from "./run";
import { psql } from "./server";
import { revokeLoginSql } from "./sql";

export interface PostgresGrants {
  /** pg_hba.conf path -> entries this installer wrote there ("hostssl myapp app_user 10.0.0.0/8 scram-sha-256"). */
  hba: Record<string, string[]>;
  /** Cluster ("15/main") -> roles this installer created or gave LOGIN. */
  roles: Record<string, string[]>;
  /** "15/main:myapp" (cluster:database) -> extensions this installer created there. */
  extensions?: Record<string, string[]>;
}

function listMap(value: unknown): Record<string, string[]> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return {};
  const out: Record<string, string[]> = {};
  for (const [key, list] of Object.entries(value)) if (stringList(list).length) out[key] = stringList(list);
  return out;
}

/** The postgres section, or undefined when no run of this installer has recorded anything yet. */
export function postgresSection(inventory: Inventory): PostgresGrants | undefined {
  const raw = inventory.postgres as { hba?: unknown; roles?: unknown; extensions?: unknown } | undefined;
  if (typeof raw !== "object" || raw === null) return undefined;
  const extensions = listMap(raw.extensions);
  return {
    hba: listMap(raw.hba),
    roles: listMap(raw.roles),
    ...(Object.keys(extensions).length ? { extensions } : {}),
  };
}

/**
 * The inventory's role names that are names vm-install could have created (pgRoleName); the others are
 * reported by planRoles.
 */
export function validRoleNames(recorded: string[]): string[] {
  return [...new Set(recorded)].filter((r) => {
    const problems: string[] = [];
    pgRoleName(r, "role", problems);
    return problems.length === 0;
  });
}

/**
 * Pure. The inventory is root's file, but a hand edit can put any name in it, so it is not taken on its
 * word: a recorded role other than `user` that may still log in loses LOGIN only when its name is one
 * vm-install creates, it is not a superuser (the bootstrap superuser above all) and the server shows the
 * mark vm-install left on it (sql.ts ROLE_MARK). Every other name is skipped, with the reason, and is
 * not recorded again. The record keeps `user` when it was recorded already or this run gave it LOGIN.
 */
export function planRoles(
  recorded: string[],
  user: string,
  grantedNow: boolean,
  facts: Record<string, RecordedRole>,
): { revoke: string[]; record: string[]; skipped: string[] } {
  const valid = validRoleNames(recorded);
  const revoke: string[] = [];
  const skipped: string[] = [];
  const skip = (r: string, why: string) =>
    skipped.push(
      `LOGIN of role ${JSON.stringify(r)} not taken back although ${GRANTS_FILE} lists it: ${why}; ` +
        "its entry is dropped from the inventory",
    );
  for (const r of [...new Set(recorded)]) {
    if (r === user) continue;
    const f = facts[r];
    if (!valid.includes(r))
      skip(
        r,
        "not a role name vm-install creates (lowercase letters, digits, _; not postgres, pg_* or a reserved word)",
      );
    else if (!f?.login)
      continue; // gone, or already may not log in: nothing to take back
    else if (f.bootstrap) skip(r, "it is the bootstrap superuser, never revoked");
    else if (f.superuser) skip(r, "it is a superuser, never revoked");
    else if (!f.marked)
      skip(
        r,
        "it carries no vm-install mark, so vm-install did not create it or give it LOGIN " +
          "(an entry written by hand, or by a version that left no mark)",
      );
    else revoke.push(r);
  }
  return { revoke, record: recorded.includes(user) || grantedNow ? [user] : [], skipped };
}

/** ALTER ROLE ... NOLOGIN for `roles` (see revokeLoginSql). */
export async function revokeRoles(run: Run, port: number, roles: string[]): Promise<void> {
  await run.progress.step(
    `revoking LOGIN from ${roles.join(", ")}`,
    () => psql(run.remote, port, revokeLoginSql(roles), "psql (revoking LOGIN)", { mutates: true }),
    "revoke",
  );
}

/** The revocations' lines in the result: `what` for `changes`, `revoked` for `revoked`. */
export function revokedRoleLines(roles: string[]): { what: string[]; revoked: string[] } {
  return {
    what: roles.map(
      (r) =>
        `revoked: role ${r} may no longer log in (NOLOGIN, its sessions ended; vm-install had created it or ` +
        "given it LOGIN; the role, what it owns and its data are kept)",
    ),
    revoked: roles.map((r) => `role ${r}: LOGIN`),
  };
}

/** `old` with this file's entries and this cluster's roles replaced (empty lists dropped). */
export function updatedSection(
  old: PostgresGrants | undefined,
  hbaFile: string,
  owned: string[],
  cluster: string,
  roles: string[],
): PostgresGrants {
  const hba = { ...(old?.hba ?? {}), [hbaFile]: owned };
  const byCluster = { ...(old?.roles ?? {}), [cluster]: roles };
  if (!owned.length) delete hba[hbaFile];
  if (!roles.length) delete byCluster[cluster];
  return { hba, roles: byCluster, ...(old?.extensions ? { extensions: old.extensions } : {}) };
}

function canonical(g: PostgresGrants | undefined): string {
  const sorted = (m: Record<string, string[]> = {}) =>
    Object.keys(m)
      .sort()
      .map((k) => [k, [...m[k]].sort()]);
  return JSON.stringify([sorted(g?.hba), sorted(g?.roles), sorted(g?.extensions)]);
}

/** The section differs from what is recorded (order aside): the inventory is to be written. */
export function sectionChanged(old: PostgresGrants | undefined, next: PostgresGrants): boolean {
  return canonical(old) !== canonical(next);
}
