// install-postgres with `state: "absent"`. Without purgeData the clusters' data and configuration stay
// (the result says where): the grants it recorded are revoked first (its pg_hba.conf lines, LOGIN of its
// roles), then its packages are removed without purging (a purge of postgresql-<major> may delete the
// clusters). With purgeData: the packages are purged, then the data and configuration directories of the
// clusters of a major vm-install installed, and the users and groups the packages created.

import { quote } from "../../lib/shared/shell-quote";
import { type AbsentExtra, absentModel } from "../common/absent-model";
import type { Remote } from "../common/exec";
import { GRANTS_FILE, type Inventory, readGrants, withSection, writeGrants } from "../common/grants";
import type { Change } from "../common/installer-model";
import { readPackageInventory, recordOf } from "../common/package-inventory";
import { defineLook, type Probe } from "../common/vm-facts";
import type { Cluster } from "./clusters";
import type { PostgresEvent } from "./decisions";
import { type PostgresGrants, planRoles, postgresSection, validRoleNames } from "./grants";
import { entryOf, HBA_MARKER, hbaCopyWarning, ownHbaLines, type RecordedRole } from "./pg";
import { inspectInstallation, psql, psqlJson, writeFile } from "./server";
import { recordedRolesSql, revokeLoginSql } from "./sql";

/** A pg_hba.conf with vm-install's recorded lines taken out. */
interface HbaRevoke {
  file: string;
  entries: string[];
  content: string;
  /** Entries taken back whose copy (vm-install's marker included) stays: named in warnings. */
  copies: string[];
}

export interface PostgresAbsentSeen {
  purge: boolean;
  inventory: Inventory;
  grants?: PostgresGrants;
  /** Clusters of a major whose server package vm-install installed. */
  clusters: Cluster[];
  hba: HbaRevoke[];
  /** Recorded pg_hba.conf files the postgres user cannot read (a link to elsewhere): their lines stay, named. */
  hbaUnread: string[];
  /** Recorded roles per online cluster's port that the server shows are still vm-install's grant (marked, LOGIN). */
  roles: { port: number; cluster: string; roles: string[] }[];
  /** Recorded roles not taken back, with why (re-made by someone else since, a superuser ...): warnings. */
  rolesKept: string[];
  /** The data and configuration directories of the majors vm-install installed, that exist. */
  dirs: string[];
  /** Data directories of those clusters elsewhere (pg_lsclusters' word): kept, purgeData or not, and named. */
  kept: string[];
}

/**
 * Pure: `text` without vm-install's own lines of `entries` (one marked line per entry, pg.ts ownHbaLines);
 * `copies`: the entries taken back whose copy, marker included, stays.
 */
export function withoutEntries(text: string, entries: string[]) {
  const lines = text.split("\n");
  const own = ownHbaLines(lines, entries);
  const removed = lines.filter((_, i) => own.has(i)).map((line) => entryOf(line)!);
  const marked = lines.filter((line, i) => !own.has(i) && line.includes(HBA_MARKER)).map(entryOf);
  const copies = removed.filter((e) => marked.includes(e));
  return { content: lines.filter((_, i) => !own.has(i)).join("\n"), removed, copies };
}

/**
 * The look at what state absent acts on, one exec as root: which of `dirs` exist, and each pg_hba.conf the
 * inventory lists. The postgres user owns /var/lib/postgresql, /etc/postgresql and pg_hba.conf, so both are
 * its to write: the paths removed are the inventory's (root's) only, the file is read and written back as
 * postgres (read as root, a link postgres planted there would copy a root-only file into postgres' own).
 */
export function takeBackLook(dirs: string[], hbaFiles: string[]) {
  const exists: Probe<string, "service">[] = dirs.map((d, i) => ({
    name: `dir:${i}`,
    command: `[ -e ${quote(d)} ]`,
    writer: "service",
    use: "is a major's data or configuration directory there (removed with purgeData, else kept and named)",
  }));
  const hba: Probe<string, "service">[] = hbaFiles.map((f, i) => ({
    name: `hba:${i}`,
    command: `cat ${quote(f)}`,
    writer: "service",
    readAs: "postgres",
    use: "a pg_hba.conf the inventory lists: written back as postgres without vm-install's lines",
  }));
  return defineLook("the look at what state absent takes back from PostgreSQL", [...exists, ...hba]);
}

/** Which of `dirs` exist and what each of `hbaFiles` holds ("" when it cannot be read). */
async function lookAtTakeBack(remote: Remote, dirs: string[], hbaFiles: string[]) {
  if (!dirs.length && !hbaFiles.length) return { there: [], hba: [], unread: [] };
  const look = takeBackLook(dirs, hbaFiles);
  const r = await remote.run(look.script, {
    sudo: true,
    label: "looking for the clusters' directories and pg_hba.conf",
  });
  const facts = look.parse(r.stdout);
  return {
    there: dirs.filter((_, i) => facts.get(`dir:${i}`).code === 0),
    hba: hbaFiles.map((_, i) => facts.get(`hba:${i}`).text),
    unread: hbaFiles.filter((_, i) => facts.get(`hba:${i}`).code !== 0),
  };
}

