// What install-postgres would change, decided from what it saw (state.ts) and nothing else: no I/O, so a
// check reports exactly this plan's words and a run applies it. A change that alters what later ones
// depend on (the server package, a new or started cluster) is marked replan: a run looks again after it
// and plans the rest from what is really there. Past such a change a check can only predict (Debian's
// defaults for a new cluster) or say what it could not see: those lines are foreseen (plan-preview.ts).

import { emptyInventory } from "../common/grants";
import type { Note } from "../common/installer-model";
import * as apply from "./apply";
import { type ConfigPlan, planConfiguration, unappliedWarnings } from "./configuration";
import {
  chooseCluster,
  chooseMajor,
  clusterCreatedLine,
  clusterStartedLine,
  installedLine,
  newClusterOf,
  type PostgresEvent,
  serverSource,
} from "./decisions";
import { extensionChanges } from "./extension-changes";
import { planExtensions, withPreload } from "./extensions";
import { recordedExtensions, withExtensionRecord } from "./extensions-server";
import { sectionChanged, updatedSection } from "./grants";
import { configurationChanges, planParameters, restartNeeded, takenBackLines, withParameters } from "./parameters";
import { type Cluster, clusterUnit, dropInPath, normalizeListen, type ServerState, shortServerVersion } from "./pg";
import { legacyPgdgLine, pgdgSetupLine } from "./pgdg";
import { planAccess } from "./plan-access";
import type { PostgresChange, Said } from "./plan-change";
import { joinAdjacent } from "./plan-joins";
import { previewPackages, previewPgdg, previewServerPackage } from "./plan-preview";
import type { ServerFacts } from "./report";
import type { Run } from "./run";
import type { PostgresState, RunningServer } from "./state";
import { planTls } from "./tls-plan";
export interface PostgresPlan {
  changes: PostgresChange[];
  said: Said[];
  /** The report's facts as far as the plan knows them (a check reports these). */
  facts: ServerFacts;
  /** Where the TCP login is tried: known only with a running server. */
  login?: { port: number; listen: string; hbaFile: string; unit: string };
}

export function planPostgres(state: PostgresState, event: PostgresEvent): PostgresPlan {
  const { installation, os } = state;
  const major = chooseMajor(event, os, installation.packages);
  if (!installation.packages.some((p) => p.major === major)) return planServerPackage(state, event, major);

  const changes: PostgresChange[] = [];
  const legacy = installation.legacyPgdgKeyring; // root's word (a RootFact) that the served key file is there
  if (legacy)
    changes.push({
      kind: "pgdg-keyring",
      what: [legacyPgdgLine(event.repo_url)],
      why: "apt trusts every key in the served file an earlier version kept: rebuilt now, not when PGDG is next needed",
      apply: (run) => apply.rebuildPgdgKeyring(run, legacy),
      preview: async (run) => ({ what: await previewPgdg(run) }),
    });
  const chosen = chooseCluster(installation, major);
  const said: Said[] = chosen.warnings.map((line) => ({ line, warning: true }));
  const { cluster } = chosen;
  if (!cluster) {
    const next = predictNewCluster(event, major, "already installed", installation.clusters);
    changes.push({
      kind: "cluster-create",
      what: [clusterCreatedLine(major)],
      why: "the package creates main unless createcluster.conf says otherwise, or it was dropped since",
      replan: true,
      apply: (run) => apply.createCluster(run, major),
      foreseen: next.past,
    });
    return joined({ changes, said }, next);
  }
  const name = `${cluster.major}/${cluster.name}`;
  const unit = clusterUnit(cluster);
  const active = installation.units[unit] ?? "unknown";
  if (active !== "active") return joined({ changes, said }, planStart(event, state, major, cluster, active));
  // inspect reads a running cluster's server; without it there is nothing to plan from.
  if (!state.server) throw new Error(`${unit} is active but its server was not read (a bug in install-postgres)`);
  const running = planRunning(event, cluster, state.server);
  const serverFacts = facts(major, "already installed", name, cluster.port, running.config.listen);
  serverFacts.serverVersion = shortServerVersion(state.server.state.server_version);
  return {
    changes: [...changes, ...running.changes],
    said: [...said, ...running.said],
    facts: serverFacts,
    login: { port: cluster.port, listen: running.config.listen, hbaFile: state.server.state.hba_file, unit },
  };
}

