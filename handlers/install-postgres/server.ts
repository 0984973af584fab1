// Talking to the VM about PostgreSQL: psql as the superuser (SQL on stdin), the package/cluster
// inventory, atomic file writes as postgres, packages and the cluster's unit.

import { quote } from "../../lib/shared/shell-quote";
import type { Apt } from "../common/apt";
import { type EnsureOutcome, ensurePackages, packagesProbe, wantedOf } from "../common/ensure-packages";
import { type Remote, runLong } from "../common/exec";
import { type RemoteFile, writeRemoteFile } from "../common/remote-file";
import { SYSTEMD_LOOK_PROBE } from "../common/systemd";
import { defineLook, type Fact, type Facts, type Probe, type RootFact, rootFact } from "../common/vm-facts";
import { checkedListenNames, nameCheckFrom, nameProbes } from "./addresses";
import {
  type Cluster,
  parseClusters,
  parsePsqlJson,
  parseServerPackages,
  parseUnits,
  type RefusedCluster,
  type ServerPackage,
} from "./pg";
import { LEGACY_PGDG_KEYRING } from "./pgdg";

/** psql as the postgres superuser over the local socket, SQL on stdin, stopping at the first error. */
/** psql as the jobs run it, its SQL on stdin. `cd /`: the login user's home may be closed to postgres. */
export function psqlLine(port: number, database = "postgres"): string {
  return `cd / && psql -X -q -A -t -v ON_ERROR_STOP=1 -p ${port} -d ${quote(database)} -f -`;
}

export function psql(
  remote: Remote,
  port: number,
  sql: string,
  label: string,
  opts: { mutates?: boolean; database?: string } = {},
): Promise<{ stdout: string }> {
  return remote.run(psqlLine(port, opts.database), {
    user: "postgres",
    stdin: sql,
    env: { PGCLIENTENCODING: "UTF8", LC_MESSAGES: "C" },
    label,
    timeoutMs: 120_000,
    mutates: opts.mutates,
  });
}

export async function psqlJson<T>(
  remote: Remote,
  port: number,
  sql: string,
  label: string,
  database?: string,
): Promise<T> {
  return parsePsqlJson<T>((await psql(remote, port, sql, label, { database })).stdout, label);
}

/** The server packages and clusters on the VM. */
export interface ServerInventory {
  packages: ServerPackage[];
  /** The clusters whose every field passed its rule (parseClusters); only these are ever used. */
  clusters: Cluster[];
  /** The lines of pg_lsclusters refused, with why (see chooseCluster for what follows from them). */
  refused: RefusedCluster[];
  /** `systemctl is-active` of each cluster's unit, by unit name. */
  units: Record<string, string>;
  /** Cluster directories (/etc/postgresql/<major>/<name>/postgresql.conf) with blanks or controls in their name. */
  hidden?: number;
  /**
   * Root's fact that /etc/apt/keyrings/pgdg.asc exists (undefined: it does not): the served key file an
   * earlier version wrote (common/apt-repository.ts legacyKeyring), which the plan rebuilds as root.
   */
  legacyPgdgKeyring?: RootFact;
}

/**
 * The look's probes. pg_lsclusters prints what the postgres user's directories and files say (a cluster
 * directory's name, its configuration); systemd answers for each unit it names, so the states are root's
 * but the names are not (clusterUnit refuses one postgresql-common would not create).
 */
const INSTALLATION_PROBES = [
  {
    name: "packages",
    command: `dpkg-query -W -f='\${Package}\\t\${Status}\\t\${Version}\\n' 'postgresql-[0-9]*'`,
    writer: "root",
    use: "the server packages installed (which major is there, install or not)",
  },
  {
    name: "clusters",
    command: "command -v pg_lsclusters >/dev/null && pg_lsclusters -h",
    writer: "service",
    use: "the clusters: version, name, port, status, owner, data directory, log (each field checked)",
  },
  {
    name: "units",
    command:
      "command -v pg_lsclusters >/dev/null && pg_lsclusters -h | while read -r v n _; do " +
      'echo "postgresql@$v-$n $(systemctl is-active "postgresql@$v-$n")"; done',
    writer: "root",
    use: "systemd's state of each cluster's unit (start it or not); the unit names come from pg_lsclusters",
  },
  {
    // Names with blanks or line breaks, which pg_lsclusters lists as lines no one can read, or not at all
    // (a newline): only counted, never printed.
    name: "hidden",
    command:
      'for f in /etc/postgresql/*/*/postgresql.conf; do [ -e "$f" ] || [ -L "$f" ] || continue; ' +
      'n=${f%/postgresql.conf}; n=${n##*/}; case "$n" in *[[:space:][:cntrl:]]*) echo hidden;; esac; done',
    writer: "service",
    use: "how many cluster directories have blanks or controls in their names (the run is refused)",
  },
  SYSTEMD_LOOK_PROBE,
  {
    name: "legacy_keyring",
    command: `[ -e ${LEGACY_PGDG_KEYRING} ]`,
    writer: "root",
    use: "the served PGDG key file an earlier version wrote (/etc/apt/keyrings is root's): rebuilt as root",
  },
] as const;

