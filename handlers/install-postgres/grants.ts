// install-postgres' part of the inventory (handlers/common/grants.ts): the pg_hba.conf entries it wrote,
// per file, and the roles it created or gave LOGIN, per cluster. A role that had LOGIN before the first
// run, or a line the admin wrote, is never listed, so a later run never takes it away.

import { GRANTS_FILE, type Inventory, stringList, withSection, writeGrants } from "../common/grants";
import type { Run } from "./run";
import { psql } from "./server";
import { revokeLoginSql } from "./sql";

export interface PostgresGrants {
  /** pg_hba.conf path -> entries this installer wrote there ("hostssl myapp app_user 10.0.0.0/8 scram-sha-256"). */
  hba: Record<string, string[]>;
  /** Cluster ("15/main") -> roles this installer created or gave LOGIN. */
  roles: Record<string, string[]>;
}

function listMap(value: unknown): Record<string, string[]> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return {};
  const out: Record<string, string[]> = {};
  for (const [key, list] of Object.entries(value)) if (stringList(list).length) out[key] = stringList(list);
  return out;
}

/** The postgres section, or undefined when no run of this installer has recorded anything yet. */
export function postgresSection(inventory: Inventory): PostgresGrants | undefined {
  const raw = inventory.postgres as { hba?: unknown; roles?: unknown } | undefined;
  if (typeof raw !== "object" || raw === null) return undefined;
  return { hba: listMap(raw.hba), roles: listMap(raw.roles) };
}

/**
 * Pure. Recorded roles other than `user` that may still log in lose LOGIN; the record keeps `user` when
 * it was recorded already or this run gave it LOGIN (created it, or LOGIN was missing).
 */
export function planRoles(recorded: string[], user: string, grantedNow: boolean, canLogin: Record<string, boolean>): { revoke: string[]; record: string[] } {
  const revoke = recorded.filter((r) => r !== user && canLogin[r] === true);
  return { revoke, record: recorded.includes(user) || grantedNow ? [user] : [] };
}

/** ALTER ROLE ... NOLOGIN for `roles` (see revokeLoginSql), said in changes and revoked. */
export async function revokeRoles(run: Run, port: number, roles: string[]): Promise<void> {
  if (!roles.length) return;
  await run.progress.step(
    `revoking LOGIN from ${roles.join(", ")}`,
    () => psql(run.remote, port, revokeLoginSql(roles), "psql (revoking LOGIN)", { mutates: true }),
    "revoke",
  );
  reportRevokedRoles(run, roles);
}

/** The revocations said in the result, as made (or, in a check, as a real run would make them). */
export function reportRevokedRoles(run: Pick<Run, "changes" | "revoked">, roles: string[]): void {
  for (const r of roles) {
    run.changes.push(
      `revoked: role ${r} may no longer log in (NOLOGIN, its sessions ended; vm-install had created it or given it LOGIN; the role, what it owns and its data are kept)`,
    );
    run.revoked.push(`role ${r}: LOGIN`);
  }
}

/** `old` with this file's entries and this cluster's roles replaced (empty lists dropped). */
export function updatedSection(old: PostgresGrants | undefined, hbaFile: string, owned: string[], cluster: string, roles: string[]): PostgresGrants {
  const hba = { ...(old?.hba ?? {}), [hbaFile]: owned };
  const byCluster = { ...(old?.roles ?? {}), [cluster]: roles };
  if (!owned.length) delete hba[hbaFile];
  if (!roles.length) delete byCluster[cluster];
  return { hba, roles: byCluster };
}

function canonical(g: PostgresGrants | undefined): string {
  const sorted = (m: Record<string, string[]> = {}) =>
    Object.keys(m)
      .sort()
      .map((k) => [k, [...m[k]].sort()]);
  return JSON.stringify([sorted(g?.hba), sorted(g?.roles)]);
}

/** Writes the inventory when this installer's section changed. */
export async function saveGrants(run: Run, inventory: Inventory, old: PostgresGrants | undefined, next: PostgresGrants): Promise<void> {
  if (canonical(old) === canonical(next)) return;
  await run.progress.step(`recording in ${GRANTS_FILE}`, () => writeGrants(run.remote, withSection(inventory, "postgres", next)), "grants");
}
