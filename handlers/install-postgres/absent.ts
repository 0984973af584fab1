// install-postgres with `state: "absent"`. Without purgeData the clusters' data and configuration stay
// (the result says where): the grants it recorded are revoked first (its pg_hba.conf lines, LOGIN of its
// roles), then its packages are removed without purging (a purge of postgresql-<major> may delete the
// clusters). With purgeData: the packages are purged, then the data and configuration directories of the
// clusters of a major vm-install installed, and the users and groups the packages created.

import { quote } from "../../shared/shell-quote";
import { type AbsentExtra, absentModel } from "../common/absent-model";
import { type Inventory, readGrants, withSection, writeGrants } from "../common/grants";
import type { Change } from "../common/installer-model";
import { readPackageInventory, recordOf } from "../common/package-inventory";
import type { Cluster } from "./clusters";
import type { PostgresEvent } from "./decisions";
import { type PostgresGrants, postgresSection } from "./grants";
import { HBA_MARKER, hbaFields } from "./pg";
import { inspectInstallation, psql, writeFile } from "./server";
import { revokeLoginSql } from "./sql";

/** A pg_hba.conf with vm-install's recorded lines taken out. */
interface HbaRevoke {
  file: string;
  entries: string[];
  content: string;
}

export interface PostgresAbsentSeen {
  purge: boolean;
  inventory: Inventory;
  grants?: PostgresGrants;
  /** Clusters of a major whose server package vm-install installed. */
  clusters: Cluster[];
  hba: HbaRevoke[];
  /** Recorded roles per online cluster's port. */
  roles: { port: number; cluster: string; roles: string[] }[];
  /** The data and configuration directories of the majors vm-install installed, that exist. */
  dirs: string[];
}

/** Pure: `text` without the lines carrying HBA_MARKER whose entry is one of `entries`. */
export function withoutEntries(text: string, entries: string[]): { content: string; removed: string[] } {
  const removed: string[] = [];
  const kept = text.split("\n").filter((line) => {
    if (!line.includes(HBA_MARKER)) return true;
    const entry = hbaFields(line).join(" ");
    if (!entries.includes(entry)) return true;
    removed.push(entry);
    return false;
  });
  return { content: kept.join("\n"), removed };
}

async function lookAtHba(
  remote: Parameters<AbsentExtra<PostgresEvent, unknown>["inspect"]>[0]["remote"],
  grants?: PostgresGrants,
) {
  const out: HbaRevoke[] = [];
  for (const [file, entries] of Object.entries(grants?.hba ?? {})) {
    const r = await remote.run(`cat ${quote(file)} 2>/dev/null || true`, { sudo: true, label: `reading ${file}` });
    const { content, removed } = withoutEntries(r.stdout, entries);
    if (removed.length) out.push({ file, entries: removed, content });
  }
  return out;
}

function revokeChanges(seen: PostgresAbsentSeen): Change<PostgresEvent>[] {
  const changes: Change<PostgresEvent>[] = seen.hba.map((h) => ({
    kind: "revoke-hba",
    what: h.entries.map((e) => `revoked: pg_hba.conf: ${e}`),
    why: `${h.file} holds lines vm-install wrote`,
    apply: async ({ remote }) => void (await writeFile(remote, h.file, h.content, "0640")),
  }));
  for (const r of seen.roles)
    changes.push({
      kind: "revoke-roles",
      what: r.roles.map((role) => `revoked: role ${role}: LOGIN (cluster ${r.cluster})`),
      why: "roles vm-install created or gave LOGIN",
      apply: async ({ remote }) =>
        void (await psql(remote, r.port, revokeLoginSql(r.roles), "revoking LOGIN", { mutates: true })),
    });
  return changes;
}

/** The grants section emptied: what it listed is revoked, or gone with the data. */
function forgetGrants(seen: PostgresAbsentSeen): Change<PostgresEvent>[] {
  if (!seen.grants) return [];
  return [
    {
      kind: "grants",
      what: [],
      why: "the inventory lists grants that are gone",
      apply: async ({ remote }) => void (await writeGrants(remote, withSection(seen.inventory, "postgres", undefined))),
    },
  ];
}

/** The parents the packages made, once empty: nothing else is in them. */
const EMPTY_PARENTS = "rmdir --ignore-fail-on-non-empty /etc/postgresql /var/lib/postgresql 2>/dev/null; true";

function purgeDataChange(seen: PostgresAbsentSeen): Change<PostgresEvent>[] {
  if (!seen.purge || seen.dirs.length === 0) return [];
  return [
    {
      kind: "purge-data",
      what: seen.dirs.map((d) => `removed ${d} (purgeData)`),
      why: "purgeData: true",
      apply: async ({ remote }) =>
        void (await remote.run(`rm -rf -- ${seen.dirs.map(quote).join(" ")} && ${EMPTY_PARENTS}`, {
          sudo: true,
          mutates: true,
          label: "removing the clusters' data and configuration",
          timeoutMs: 300_000,
        })),
    },
  ];
}

export const postgresTakeBack: AbsentExtra<PostgresEvent, PostgresAbsentSeen> = {
  async inspect({ remote, event }) {
    const purge = event.purge_data === true;
    const inventory = await readGrants(remote);
    const grants = postgresSection(inventory);
    const majors = recordOf(await readPackageInventory(remote), "postgres")
      .packages.map((p) => /^postgresql-(\d+)$/.exec(p)?.[1])
      .filter((m): m is string => m !== undefined);
    const clusters = (await inspectInstallation(remote)).clusters.filter((c) => majors.includes(c.major));
    // Each major's directories whole (pg_lsclusters goes with postgresql-common, so a purge after a
    // removal finds its clusters there), and a cluster's data directory kept elsewhere.
    const perMajor = majors.flatMap((m) => [`/var/lib/postgresql/${m}`, `/etc/postgresql/${m}`]);
    const elsewhere = clusters.map((c) => c.dataDir).filter((d) => !perMajor.some((m) => d.startsWith(`${m}/`)));
    const candidates = [...perMajor, ...elsewhere];
    const there = candidates.length
      ? await remote.run(`for d in ${candidates.map(quote).join(" ")}; do [ -e "$d" ] && echo "$d"; done; true`, {
          sudo: true,
          label: "looking for the clusters' directories",
        })
      : { stdout: "" };
    const dirs = candidates.filter((d) => there.stdout.split("\n").includes(d));
    const online = (c: Cluster) => c.status.startsWith("online");
    const roles = purge
      ? []
      : clusters
          .filter(online)
          .map((c) => ({
            port: c.port,
            cluster: `${c.major}/${c.name}`,
            roles: grants?.roles[`${c.major}/${c.name}`] ?? [],
          }))
          .filter((r) => r.roles.length > 0);
    const hba = purge ? [] : await lookAtHba(remote, grants);
    return { purge, inventory, grants, clusters, hba, roles, dirs };
  },
  plan: (seen) => [...revokeChanges(seen), ...forgetGrants(seen)],
  after: purgeDataChange,
  mode: (event) => (event.purge_data ? "purge" : "remove"),
  revokedMembers: () => [],
  revoked: (seen) => [
    ...seen.hba.flatMap((h) => h.entries.map((e) => `pg_hba.conf: ${e}`)),
    ...seen.roles.flatMap((r) => r.roles.map((role) => `role ${role}: LOGIN`)),
  ],
  report: (seen) => (seen.purge ? {} : { data_kept: seen.dirs }),
};

/** The absent side of install-postgres (handler.ts puts it beside the install model). */
export const postgresAbsentModel = absentModel<PostgresEvent, PostgresAbsentSeen>("postgres", postgresTakeBack);