/**
 * dpkg's word on the distribution's server package ("postgresql", which names the distribution's major), read
 * in the kit's first look: the install's own check of it when it installs from the distribution (issue 30).
 */
export const SERVER_PACKAGE_PROBE = {
  ...packagesProbe(wantedOf(["postgresql"])),
  name: "server_package",
  use: "whether the distribution's postgresql package is there (then apt-get is not run for it)",
} as const;

/**
 * The same probes read as root, in the look after installing the server package (the transaction's, one
 * exec with the install's record and verify, issue 30): pg_lsclusters and the cluster directories, which the
 * postgres user controls, are read with postgres' rights (the unit states too: their names come from them).
 */
export const INSTALLATION_PROBES_AS_ROOT = INSTALLATION_PROBES.map((p) =>
  p.writer === "service" || p.name === "units" ? { ...p, readAs: "postgres" } : p,
);

/**
 * Server packages, clusters, their units, the legacy keyring, and `names`' addresses with the VM's own
 * (addresses.ts; a job's first look, in a check too): one exec, as a rerun's first look should be cheap.
 */
export function installationLook(names: string[] = []) {
  return defineLook("the look at PostgreSQL's packages and clusters", [...INSTALLATION_PROBES, ...nameProbes(names)]);
}

/** The look without listen names: after a change, and for state absent. */
export const INSTALLATION_LOOK = installationLook();

/** The packages and clusters the look found (the legacy keyring's fact typed as root's, as it is). */
function inventoryFrom(facts: Facts<ReturnType<typeof installationLook>["probes"]>): ServerInventory {
  const legacy = facts.get("legacy_keyring");
  return {
    packages: parseServerPackages(facts.get("packages").text),
    ...parseClusters(facts.get("clusters").text),
    units: parseUnits(facts.get("units").text),
    hidden: facts
      .get("hidden")
      .text.split("\n")
      .filter((l) => l === "hidden").length,
    legacyPgdgKeyring: legacy.code === 0 ? legacy : undefined,
  };
}

/** Server packages (dpkg), clusters (pg_lsclusters, absent before postgresql-common is installed), units. */
export async function inspectInstallation(remote: Remote): Promise<ServerInventory> {
  return (await lookAtInstallation(remote, [])).installation;
}

/** What the installation look saw: the inventory, the listen names' own addresses, systemd's fact. */
export interface InstallationSeen {
  installation: ServerInventory;
  resolved: Record<string, string[]>;
  systemd: RootFact;
}

/**
 * inspectInstallation with `names`' addresses as the VM resolves them, checked to be the VM's own
 * (addresses.ts; throws when one is not): a job's first look, before anything changes and before the
 * login sends the password to those addresses.
 */
export async function lookAtInstallation(remote: Remote, names: string[]): Promise<InstallationSeen> {
  const look = names.length ? installationLook(names) : INSTALLATION_LOOK;
  const r = await remote.run(look.script, {
    env: { LC_ALL: "C" },
    label: names.length ? `dpkg-query + pg_lsclusters, resolving ${names.join(", ")}` : "dpkg-query + pg_lsclusters",
    timeoutMs: 60_000,
  });
  return installationSeen(look.parse(r.stdout), names);
}

/**
 * The same from the kit's first look, which read installationLook(names)'s probes (installer-model.ts
 * firstLook); undefined when it has not every answer.
 */
