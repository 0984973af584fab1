// Taking back off what an installer put on a VM (`state: "absent"`), as planned changes of the kit's
// model: the packages, groups, users and files package-inventory.ts recorded for it, nothing else. The
// rule: a recorded package still present is purged unless a package that stays depends on it (Depends or
// Pre-Depends, through Provides; an alternative a staying package satisfies needs none of ours), so nothing
// outside the record is removed or broken; apt-get autoremove is never run (it would take packages others
// orphaned). One dpkg's log shows removed and installed again since is someone else's (dpkg-log.ts): kept.
import { command, quote } from "../../lib/shared/shell-quote";
import { DPKG_LOG_PROBE, type DpkgLogLine, provenanceOf } from "./dpkg-log";
import type { Change, InstallerContext } from "./installer-model";
import {
  INVENTORY_PROBE,
  type InstalledRecord,
  inventoryFrom,
  RECORD_LISTS,
  recordOf,
  updateRecord,
  withTimesOfItsPackages,
} from "./package-inventory";
import { purgeExactly, type RemovalMode } from "./purge-exactly";
import { defineLook, type RootFact, rootFact } from "./vm-facts";

/** A present package's relations, as dpkg has them. */
export interface PackageRelations {
  provides: string[];
  /** Depends and Pre-Depends: each group is satisfied by any one of its alternatives. */
  depends: string[][];
}

