// How each change of the plan (plan.ts) is made on the VM: the only place, with the files it calls,
// where install-postgres changes anything. Each returns what it found out by doing it (a version, the
// package inventory it had to look at anyway) so the run does not look twice.

import { command } from "../../lib/shared/shell-quote";
import type { SeenFacts } from "../common/apt-transaction";
import { GRANTS_FILE, type Inventory, withSection, writeGrants } from "../common/grants";
import type { ApplyOutcome } from "../common/installer-model";
import { type Fact, type RootFact, rootFact } from "../common/vm-facts";
import { type ConfigPlan, reloadForHba, restartForListen, writeConfiguration } from "./configuration";
import { chooseCluster, clusterStartedLine, installedLine, type RoleDbDecision, serverSource } from "./decisions";
import { type PostgresGrants, revokeRoles } from "./grants";
import { restartNeeded } from "./parameters";
import { takenBack } from "./parameters-server";
import { type Cluster, clusterUnit, dropInPath, type ServerState } from "./pg";
import { ensurePgdgRepository, LEGACY_PGDG_KEYRING, pgdgLines, pgdgSettings } from "./pgdg";
import { startFixingDropIn } from "./recovery";
import type { ServerFacts } from "./report";
import { roleAndDatabase as applyRoleAndDatabase } from "./role-database";
import type { Run } from "./run";
import {
  INSTALLATION_PROBES_AS_ROOT,
  inspectInstallation,
  installationFromFirstLook,
  installPackages,
  type ServerInventory,
} from "./server";
import { type ListenerSeen, serverProbesFor } from "./server-look";
import type { SqlFirst } from "./sql-first";

/** What applying a change found out: the inventory it looked at since, where the package came from, warnings. */
export interface PostgresOutcome extends ApplyOutcome {
  installation?: ServerInventory;
  installedFrom?: ServerFacts["installedFrom"];
  warnings?: string[];
  /** Who listened on the cluster's port right after a restart or reload (the login's proof, issue 30). */
  listener?: ListenerSeen;
  /** The server look's answers for `cluster`, read with the install's record (state.ts takes them). */
  server?: { cluster: Cluster; answer: SeenFacts };
}

/**
 * The server package, from the distribution or from PGDG (its repository set up first). The look after the
 * install reads the packages and clusters and, for the cluster the package creates (`predicted`), the server
 * look's answers: inspect takes them when that is the cluster it finds (one exec where it was three, issue 30).
 * `early`: the first look's dpkg answer on the distribution's package (SERVER_PACKAGE_PROBE).
 */
export async function installServer(
  run: Run,
  major: string,
  predicted: Cluster,
  early?: Fact,
): Promise<PostgresOutcome> {
  const { event, remote, os, progress } = run;
  const { own, name } = serverSource(os, major);
  const source = own ? `${os.id} ${os.codename} (postgresql)` : `PGDG (${event.repo_url})`;
  progress.info(`PostgreSQL ${major} is not installed; installing it from ${source}`);
  // As install-packages: refresh the lists first unless told not to or they are fresh enough; a
  // repository just added is read whatever the policy says.
  let policy = { update: event.update, cacheValidSec: event.cache_valid_sec };
  const pgdg = own ? [] : await ensurePgdg(run, policy);
  if (pgdg.length) policy = { update: true, cacheValidSec: undefined };
  const what = own
    ? `PostgreSQL ${major} from ${os.id} ${os.codename}`
    : `PostgreSQL ${major} from ${event.repo_url} ${os.codename}-pgdg`;
  const also = [...INSTALLATION_PROBES_AS_ROOT, ...serverProbesFor(predicted, event)];
  const installed = await installPackages(run.apt, [name], what, policy, also, own ? early : undefined);
  // Read with the install's record when it was (one exec, issue 30); else looked at now.
  const after =
    (installed.seen && installationFromFirstLook(installed.seen, [])?.installation) ??
    (await inspectInstallation(remote));
  const pkg = after.packages.find((p) => p.major === major);
  if (!pkg) {
    const installed = after.packages.map((p) => `postgresql-${p.major}`).join(", ") || "none";
    throw new Error(
      `apt-get installed ${name} but postgresql-${major} is still not installed (installed: ${installed}); ` +
        (own
          ? `another repository on the VM (PGDG?) provides a newer "postgresql": set pg_version to the major you want`
          : "check the repository on the VM"),
    );
  }
  return {
    what: [...pgdg, installedLine(major)],
    installation: after,
    installedFrom: own ? "distribution" : "pgdg",
    ...(installed.seen ? { server: { cluster: predicted, answer: installed.seen } } : {}),
  };
}