export function installationFromFirstLook(
  answer: (name: string) => Fact | undefined,
  names: string[],
): InstallationSeen | undefined {
  const look = installationLook(names);
  if (look.probes.some((p) => answer(p.name) === undefined)) return undefined;
  return installationSeen({ get: (name) => answer(name) } as Facts<typeof look.probes>, names);
}

function installationSeen(facts: Facts<ReturnType<typeof installationLook>["probes"]>, names: string[]) {
  const systemd = facts.get("systemd");
  // The login sends the password to these addresses: root's facts only.
  const check = nameCheckFrom((n) => rootFact(facts.get(n), "the listen_addresses names' check"), names);
  const resolved = checkedListenNames(check);
  return { installation: inventoryFrom(facts), resolved, systemd };
}

/**
 * A file of the cluster's (pg_hba.conf, the conf.d drop-in) written as postgres, in its own directory, keeping
 * the mode of the file postgres has there (newMode when there is none): remote-file.ts.
 */
export function clusterFile(path: string, content: string, newMode: string): RemoteFile {
  return { path, content, writer: { user: "postgres" }, mode: { keep: newMode } };
}

/** Replaces a file of the cluster's as postgres (clusterFile), in one exec. */
export async function writeFile(remote: Remote, path: string, content: string, newMode: string): Promise<void> {
  await writeRemoteFile(remote, clusterFile(path, content, newMode));
}

/**
 * apt-get install through the shared Apt helper; throws when any of `specs` could not be installed. `also`:
 * probes read in the look after the install (ensure-packages.ts), their answers in the outcome's `seen`;
 * `early`: dpkg's word on `specs` read before (the first look), instead of a dpkg-query now.
 */
export async function installPackages(
  apt: Apt,
  specs: string[],
  what: string,
  policy: { update: boolean; cacheValidSec?: number },
  also?: readonly Probe[],
  early?: Fact,
): Promise<EnsureOutcome> {
  const outcome = await ensurePackages(apt, specs, { ...policy, also, early });
  if (outcome.failed.length) {
    throw new Error(`could not install ${what}: ${outcome.failed.map((f) => `${f.name}: ${f.reason}`).join("; ")}`);
  }
  return outcome;
}

/**
 * `systemctl <verb> <unit>` for a cluster, as a shell command that cannot hang on a server that did not
 * come up: the unit (Type=forking, no start timeout on Debian) can stay "activating", waiting for a pid
 * file, after pg_ctlcluster has already failed. While systemctl waits, its state is watched; activating
 * with no start command running for 2 s means the server is not coming: the unit is stopped (which ends
 * the wait) and the command fails.
 */
export function clusterServiceCommand(verb: "start" | "restart", unit: string): string {
  const u = quote(unit);
  const stuck = `${unit}: the server did not come up (its start command ended, the unit stayed activating)`;
  return (
    `(systemctl ${verb} ${u} & p=$!; z=0; while kill -0 $p 2>/dev/null; do ` +
    `if [ "$(systemctl is-active ${u})" = activating ] && ` +
    `[ "$(systemctl show -p ControlPID --value ${u})" = 0 ]; then z=$((z+1)); else z=0; fi; ` +
    `if [ $z -ge 20 ]; then systemctl stop ${u}; wait $p; echo ${quote(stuck)} >&2; exit 3; fi; ` +
    `sleep 0.1; done; wait $p)`
  );
}

/** systemctl start; on failure the message points at the unit's journal and the cluster's log. */
export async function startOrExplain(remote: Remote, unit: string, cluster: Cluster): Promise<void> {
  try {
    await runLong(remote, clusterServiceCommand("start", unit), {
      label: `systemctl start ${unit}`,
      timeoutMs: 300_000,
    });
  } catch (err) {
    throw new Error(
      `${(err as Error).message}\nsee \`journalctl -u ${unit}\` and ${cluster.logFile ?? "the cluster's log"} ` +
        "on the VM",
    );
  }
  const again = await remote.run(`systemctl is-active ${quote(unit)}`, {
    check: false,
    label: `systemctl is-active ${unit}`,
    timeoutMs: 30_000,
  });
  if (again.stdout.trim() !== "active") {
    throw new Error(
      `${unit} is ${again.stdout.trim()} right after systemctl start: ` +
        `see \`journalctl -u ${unit}\` and ${cluster.logFile ?? "the cluster's log"} on the VM`,
    );
  }
}
