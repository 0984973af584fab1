// The clusters on the VM as postgresql-common lists them (pg_lsclusters, systemctl is-active of their
// units), every field checked against its own rule, and the cluster this installer manages. Pure: the
// command is server.ts inspectInstallation; what a refused line means for the run is decisions.ts
// chooseCluster.

import { isPgClusterName, isSafeAbsolutePath, PG_CLUSTER_VERSION, UNIX_USER } from "../../lib/shared/names";

/** A cluster as `pg_lsclusters -h` lists it. */
export interface Cluster {
  major: string;
  name: string;
  port: number;
  /** "online", "down", "online,recovery", ... */
  status: string;
  owner: string;
  dataDir: string;
  logFile?: string;
}

/** A pg_lsclusters line that is not used, and why (said in the refusal or the warning). */
export interface RefusedCluster {
  /** The line as printed (JSON-quoted where it is shown). */
  line: string;
  /** Its version when the line still reads as columns; undefined when it does not. */
  major?: string;
  /** The cluster's name when the line reads as columns. */
  name?: string;
  reason: string;
}

/** What pg_lsclusters listed: the clusters whose every field passed its rule, and the lines refused. */
export interface ClusterListing {
  clusters: Cluster[];
  refused: RefusedCluster[];
}

/**
 * The log column names the file root reads when the server will not start (recovery.ts). It is only used
 * when it is a plain path under /var/log/postgresql (Debian's place for it): the column can also be
 * "<unknown>", "syslog", a path relative to the data directory (logging_collector) or, from a cluster's
 * configuration the database superuser controls, any file root can read.
 */
function isClusterLog(logFile: string): boolean {
  return isSafeAbsolutePath(logFile) && logFile.startsWith("/var/log/postgresql/");
}

/**
 * `pg_lsclusters -h`: Ver Cluster Port Status Owner Data-directory Log-file, blank-separated. Every value
 * here comes from the VM, and cluster names from directories the postgres user owns (/etc/postgresql/<major>/
 * <name>): a database superuser can rename one to `x$(...)`, to a name with blanks or with a newline (which
 * then forges lines of its own). So each field is checked against its own rule (lib/shared/names.ts: a name as
 * pg_createcluster accepts it, a version, a port 1-65535, absolute paths of plain characters) and a line
 * that fails any of them is refused, never used; a line that does not read as the seven columns at all is
 * refused without a version, as nothing in it can be told apart.
 */
export function parseClusters(stdout: string): ClusterListing {
  const out: ClusterListing = { clusters: [], refused: [] };
  for (const line of stdout.split("\n")) {
    if (line.trim() === "") continue;
    const f = line.trim().split(/[ \t]+/);
    if (f.length !== 7) {
      out.refused.push({ line, reason: `not the 7 columns pg_lsclusters prints (${f.length} blank-separated fields)` });
      continue;
    }
    const [major, name, port, status, owner, dataDir, logFile] = f;
    const problems = [
      PG_CLUSTER_VERSION.test(major) ? "" : `version ${JSON.stringify(major)} is not a PostgreSQL version`,
      isPgClusterName(name)
        ? ""
        : `name ${JSON.stringify(name)} is not one pg_createcluster accepts (letters, digits, _ . - only)`,
      /^[1-9][0-9]{0,4}$/.test(port) && Number(port) <= 65535 ? "" : `port ${JSON.stringify(port)} is not a TCP port`,
      /^[a-z]+(,[a-z]+)*$/.test(status) ? "" : `status ${JSON.stringify(status)} is not one pg_lsclusters prints`,
      owner === "<unknown>" || UNIX_USER.test(owner) ? "" : `owner ${JSON.stringify(owner)} is not a user name`,
      dataDir === "<unknown>" || isSafeAbsolutePath(dataDir)
        ? ""
        : `data directory ${JSON.stringify(dataDir)} is not a plain absolute path`,
    ].filter(Boolean);
    if (problems.length) {
      const known = PG_CLUSTER_VERSION.test(major) ? { major } : {};
      out.refused.push({ line, ...known, name, reason: problems.join("; ") });
      continue;
    }
    const cluster: Cluster = { major, name, port: Number(port), status, owner, dataDir };
    if (isClusterLog(logFile)) cluster.logFile = logFile;
    out.clusters.push(cluster);
  }
  return out;
}

/** "postgresql@15-main active" lines -> { "postgresql@15-main": "active" }. */
export function parseUnits(stdout: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of stdout.split("\n")) {
    const m = /^(postgresql@\S+) (\S*)$/.exec(line.trim());
    if (m) out[m[1]] = m[2] || "unknown";
  }
  return out;
}

/** The cluster this installer manages for `major`: "main" when there is one, else the first. */
export function pickCluster(clusters: Cluster[], major: string): Cluster | undefined {
  const ofMajor = clusters.filter((c) => c.major === major);
  return ofMajor.find((c) => c.name === "main") ?? ofMajor[0];
}

/**
 * The systemd unit of a Debian/Ubuntu cluster (postgresql@15-main). Refuses a version or name that is not
 * one postgresql-common creates, whatever path it came by (the commands quote the unit as well).
 */
export function clusterUnit(c: Pick<Cluster, "major" | "name">): string {
  if (!PG_CLUSTER_VERSION.test(c.major) || !isPgClusterName(c.name)) {
    throw new Error(
      `refusing cluster ${JSON.stringify(`${c.major}/${c.name}`)}: ` +
        "not a version and name postgresql-common creates (letters, digits, _ . - only)",
    );
  }
  return `postgresql@${c.major}-${c.name}`;
}