/** The recorded pg_hba.conf lines still in `texts` (the files' contents, in the inventory's order). */
function hbaRevokes(grants: PostgresGrants | undefined, texts: string[]): HbaRevoke[] {
  const out: HbaRevoke[] = [];
  Object.entries(grants?.hba ?? {}).forEach(([file, entries], i) => {
    const { content, removed, copies } = withoutEntries(texts[i] ?? "", entries);
    if (removed.length) out.push({ file, entries: removed, content, copies });
  });
  return out;
}

/**
 * The recorded roles re-checked on each cluster's server: only a role that may log in and carries the mark
 * vm-install left when it gave LOGIN is taken back (planRoles). One the admin dropped and made again under the
 * same name carries none: it stays, and is named; one dropped is gone, nothing to take back.
 */
async function recheckRoles(remote: Remote, recorded: { port: number; cluster: string; roles: string[] }[]) {
  const roles: PostgresAbsentSeen["roles"] = [];
  const rolesKept: string[] = [];
  for (const r of recorded) {
    const facts = await psqlJson<{ recorded_roles: Record<string, RecordedRole> | null }>(
      remote,
      r.port,
      recordedRolesSql(validRoleNames(r.roles)),
      `psql (reading the roles ${GRANTS_FILE} lists, cluster ${r.cluster})`,
    );
    const plan = planRoles(r.roles, "", false, facts.recorded_roles ?? {});
    rolesKept.push(...plan.skipped.map((line) => `${line} (cluster ${r.cluster})`));
    if (plan.revoke.length) roles.push({ ...r, roles: plan.revoke });
  }
  return { roles, rolesKept };
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
    // removal finds its clusters there). A data directory pg_lsclusters names elsewhere is never removed:
    // the cluster's configuration says where it is, and the postgres user writes that.
    const perMajor = majors.flatMap((m) => [`/var/lib/postgresql/${m}`, `/etc/postgresql/${m}`]);
    const elsewhere = clusters.map((c) => c.dataDir).filter((d) => !perMajor.some((m) => d.startsWith(`${m}/`)));
    const hbaFiles = purge ? [] : Object.keys(grants?.hba ?? {});
    const found = await lookAtTakeBack(remote, [...perMajor, ...elsewhere], hbaFiles);
    const dirs = perMajor.filter((d) => found.there.includes(d));
    const kept = elsewhere.filter((d) => found.there.includes(d));
    const online = (c: Cluster) => c.status.startsWith("online");
    const recorded = purge
      ? []
      : clusters
          .filter(online)
          .map((c) => ({
            port: c.port,
            cluster: `${c.major}/${c.name}`,
            roles: grants?.roles[`${c.major}/${c.name}`] ?? [],
          }))
          .filter((r) => r.roles.length > 0);
    const { roles, rolesKept } = await recheckRoles(remote, recorded);
    const hba = hbaRevokes(grants, found.hba);
    return { purge, inventory, grants, clusters, hba, hbaUnread: found.unread, roles, rolesKept, dirs, kept };
  },
  plan: (seen) => [...revokeChanges(seen), ...forgetGrants(seen)],
  after: purgeDataChange,
  mode: (event) => (event.purge_data ? "purge" : "remove"),
  revokedMembers: () => [],
  revoked: (seen) => [
    ...seen.hba.flatMap((h) => h.entries.map((e) => `pg_hba.conf: ${e}`)),
    ...seen.roles.flatMap((r) => r.roles.map((role) => `role ${role}: LOGIN`)),
  ],
  warnings: (seen) => [
    ...seen.hba.flatMap((h) => h.copies.map((e) => hbaCopyWarning(h.file, e))),
    ...seen.rolesKept,
    ...seen.hbaUnread.map(
      (f) =>
        `${f} could not be read as postgres (gone, or a link to a file postgres may not read): ` +
        "vm-install's lines in it, if any, were not revoked; check the file and remove them by hand",
    ),
    // purgeData removes only the majors' own directories: one a cluster's configuration names elsewhere is
    // the postgres user's word, not vm-install's record, so it is kept, and said, since a purge was asked.
    ...(seen.purge ? seen.kept : []).map(
      (d) =>
        `${d} kept: a cluster's configuration names it as its data directory, outside the directories ` +
        "vm-install installed; remove it by hand if it is yours to remove",
    ),
  ],
  report: (seen) =>
    seen.purge ? (seen.kept.length ? { data_kept: seen.kept } : {}) : { data_kept: [...seen.dirs, ...seen.kept] },
};

/** The absent side of install-postgres (handler.ts puts it beside the install model). */
export const postgresAbsentModel = absentModel<PostgresEvent, PostgresAbsentSeen>("postgres", postgresTakeBack);