/** A relation's package name: "perl:any (>= 5.10)" -> "perl". */
const relationName = (text: string) => text.trim().split(/[\s(:]/)[0];
const relationList = (field = "") => field.split(",").filter((g) => g.trim() !== "");

/** Pure: DEPENDENCY_SCRIPT's output, the packages present (not not-installed, not config-files). */
export function parseRelations(stdout: string): Map<string, PackageRelations> {
  const present = new Map<string, PackageRelations>();
  for (const line of stdout.split("\n")) {
    const [abbrev = "", name, provides, pre, deps] = line.split("\t");
    if (!name || abbrev.length < 2 || abbrev[1] === "n" || abbrev[1] === "c") continue;
    const groups = [...relationList(pre), ...relationList(deps)].map((g) => g.split("|").map(relationName));
    const known = present.get(name.trim());
    present.set(name.trim(), {
      provides: [...(known?.provides ?? []), ...relationList(provides).map(relationName)],
      depends: [...(known?.depends ?? []), ...groups],
    });
  }
  return present;
}

/** Pure: the packages DEPENDENCY_SCRIPT shows removed with their configuration kept (config-files). */
function parseResidual(stdout: string): Set<string> {
  const residual = new Set<string>();
  for (const line of stdout.split("\n")) {
    const [abbrev = "", name] = line.split("\t");
    if (name && abbrev[1] === "c") residual.add(name.trim());
  }
  return residual;
}

export type { RemovalMode };

/** What a removal may take, and what it keeps because something that stays needs it. */
export interface RemovalSet {
  remove: string[];
  kept: { name: string; neededBy: string }[];
}

/** Pure: the file comment's rule over the recorded names and the VM's packages. */
export function removalSet(recorded: readonly string[], present: Map<string, PackageRelations>): RemovalSet {
  const remove = new Set(recorded.filter((n) => present.has(n)));
  const providers = new Map<string, string[]>();
  for (const [name, rel] of present)
    for (const virtual of [name, ...rel.provides]) providers.set(virtual, [...(providers.get(virtual) ?? []), name]);
  const kept: RemovalSet["kept"] = [];
  for (let changed = true; changed; ) {
    changed = false;
    for (const [name, rel] of present) {
      if (remove.has(name)) continue;
      for (const group of rel.depends) {
        const satisfiers = group.flatMap((alt) => providers.get(alt) ?? []);
        if (satisfiers.length === 0 || satisfiers.some((s) => !remove.has(s))) continue;
        for (const s of satisfiers) {
          remove.delete(s);
          kept.push({ name: s, neededBy: name });
        }
        changed = true;
      }
    }
  }
  return { remove: recorded.filter((n) => remove.has(n)), kept };
}

/** One installer's record against the VM: what a removal takes, keeps, and the record it leaves. */
export interface RemovalLook {
  installer: string;
  mode: RemovalMode;
  record: InstalledRecord;
  set: RemovalSet;
  /** Recorded packages dpkg's log shows removed and installed again since: kept, and dropped from the record. */
  reinstalled: { name: string; removal: DpkgLogLine }[];
  /** Recorded packages with a time whose logs cannot say whether they were: kept and still recorded. */
  unsure: { name: string; why: string }[];
  /** Recorded packages removed earlier with their configuration kept: purged in mode "purge". */
  residual: string[];
  /** Users and groups stay: a package is kept, or the configuration and data they own stay (mode "remove"). */
  keepAccounts: boolean;
  /** Recorded groups and users still there, each with its members (groups) for the decision. */
  groups: string[];
  users: string[];
  /** Groups kept because someone vm-install did not add is a member: name -> members. */
  groupsKept: { name: string; members: string[] }[];
  files: string[];
}

/** One look as root (the inventory is root's 0600): the record, dpkg's relations, groups, users. */
export const REMOVAL_LOOK = defineLook("the look before a removal", [
  INVENTORY_PROBE,
  {
    name: "removal.dpkg",
    command: "dpkg-query -W -f='${db:Status-Abbrev}\\t${Package}\\t${Provides}\\t${Pre-Depends}\\t${Depends}\\n'",
    writer: "root",
    use: "what a recorded package's removal would break: kept",
  },
  DPKG_LOG_PROBE,
  {
    name: "removal.groups",
    command: "getent group | cut -d: -f1,3,4",
    writer: "root",
    use: "recorded system groups still there, and their members",
  },
  {
    name: "removal.users",
    command: "getent passwd | cut -d: -f1,3",
    writer: "root",
    use: "recorded system users still there: deleted",
  },
] as const);

/**
 * Debian's range for the system accounts maintainer scripts create (adduser --system): only these are
 * ever removed, so a hand edit of the inventory can never name root or a person's account.
 */
const isSystemId = (id: string | undefined) => /^[0-9]+$/.test(id ?? "") && Number(id) >= 100 && Number(id) <= 999;

/** What a removal decides from: root's facts only, since it deletes packages, accounts and files. */
export interface RemovalFacts {
  inventory: RootFact;
  dpkg: RootFact;
  groups: RootFact;
  users: RootFact;
  dpkgLog: RootFact;
}

/** Reads the record, the VM's packages and relations, groups, users and which recorded files exist (read-only). */
export async function lookForRemoval(
  { remote }: Pick<InstallerContext<unknown>, "remote">,
  installer: string,
  revokedMembers: readonly string[] = [],
  mode: RemovalMode = "purge",
): Promise<RemovalLook> {
  const opts = { sudo: true, env: { LC_ALL: "C" }, label: "looking at what a removal takes", timeoutMs: 60_000 };
  const facts = REMOVAL_LOOK.parse((await remote.run(REMOVAL_LOOK.script, opts)).stdout);
  const look = removalFrom(
    {
      inventory: facts.get("inventory.packages"),
      dpkg: facts.get("removal.dpkg"),
      groups: facts.get("removal.groups"),
      users: facts.get("removal.users"),
      dpkgLog: facts.get("removal.dpkg_log"),
    },
    installer,
    revokedMembers,
    mode,
  );
  const files = look.record.files.length ? await existingFiles(remote, look.record.files) : [];
  return { ...look, files };
}

/** Pure: the removal `facts` decide (the files recorded are looked for apart: they come from the record). */
export function removalFrom(
  facts: RemovalFacts,
  installer: string,
  revokedMembers: readonly string[] = [],
  mode: RemovalMode = "purge",
): RemovalLook {
  const record = recordOf(inventoryFrom(facts.inventory), installer);
  for (const f of [facts.dpkg, facts.groups, facts.users]) {
    if (rootFact(f, "a removal").code !== 0)
      throw new Error(`the look before a removal failed: ${f.name} exited ${f.code}`);
  }
  const present = parseRelations(facts.dpkg.text);
  const { reinstalled, unsure } = provenanceOf(record, present, facts.dpkgLog);
  const notOurs = new Set([...reinstalled, ...unsure].map((p) => p.name));
  const set = removalSet(
    record.packages.filter((p) => !notOurs.has(p)),
    present,
  );
  const leftover = parseResidual(facts.dpkg.text);
  const residual = record.packages.filter((p) => leftover.has(p));
  const members = new Map(
    facts.groups.text
      .split("\n")
      .map((l) => l.split(":"))
      .filter(([name, gid]) => name && isSystemId(gid))
      .map(([name, , list = ""]) => [name, list.split(",").filter(Boolean)] as const),
  );
  const users = new Set(
    facts.users.text
      .split("\n")
      .map((l) => l.split(":"))
      .filter(([name, uid]) => name && isSystemId(uid))
      .map(([name]) => name),
  );
  const keepAccounts = set.kept.length > 0 || mode === "remove";
  // Members that leave with this removal (revoked, or users it deletes) do not keep a group.
  const leaving = [...revokedMembers, ...(keepAccounts ? [] : record.users.filter((u) => users.has(u)))];
  const groupsKept = record.groups
    .filter((g) => members.has(g))
    .map((g) => ({ name: g, members: members.get(g)!.filter((m) => !leaving.includes(m)) }))
    .filter((g) => g.members.length > 0);
  const groups = keepAccounts
    ? []
    : record.groups.filter((g) => members.has(g) && !groupsKept.some((k) => k.name === g));
  return {
    installer,
    mode,
    record,
    set,
    reinstalled,
    unsure,
    residual,
    keepAccounts,
    groups,
    users: keepAccounts ? [] : record.users.filter((u) => users.has(u)),
    groupsKept,
    files: [],
  };
}

async function existingFiles(remote: InstallerContext<unknown>["remote"], files: string[]): Promise<string[]> {
  const r = await remote.run(`for f in ${files.map(quote).join(" ")}; do [ -e "$f" ] && echo "$f"; done; true`, {
    sudo: true,
    label: "looking for recorded files",
    timeoutMs: 30_000,
  });
  const there = new Set(r.stdout.split("\n"));
  return files.filter((f) => there.has(f));
}

/** The record a removal leaves: what it kept (a later removal takes it once nothing needs it). */
function recordAfter(look: RemovalLook): InstalledRecord {
  const keptNames = new Set([...look.set.kept, ...look.unsure].map((k) => k.name));
  if (look.mode === "remove") for (const p of [...look.set.remove, ...look.residual]) keptNames.add(p);
  const kept = look.record.packages.filter((p) => keptNames.has(p));
  const accounts = look.keepAccounts;
  return withTimesOfItsPackages({
    packages: kept,
    groups: accounts ? look.record.groups : look.groupsKept.map((g) => g.name),
    users: accounts ? look.record.users : [],
    files: [],
    installedAt: look.record.installedAt,
  });
}

const sameList = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** Pure: the changes that take `look`'s record back off, in order: packages, users, groups, files, record. */
export function planRemoval<E>(look: RemovalLook): Change<E>[] {
  const changes: Change<E>[] = [];
  const remove = look.mode === "purge" ? [...look.set.remove, ...look.residual] : look.set.remove;
  const kept = look.mode === "remove" ? " (their configuration and data stay)" : "";
  if (remove.length)
    changes.push({
      kind: "remove-packages",
      what: [`removed ${remove.join(" ")}${kept}`],
      why: `installed by vm-install (${look.installer}) and still there`,
      apply: async ({ apt }) => void (await purgeExactly(apt, remove, look.mode)),
    });
  // userdel also takes the user's own group (USERGROUPS_ENAB): a group may be gone by its turn.
  const accounts = [
    ...look.users.map((u) => `userdel ${quote(u)}`),
    ...look.groups.map((g) => `{ ! getent group ${quote(g)} >/dev/null || groupdel ${quote(g)}; }`),
  ];
  if (accounts.length)
    changes.push({
      kind: "remove-accounts",
      what: [...look.users.map((u) => `removed user ${u}`), ...look.groups.map((g) => `removed group ${g}`)],
      why: "created by the packages vm-install installed",
      apply: async ({ remote }) =>
        void (await remote.run(accounts.join(" && "), {
          sudo: true,
          mutates: true,
          label: "removing users and groups",
          timeoutMs: 60_000,
        })),
    });
  if (look.files.length)
    changes.push({
      kind: "remove-files",
      what: look.files.map((f) => `removed ${f}`),
      why: "written by vm-install",
      apply: async ({ remote }) =>
        void (await remote.run(command("rm", "-f", "--", ...look.files), {
          sudo: true,
          mutates: true,
          label: "removing files vm-install wrote",
          timeoutMs: 30_000,
        })),
    });
  const after = recordAfter(look);
  const changed = RECORD_LISTS.some((k) => !sameList(after[k], look.record[k]));
  if (changed)
    changes.push({
      kind: "inventory",
      what: [],
      why: "the inventory lists what is no longer there",
      apply: async ({ remote }) => void (await updateRecord(remote, look.installer, () => after)),
    });
  return changes;
}

/** The warnings a removal leaves: what it kept and why. */
export function removalWarnings(look: RemovalLook): string[] {
  return [
    ...look.reinstalled.map(
      ({ name, removal: r }) =>
        `${name} was removed and installed again since vm-install installed it: kept ` +
        `(dpkg.log: ${r.action} at ${r.time})`,
    ),
    ...look.unsure.map(
      ({ name, why }) =>
        `kept ${name}: vm-install cannot tell whether it was removed and installed again since it installed it ` +
        `(${why}); if it is still vm-install's, remove it by hand (apt-get purge ${name})`,
    ),
    ...look.set.kept.map((k) => `kept ${k.name}: ${k.neededBy} (not installed by this installer) depends on it`),
    ...look.groupsKept.map((g) => `kept group ${g.name}: ${g.members.join(", ")} (not added by vm-install) in it`),
  ];
}
