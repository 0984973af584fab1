// The look at a running cluster, one SSH exec as root where a rerun made three in a row (issue 30): the
// grants inventory (root's), the server's own account of the role, the database and its settings (psql as
// postgres), and who listens on the cluster's port, for the login check when nothing changes before it.
// A psql that fails here is run again on its own, so its error reads as before.

import { GRANTS_LOOK, grantsFrom, type Inventory } from "../common/grants";
import { defineLook } from "../common/vm-facts";
import { type ListenerFacts, listenerLook } from "./listener";
import { type Cluster, clusterUnit, DROPIN_NAME, parsePsqlJson, type ServerState } from "./pg";
import { checkedState, readServerState, STATE_LABEL } from "./role-database";
import type { Run } from "./run";
import { inspectSql } from "./sql";

/** The listener look's answers as the server look read them, for the cluster's port and unit. */
export type ListenerSeen = ListenerFacts & { port: number; unit: string };

export interface ServerSeen {
  inventory: Inventory;
  state: ServerState;
  listener: ListenerSeen;
}

/**
 * psql as postgres with `sql` on its stdin, carried in base64 so that the look's script keeps one line per
 * probe (the SQL is the look's own, nothing secret, and nothing the VM wrote).
 */
export function psqlProbeCommand(port: number, sql: string): string {
  return (
    `export PGCLIENTENCODING=UTF8 LC_MESSAGES=C; echo ${Buffer.from(sql).toString("base64")} | base64 -d | ` +
    `(cd / && psql -X -q -A -t -v ON_ERROR_STOP=1 -p ${port} -d postgres -f -)`
  );
}

export function serverLook(cluster: Cluster, event: Run["event"]) {
  const unit = clusterUnit(cluster);
  return defineLook("the look at the running cluster", [
    ...GRANTS_LOOK.probes,
    {
      name: "state",
      command: psqlProbeCommand(cluster.port, inspectSql(event.db_name, event.db_user, DROPIN_NAME)),
      writer: "service",
      readAs: "postgres",
      use: "the role, the database, listen_addresses, pg_hba.conf and the drop-in as the server reports them",
    },
    ...listenerLook(cluster.port, unit).probes,
  ] as const);
}

/** Grants, state and listeners of `cluster` in one exec; a failed psql is run again alone to say why. */
export async function lookAtServer(run: Run, cluster: Cluster): Promise<ServerSeen> {
  const { remote, progress } = run;
  const look = serverLook(cluster, run.event);
  const facts = await progress.step(
    "reading the grants inventory, the role, the database and the settings",
    async () =>
      look.parse(
        (await remote.run(look.script, { sudo: true, env: { LC_ALL: "C" }, label: STATE_LABEL, timeoutMs: 120_000 }))
          .stdout,
      ),
    "inspect_sql",
  );
  const inventory = grantsFrom(facts.get("grants"));
  const answer = facts.get("state");
  const state =
    answer.code === 0
      ? checkedState(run, parsePsqlJson<ServerState>(answer.text, STATE_LABEL))
      : await readServerState(run, cluster.port);
  const listener = {
    port: cluster.port,
    unit: clusterUnit(cluster),
    listeners: facts.get("listeners"),
    mainPid: facts.get("main_pid"),
    holders: facts.get("holders"),
  };
  return { inventory, state, listener };
}
