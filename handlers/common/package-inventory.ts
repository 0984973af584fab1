// What vm-install installed on a VM, per installer: the packages, system groups and users each apt-get
// install of a job brought, as that transaction's own dpkg recorded them (apt-transaction.ts: never a diff
// across a wait, so what another process installs meanwhile is not ours), and files an installer wrote.
// `state: "absent"` takes back exactly these. Its own root-only file beside grants.json, so an installer
// writing its grants from an earlier read cannot drop what was recorded meanwhile.

import type { Apt } from "./apt";
import { DPKG_TIME, type TransactionRecord } from "./apt-transaction";
import type { Remote } from "./exec";
import { GRANTS_DIR, inventoryFile } from "./grants";
import { writeRemoteFile } from "./remote-file";
import { defineLook, type RootFact, rootFact } from "./vm-facts";

export const PACKAGES_FILE = `${GRANTS_DIR}/packages.json`;
const ABOUT =
  "What vm-install installed on this VM, per installer; state absent removes what is listed here, and only that.";

/** What one installer brought: package names, system groups and users the packages created, files it wrote. */
export interface InstalledRecord {
  packages: string[];
  groups: string[];
  users: string[];
  files: string[];
  /**
   * Per package, when the job's transaction that installed it began, as dpkg.log writes times (removal.ts:
   * a removal dpkg logged after it means someone installed it again). None in records of older versions.
   */
  installedAt?: Record<string, string>;
}

/** The lists of a record (installedAt only says more about `packages`). */
export const RECORD_LISTS = ["packages", "groups", "users", "files"] as const;

export interface PackageInventory {
  version: 1;
  about?: string;
  installers: Record<string, InstalledRecord>;
}

function emptyRecord(): InstalledRecord {
  return { packages: [], groups: [], users: [], files: [] };
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];

/** The file's text (undefined: no file) as an inventory; a damaged file fails saying what to do. */
export function parsePackageInventory(text: string | undefined): PackageInventory {
  if (text === undefined || text.trim() === "") return { version: 1, installers: {} };
  let value: { version?: unknown; installers?: unknown };
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(
      `${PACKAGES_FILE} on the VM is not valid JSON (${(err as Error).message}): repair it, or remove it to make ` +
        "vm-install forget what it installed (state absent then removes nothing), and run the job again",
    );
  }
  if (typeof value !== "object" || value === null || value.version !== 1)
    throw new Error(`${PACKAGES_FILE} on the VM is not a version 1 inventory: repair or remove it, and run again`);
  const installers: Record<string, InstalledRecord> = {};
  const raw = typeof value.installers === "object" && value.installers !== null ? value.installers : {};
  for (const [key, section] of Object.entries(raw as Record<string, Record<string, unknown>>)) {
    const s = section ?? {};
    const packages = strings(s.packages);
    const times = Object.entries(typeof s.installedAt === "object" && s.installedAt !== null ? s.installedAt : {});
    const installedAt = Object.fromEntries(
      times.filter(([p, t]) => packages.includes(p) && typeof t === "string" && DPKG_TIME.test(t)),
    );
    installers[key] = {
      packages,
      groups: strings(s.groups),
      users: strings(s.users),
      files: strings(s.files),
      ...(Object.keys(installedAt).length ? { installedAt } : {}),
    };
  }
  return { version: 1, about: ABOUT, installers };
}

/** One installer's record (empty when it installed nothing yet). */
export function recordOf(inventory: PackageInventory, installer: string): InstalledRecord {
  return inventory.installers[installer] ?? emptyRecord();
}

/** The inventory file (root's, 0600: read through sudo); exit 3 when there is none. */
export const INVENTORY_PROBE = {
  name: "inventory.packages",
  command: `if [ -e ${PACKAGES_FILE} ]; then cat ${PACKAGES_FILE}; else exit 3; fi`,
  writer: "root",
  use: "what vm-install installed: what state absent may remove",
} as const;

export const INVENTORY_LOOK = defineLook("the look at the package inventory", [INVENTORY_PROBE] as const);

