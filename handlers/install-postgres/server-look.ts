// The look at a running cluster, as root: the grants inventory (root's), the server's own account of the
// role, the database and its settings (psql as postgres), and who listens on the cluster's port, for the
// login check when nothing changes before it. A rerun reads it inside the kit's first look, through
// `sudo -n` once per running cluster (serverLooksProbe); where that gave no answer for the chosen cluster it
// is one exec of its own. A psql that fails here is run again on its own, so its error reads as before.

import { quote } from "../../lib/shared/shell-quote";
import { GRANTS_LOOK, grantsFrom, type Inventory } from "../common/grants";
import { defineLook, type Fact, LookCorrupted, rootFact, withEnv } from "../common/vm-facts";
import { type ListenerFacts, listenerFacts, listenerProbes } from "./listener";
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
 * probe (the SQL is the look's own, nothing secret, and nothing the VM wrote). `port`: a number or a sh word.
 */
export function psqlProbeCommand(port: number | string, sql: string): string {
  return (
    `export PGCLIENTENCODING=UTF8 LC_MESSAGES=C; echo ${Buffer.from(sql).toString("base64")} | base64 -d | ` +
    `(cd / && psql -X -q -A -t -v ON_ERROR_STOP=1 -p ${port} -d postgres -f -)`
  );
}

/**
 * The look; its probes take the cluster's port and unit from $VMI_PORT and $VMI_UNIT: bound to `cluster`'s
 * when it is given (each probe exports them), else set by the script it runs in (serverLooksProbe's loop).
 */
export function serverLook(event: Pick<Run["event"], "db_name" | "db_user">, cluster?: Cluster) {
  const env = cluster && { VMI_PORT: String(cluster.port), VMI_UNIT: clusterUnit(cluster) };
  const probes = [
    ...GRANTS_LOOK.probes,
    {
      name: "state",
      command: psqlProbeCommand('"$VMI_PORT"', inspectSql(event.db_name, event.db_user, DROPIN_NAME)),
      writer: "service",
      readAs: "postgres",
      use: "the role, the database, listen_addresses, pg_hba.conf and the drop-in as the server reports them",
    },
    ...listenerProbes("$VMI_PORT", '"$VMI_UNIT"'),
  ] as const;
  return defineLook("the look at the running cluster", withEnv(probes, env));
}

/**
 * The server look once per cluster pg_lsclusters (run as postgres) lists whose unit is active, as
 * root through `sudo -n` (nothing when sudo asks for a password), within 20 s: one line per cluster,
 * `major/name:port` (checked in sh as clusterUnit and a port are) and the base64 of that cluster's
 * look. The lines are root's script's own; what they carry is framed per probe and typed by serverLook.
 */
export function serverLooksProbe(event: Pick<Run["event"], "db_name" | "db_user">) {
  const perCluster =
    "command -v pg_lsclusters >/dev/null || exit 0; " +
    // pg_lsclusters reads the postgres user's files: with its rights, so a link planted there leads nowhere more.
    "runuser -u postgres -- pg_lsclusters -h </dev/null | while read -r v n p _; do " +
    'case "$v" in [1-9][0-9] | [6-9].[0-9]) ;; *) continue ;; esac; ' +
    'case "$n" in "" | . | .. | *[!A-Za-z0-9_.-]*) continue ;; esac; ' +
    'case "$p" in "" | *[!0-9]*) continue ;; esac; ' +
    'VMI_PORT=$p VMI_UNIT="postgresql@$v-$n"; export VMI_PORT VMI_UNIT; ' +
    'systemctl is-active -q "$VMI_UNIT" </dev/null || continue; ' +
    `printf '%s/%s:%s ' "$v" "$n" "$p"; ` +
    `{ ${serverLook(event).script.replace(/\n/g, "; ")}; } </dev/null | base64 -w0; echo; done`;
  return {
    name: "server_looks",
    command: `timeout -k 2 20 sudo -n sh -c ${quote(`export LC_ALL=C; ${perCluster}`)}`,
    writer: "root",
    use: "the look at the running cluster, per cluster, read in the first look (its probes are listed below)",
  } as const;
}

/** The chosen cluster's look from the first look's server_looks answer; undefined: not there, or not whole. */
function foldedLook(event: Run["event"], cluster: Cluster, answer: Fact | undefined) {
  if (answer?.writer !== "root" || answer.code !== 0) return undefined;
  const key = `${cluster.major}/${cluster.name}:${cluster.port} `;
  const lines = answer.text.split("\n").filter((l) => l.startsWith(key));
  if (lines.length !== 1) return undefined;
  try {
    return serverLook(event).parse(Buffer.from(lines[0].slice(key.length), "base64").toString("utf8"));
  } catch (e) {
    if (e instanceof LookCorrupted) return undefined;
    throw e;
  }
}

/**
 * Grants, state and listeners of `cluster`: from the first look when it read them (`firstLook`), else in
 * one exec; a failed psql is run again alone to say why.
 */
export async function lookAtServer(
  run: Run,
  cluster: Cluster,
  firstLook?: (name: string) => Fact | undefined,
): Promise<ServerSeen> {
  const { remote, progress, event } = run;
  const look = serverLook(event, cluster);
  const facts =
    foldedLook(event, cluster, firstLook?.("server_looks")) ??
    (await progress.step(
      "reading the grants inventory, the role, the database and the settings",
      async () => {
        const env = { LC_ALL: "C" };
        const r = await remote.run(look.script, { sudo: true, env, label: STATE_LABEL, timeoutMs: 120_000 });
        return look.parse(r.stdout);
      },
      "inspect_sql",
    ));
  return serverSeenFrom(run, cluster, (name) => facts.get(name as never));
}

/** serverLook's probes bound to `cluster`, as the look after installing the server package reads them (apply.ts). */
export function serverProbesFor(cluster: Cluster, event: Pick<Run["event"], "db_name" | "db_user">) {
  return serverLook(event, cluster).probes;
}

/** The server look's answers, however they were read (`answer`: by probe name), as what inspect needs. */
export async function serverSeenFrom(
  run: Run,
  cluster: Cluster,
  answer: (name: string) => Fact | undefined,
): Promise<ServerSeen> {
  const get = (name: string) => {
    const fact = answer(name);
    if (!fact) throw new Error(`the look at the running cluster: no probe named ${name} (a bug in install-postgres)`);
    return fact;
  };
  const inventory = grantsFrom(rootFact(get("grants"), "the grants inventory"));
  const found = get("state");
  const state =
    found.code === 0
      ? checkedState(run, parsePsqlJson<ServerState>(found.text, STATE_LABEL))
      : await readServerState(run, cluster.port);
  const listener = {
    port: cluster.port,
    unit: clusterUnit(cluster),
    ...listenerFacts(get),
  };
  return { inventory, state, listener };
}