/** The key file an earlier version wrote as served, replaced by a keyring of the verified key. */
export async function rebuildPgdgKeyring(run: Run, found: RootFact): Promise<PostgresOutcome> {
  rootFact(found, `setting PGDG up again for ${LEGACY_PGDG_KEYRING}`);
  run.progress.info(
    `${LEGACY_PGDG_KEYRING} is the key file an earlier version wrote as served: ` +
      "setting PGDG up again from the verified key",
  );
  return { what: await ensurePgdg(run, { update: run.event.update, cacheValidSec: run.event.cache_valid_sec }) };
}

/** PGDG's key and source in place; the lines of what that changed. */
async function ensurePgdg(run: Run, policy: { update: boolean; cacheValidSec?: number }): Promise<string[]> {
  const { event, remote, os, progress } = run;
  const settings = pgdgSettings(event);
  const ensureCurl = async () =>
    void (await installPackages(run.apt, ["curl", "ca-certificates"], "curl for the PGDG key", policy));
  const repo = await progress.step(
    `PGDG repository ${os.codename}-pgdg`,
    () => ensurePgdgRepository(remote, os, settings, { progress, ensureCurl }),
    "pgdg",
  );
  return pgdgLines(repo.changes);
}

/** `major`/main created; the inventory looked at again to find it. */
export async function createCluster(run: Run, major: string): Promise<PostgresOutcome> {
  await run.progress.step(
    `creating cluster ${major}/main`,
    () =>
      run.remote.run(command("pg_createcluster", major, "main"), {
        sudo: true,
        label: `pg_createcluster ${major} main`,
        timeoutMs: 300_000,
        mutates: true,
      }),
    "cluster",
  );
  const again = await inspectInstallation(run.remote);
  if (!chooseCluster(again, major).cluster)
    throw new Error(`pg_createcluster ${major} main succeeded but pg_lsclusters does not list the cluster on the VM`);
  return { installation: again };
}

/** The cluster's unit started (see startFixingDropIn for a drop-in that kept it from starting). */
export async function startCluster(
  run: Run,
  cluster: Cluster,
  installation: ServerInventory,
  was: string,
): Promise<PostgresOutcome> {
  const unit = clusterUnit(cluster);
  run.progress.info(`${unit} is ${was}; starting it`);
  const fixed = await run.progress.step(`systemctl start ${unit}`, () => startFixingDropIn(run, cluster), "start");
  const started = clusterStartedLine(`${cluster.major}/${cluster.name}`, was);
  return {
    what: [...(fixed ? [fixed] : []), started],
    installation: { ...installation, units: { ...installation.units, [unit]: "active" } },
  };
}

export async function roleAndDatabase(
  run: Run,
  port: number,
  plan: RoleDbDecision,
  lines: string[],
): Promise<undefined> {
  await applyRoleAndDatabase(run, port, plan, lines);
  return undefined;
}

export async function revokeLogin(run: Run, port: number, roles: string[]): Promise<undefined> {
  await revokeRoles(run, port, roles);
  return undefined;
}

/** The configuration files; with `first`, that SQL (the role and database) runs first in the same exec. */
export async function configurationFiles(
  run: Run,
  state: ServerState,
  port: number,
  plan: ConfigPlan,
  first?: SqlFirst,
): Promise<PostgresOutcome | undefined> {
  const write = () => writeConfiguration(run, state, port, plan, first);
  await (first ? run.progress.step(`${first.step}; the configuration files`, write, "role_db") : write());
  return plan.hbaCopies.length ? { warnings: plan.hbaCopies } : undefined;
}

/** listen_addresses changed: a restart (rolled back when the server does not come back); else a reload. */
export async function restartOrReload(
  run: Run,
  cluster: Cluster,
  state: ServerState,
  plan: ConfigPlan,
): Promise<PostgresOutcome> {
  const { warnings, listener } = restartNeeded(plan)
    ? await restartForListen(run, cluster, state, plan)
    : await reloadForHba(run, cluster, plan);
  // What is in effect for a parameter taken back, read now: the words a check foresaw (parameter-fallback.ts).
  const takenBackLines = await takenBack(run, cluster, dropInPath(state.config_file), plan.parameters?.removed ?? {});
  return takenBackLines.length ? { warnings, listener, what: takenBackLines } : { warnings, listener };
}

/** The inventory with install-postgres' section replaced. */
export async function recordGrants(run: Run, inventory: Inventory, next: PostgresGrants): Promise<undefined> {
  await run.progress.step(
    `recording in ${GRANTS_FILE}`,
    () => writeGrants(run.remote, withSection(inventory, "postgres", next)),
    "grants",
  );
  return undefined;
}