/** The inventory from its probe's answer: only root's file may say what a removal takes. */
export function inventoryFrom(fact: RootFact): PackageInventory {
  const f = rootFact(fact, "the package inventory");
  if (f.code !== 0 && f.code !== 3) throw new Error(`cannot read ${PACKAGES_FILE} on the VM (exit ${f.code})`);
  return parsePackageInventory(f.code === 3 ? undefined : f.text);
}

/** Reads the inventory (root-only, so through sudo). */
export async function readPackageInventory(remote: Remote): Promise<PackageInventory> {
  const r = await remote.run(INVENTORY_LOOK.script, {
    sudo: true,
    label: `reading ${PACKAGES_FILE}`,
    timeoutMs: 30_000,
  });
  return inventoryFrom(INVENTORY_LOOK.parse(r.stdout).get("inventory.packages"));
}

/** Writes the inventory atomically, directory 0700 and file 0600, root's; the content goes on stdin. */
async function writePackageInventory(remote: Remote, inventory: PackageInventory): Promise<void> {
  const installers = Object.fromEntries(
    Object.entries(inventory.installers)
      .filter(([, r]) => RECORD_LISTS.some((list) => r[list].length > 0))
      .map(([k, r]) => [k, withTimesOfItsPackages(r)]),
  );
  const content = `${JSON.stringify({ version: 1, about: ABOUT, installers }, null, 2)}\n`;
  await writeRemoteFile(remote, inventoryFile(PACKAGES_FILE, content));
}

/** Reads, changes `installer`'s record with `edit`, writes back (jobs on one VM run one after another). */
export async function updateRecord(
  remote: Remote,
  installer: string,
  edit: (record: InstalledRecord) => InstalledRecord,
  read?: PackageInventory,
): Promise<void> {
  const inventory = read ?? (await readPackageInventory(remote));
  inventory.installers[installer] = edit(recordOf(inventory, installer));
  await writePackageInventory(remote, inventory);
}

/** `record` with the times of packages it no longer lists left out (and none when none is left). */
export function withTimesOfItsPackages(record: InstalledRecord): InstalledRecord {
  const { installedAt, ...lists } = record;
  const kept = Object.entries(installedAt ?? {}).filter(([p]) => record.packages.includes(p));
  return kept.length ? { ...lists, installedAt: Object.fromEntries(kept) } : lists;
}

/**
 * `record` with `more` added to each list (each name once, in the order first seen); a transaction's packages
 * get its time (`more.at`), also those recorded before: it installed them again, so they are its now.
 */
export function withAdded(
  record: InstalledRecord,
  more: Partial<Omit<InstalledRecord, "installedAt">> & Pick<TransactionRecord, "at">,
): InstalledRecord {
  const merge = (a: string[], b: string[] = []) => [...new Set([...a, ...b])];
  const times = { ...record.installedAt };
  for (const p of more.packages ?? []) if (more.at) times[p] = more.at;
  return withTimesOfItsPackages({
    packages: merge(record.packages, more.packages),
    groups: merge(record.groups, more.groups),
    users: merge(record.users, more.users),
    files: merge(record.files, more.files),
    installedAt: times,
  });
}

/**
 * Makes every apt-get install of this job record what its transaction brought under `installer`, whether
 * it succeeded or not (a failed batch may still have installed dependencies). A failure to record fails
 * the job when the install itself succeeded: a package left unrecorded could never be taken back off.
 */
export function recordInstalls(apt: Apt, installer: string): Apt {
  apt.recordTransactions({
    // Read with the transaction's record, in the same exec (issue 30).
    probes: [INVENTORY_PROBE],
    record: async (added, seen) => {
      if (added.packages.length + added.groups.length + added.users.length === 0) return;
      const fact = seen(INVENTORY_PROBE.name);
      const read = fact ? inventoryFrom(rootFact(fact, "the package inventory")) : undefined;
      await updateRecord(apt.remote, installer, (record) => withAdded(record, added), read);
    },
  });
  return apt;
}