/** A stopped cluster: started, then looked at; a check cannot see past it (psql needs a running server). */
function planStart(
  event: PostgresEvent,
  state: PostgresState,
  major: string,
  cluster: Cluster,
  was: string,
): PostgresPlan {
  const name = `${cluster.major}/${cluster.name}`;
  const unit = clusterUnit(cluster);
  const blind: Note = {
    line:
      `${unit} is ${was}, so the role, the database and the configuration files could not be inspected ` +
      "(psql needs a running server): what a real run would change there is not listed. " +
      "Run the job (it starts the cluster first), or start the cluster and check again",
    warning: true,
  };
  const start: PostgresChange = {
    kind: "cluster-start",
    what: [clusterStartedLine(name, was)],
    why: `${unit} is ${was}`,
    replan: true,
    apply: (run) => apply.startCluster(run, cluster, state.installation, was),
    foreseen: [blind],
  };
  const listen = normalizeListen(event.listen_addresses);
  return { changes: [start], said: [], facts: facts(major, "already installed", name, cluster.port, listen) };
}

function facts(
  major: string,
  installedFrom: ServerFacts["installedFrom"],
  cluster: string,
  port: number,
  listen: string,
): ServerFacts {
  return { serverVersion: "", major, installedFrom, cluster, port, listen, restarted: false, reloaded: false };
}

function joined(first: Pick<PostgresPlan, "changes" | "said">, then: PostgresPlan): PostgresPlan {
  return { ...then, changes: [...first.changes, ...then.changes], said: [...first.said, ...then.said] };
}

/** The server package missing: install it (PGDG first for a major the distribution does not ship). */
function planServerPackage(state: PostgresState, event: PostgresEvent, major: string): PostgresPlan {
  const { os } = state;
  const { own, name } = serverSource(os, major);
  // The package creates the cluster "main" (postgresql-common's default), so no change creates one.
  const next = predictNewCluster(event, major, own ? "distribution" : "pgdg", state.installation.clusters);
  const install: PostgresChange = {
    kind: "server-package",
    what: [...(own ? [] : [pgdgSetupLine(event, os)]), installedLine(major)],
    why: `postgresql-${major} is not installed`,
    replan: true,
    apply: (run) =>
      apply.installServer(run, major, newClusterOf(major, state.installation.clusters), state.serverPackage),
    preview: (run) => previewServerPackage(run, own, name, major, state.serverPackage),
    foreseen: next.past,
  };
  return joined({ changes: [install], said: [] }, next);
}

/** A cluster as Debian's packaging creates it. Its stock pg_hba.conf lines are not needed: ours are appended. */
function newClusterState(major: string): ServerState {
  const dir = `/etc/postgresql/${major}/main`;
  return {
    server_version: "",
    hba_file: `${dir}/pg_hba.conf`,
    config_file: `${dir}/postgresql.conf`,
    listen_addresses: "localhost",
    pending_restart: [],
    role: null,
    database: null,
    hba_text: "",
    dropin_text: null,
    ssl: "on",
  };
}

/**
 * What a run does to the cluster `major`/main once it exists; `clusters`: the others, whose ports it will not
 * take. `past`: what the plan would say of it, foreseen beside the change that makes the cluster.
 */
function predictNewCluster(
  event: PostgresEvent,
  major: string,
  installedFrom: ServerFacts["installedFrom"],
  clusters: Cluster[],
): PostgresPlan & { past: Note[] } {
  const cluster = newClusterOf(major, clusters);
  const { port } = cluster;
  const server: RunningServer = { state: newClusterState(major), inventory: emptyInventory() };
  const running = planRunning(event, cluster, server, { predicted: true });
  const past: Note[] = [
    {
      line:
        `no cluster ${major}/main yet: ` +
        "what follows is predicted for a new one with Debian's defaults, not inspected",
    },
    ...running.said,
  ];
  return {
    changes: running.changes,
    said: [],
    past,
    facts: facts(major, installedFrom, `${major}/main`, port, running.config.listen),
  };
}

/**
 * A running cluster's changes, in a run's order: role and database, LOGIN taken back, configuration
 * files, restart or reload, the inventory. `predicted`: a state assumed, not read (no inventory to keep).
 */
