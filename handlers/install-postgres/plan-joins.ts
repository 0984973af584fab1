// Changes of a plan made in one exec where they come one right after the other (issue 30: every exec is a
// round trip over the platform's link): the role and database's SQL, then the configuration files and the
// server's check of them, as postgres. The joined change keeps both changes' words (and foreseen lines), in
// order, and a
// failure still names the part that failed (sql-first.ts).

import type { PostgresChange } from "./plan-change";

/** `changes` with each change that has SQL to give (`joined.sql`) joined to a next one that takes it. */
export function joinAdjacent(changes: readonly PostgresChange[]): PostgresChange[] {
  const out: PostgresChange[] = [];
  for (const change of changes) {
    const before = out.at(-1);
    const sql = before?.joined?.sql;
    const after = change.joined?.after;
    if (!before || !sql || !after) {
      out.push(change);
      continue;
    }
    out[out.length - 1] = {
      kind: before.kind,
      what: [...before.what, ...change.what],
      why: `${before.why}; ${change.why}`,
      ...(change.revoked ? { revoked: change.revoked } : {}),
      ...(before.foreseen || change.foreseen
        ? { foreseen: [...(before.foreseen ?? []), ...(change.foreseen ?? [])] }
        : {}),
      apply: (run) => after(run, sql(run)),
    };
  }
  return out;
}