function planRunning(
  event: PostgresEvent,
  cluster: Cluster,
  server: RunningServer,
  opts: { predicted?: boolean } = {},
): { changes: PostgresChange[]; said: Said[]; config: ConfigPlan } {
  const { state, recorded } = server;
  const name = `${cluster.major}/${cluster.name}`;
  const port = cluster.port;
  const access = planAccess(event, port, name, server);
  const changes = [...access.changes];
  const said = [...access.said];
  const recordedExt = recordedExtensions(recorded, name, event.db_name);
  const extensions = planExtensions(event.extensions ?? [], cluster.major, server.extensions, recordedExt);
  const ext = extensionChanges(extensions, event.db_name, port);
  for (const line of ext.warnings) said.push({ line, warning: true });
  const { config, params, ...cfg } = planConfigChanges(event, cluster, server);
  for (const line of params.warnings) said.push({ line, warning: true });
  const tls = planTls(event, cluster, state, server.tls);
  said.push(...tls.said);
  const names = extensions.packages.map((p) => p.name);
  const packages = ext.packages.map((c) => ({ ...c, preview: (run: Run) => previewPackages(run.apt, names) }));
  changes.push(...packages, ...cfg.changes, ...tls.changes, ...ext.create);
  said.push(...cfg.said);
  const granted = updatedSection(recorded, state.hba_file, config.owned, name, access.record);
  const next = withExtensionRecord(granted, `${name}:${event.db_name}`, extensions.record);
  if (!opts.predicted && sectionChanged(recorded, next)) {
    changes.push({
      kind: "inventory",
      what: [],
      why: "what install-postgres granted differs from its record",
      apply: (run) => apply.recordGrants(run, server.inventory, next),
    });
  }
  return { changes: joinAdjacent(changes), said, config };
}

/** The drop-in (listen_addresses, parameters, preloaded libraries) and pg_hba.conf, then the restart or reload. */
function planConfigChanges(event: PostgresEvent, cluster: Cluster, server: RunningServer) {
  const { state, recorded } = server;
  const port = cluster.port;
  const changes: PostgresChange[] = [];
  const dropIn = dropInPath(state.config_file);
  const own = planParameters(event.parameters ?? {}, state.dropin_text, server.parameters, dropIn);
  const params = withPreload(own, event.extensions ?? [], server.extensions, state.dropin_text, dropIn);
  const config = withParameters(
    planConfiguration(event, state, recorded ? (recorded.hba[state.hba_file] ?? []) : undefined),
    params,
  );
  const warn = (line: string): Note => ({ line, warning: true });
  if (configurationChanges(config)) {
    changes.push({
      kind: "configuration",
      what: config.lines,
      revoked: config.revoked,
      why: "listen_addresses, parameters or pg_hba.conf differ from the settings",
      apply: (run) => apply.configurationFiles(run, state, port, config),
      joined: { after: (run, first) => apply.configurationFiles(run, state, port, config, first) },
      // A run says these as it writes pg_hba.conf (configurationFiles' warnings).
      foreseen: config.hbaCopies.map(warn),
    });
  }
  const restart = restartNeeded(config);
  // A restart for listen_addresses applies whatever else waits for one; a run says what it sees after it.
  const pending = restart ? [] : state.pending_restart.filter((n) => !params.restart.includes(n.toLowerCase()));
  const unapplied = unappliedWarnings(event, clusterUnit(cluster), pending, config.listen).map(warn);
  const past = restart || config.hbaChanged;
  if (restart || config.hbaChanged || params.reload.length) {
    changes.push({
      kind: restart ? "restart" : "reload",
      // What is in effect for a name taken back: foreseen here, read by the run once applied.
      what: takenBackLines(config.parameters),
      why: restart
        ? `${[...(config.listenChanged ? ["listen_addresses"] : []), ...params.restart].join(", ")} ` +
          "read only when the postmaster starts"
        : "pg_hba.conf and reloadable parameters are read on reload",
      apply: (run) => apply.restartOrReload(run, cluster, state, config),
      ...(past ? { foreseen: unapplied } : {}),
    });
  }
  return { changes, config, params, said: past ? [] : unapplied };
}
