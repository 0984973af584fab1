// What vm-install installed on a VM, per installer: the packages, system groups and users each apt-get
// install of a job newly brought (dpkg and getent looked at before and after it, so retries, failed
// batches and dependencies are all counted), and files an installer wrote. `state: "absent"` takes back
// exactly these; what was there before a run is never listed. Its own root-only file beside grants.json,
// so an installer writing its grants from an earlier read cannot drop what was recorded meanwhile.

import type { Apt } from "./apt";
import type { Remote } from "./exec";
import { GRANTS_DIR } from "./grants";

export const PACKAGES_FILE = `${GRANTS_DIR}/packages.json`;
const ABOUT =
  "What vm-install installed on this VM, per installer; state absent removes what is listed here, and only that.";

/** What one installer brought: package names, system groups and users the packages created, files it wrote. */
export interface InstalledRecord {
  packages: string[];
  groups: string[];
  users: string[];
  files: string[];
}

export interface PackageInventory {
  version: 1;
  about?: string;
  installers: Record<string, InstalledRecord>;
}

/** The packages dpkg has on the VM (any state but not-installed and config-files), its groups and users. */
export interface SystemNames {
  packages: Set<string>;
  groups: Set<string>;
  users: Set<string>;
}

export function emptyRecord(): InstalledRecord {
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
    installers[key] = {
      packages: strings(s.packages),
      groups: strings(s.groups),
      users: strings(s.users),
      files: strings(s.files),
    };
  }
  return { version: 1, about: ABOUT, installers };
}

/** One installer's record (empty when it installed nothing yet). */
export function recordOf(inventory: PackageInventory, installer: string): InstalledRecord {
  return inventory.installers[installer] ?? emptyRecord();
}

/** Reads the inventory (root-only, so through sudo). */
export async function readPackageInventory(remote: Remote): Promise<PackageInventory> {
  const r = await remote.run(
    `if [ -e ${PACKAGES_FILE} ]; then echo present; cat ${PACKAGES_FILE}; else echo absent; fi`,
    { sudo: true, label: `reading ${PACKAGES_FILE}`, timeoutMs: 30_000 },
  );
  const [first, ...rest] = r.stdout.split("\n");
  return parsePackageInventory(first.trim() === "present" ? rest.join("\n") : undefined);
}

/** Writes the inventory atomically, directory 0700 and file 0600, root's; the content goes on stdin. */
export async function writePackageInventory(remote: Remote, inventory: PackageInventory): Promise<void> {
  const installers = Object.fromEntries(
    Object.entries(inventory.installers).filter(([, r]) => Object.values(r).some((list) => list.length > 0)),
  );
  await remote.run(
    `umask 077 && mkdir -p ${GRANTS_DIR} && chown root:root ${GRANTS_DIR} && chmod 0700 ${GRANTS_DIR} && ` +
      `t=$(mktemp ${GRANTS_DIR}/.packages.json.XXXXXX) && { cat > "$t" && chmod 0600 "$t" && mv -f "$t" ` +
      `${PACKAGES_FILE} || { rm -f "$t"; exit 1; }; }`,
    {
      sudo: true,
      stdin: `${JSON.stringify({ version: 1, about: ABOUT, installers }, null, 2)}\n`,
      label: `writing ${PACKAGES_FILE}`,
      timeoutMs: 30_000,
      mutates: true,
    },
  );
}

/** Reads, changes `installer`'s record with `edit`, writes back (jobs on one VM run one after another). */
export async function updateRecord(
  remote: Remote,
  installer: string,
  edit: (record: InstalledRecord) => InstalledRecord,
): Promise<void> {
  const inventory = await readPackageInventory(remote);
  inventory.installers[installer] = edit(recordOf(inventory, installer));
  await writePackageInventory(remote, inventory);
}

/** `record` with `more` added to each list (each name once, in the order first seen). */
export function withAdded(record: InstalledRecord, more: Partial<InstalledRecord>): InstalledRecord {
  const merge = (a: string[], b: string[] = []) => [...new Set([...a, ...b])];
  return {
    packages: merge(record.packages, more.packages),
    groups: merge(record.groups, more.groups),
    users: merge(record.users, more.users),
    files: merge(record.files, more.files),
  };
}

/** dpkg status letters (db:Status-Abbrev's second) of a package that is not there: not-installed, config-files. */
const GONE = new Set(["n", "c"]);

/** Pure: SYSTEM_NAMES_SCRIPT's output as sets. */
export function parseSystemNames(stdout: string): SystemNames {
  const [, dpkg = "", groups = "", users = ""] = stdout.split(/^--- (?:packages|groups|users)$/m);
  const packages = new Set<string>();
  for (const line of dpkg.split("\n")) {
    const [abbrev, name] = line.split("\t");
    if (name && abbrev.length >= 2 && !GONE.has(abbrev[1])) packages.add(name.trim());
  }
  const names = (text: string) =>
    new Set(
      text
        .split("\n")
        .map((l) => l.trim())
        .filter(Boolean),
    );
  return { packages, groups: names(groups), users: names(users) };
}

/** The look before and after each install (tests answer it for a VM whose names do not change). */
export const SYSTEM_NAMES_SCRIPT =
  "echo '--- packages' && dpkg-query -W -f='${db:Status-Abbrev}\\t${Package}\\n' && " +
  "echo '--- groups' && getent group | cut -d: -f1 && echo '--- users' && getent passwd | cut -d: -f1";

/** The VM's packages, groups and users now (read-only). */
export async function readSystemNames(remote: Remote): Promise<SystemNames> {
  const r = await remote.run(SYSTEM_NAMES_SCRIPT, {
    env: { LC_ALL: "C" },
    label: "listing packages, groups and users",
    timeoutMs: 60_000,
  });
  return parseSystemNames(r.stdout);
}

/** Pure: what is in `after` and was not in `before`. */
export function newNames(before: SystemNames, after: SystemNames): Omit<InstalledRecord, "files"> {
  const added = (a: Set<string>, b: Set<string>) => [...b].filter((n) => !a.has(n)).sort();
  return {
    packages: added(before.packages, after.packages),
    groups: added(before.groups, after.groups),
    users: added(before.users, after.users),
  };
}

/**
 * Makes every `apt.install` of this job record what it newly brought under `installer`, whether it
 * succeeded or not (a failed batch may still have installed dependencies). A failure to record fails the
 * job when the install itself succeeded: a package left unrecorded could never be taken back off.
 */
export function recordInstalls(apt: Apt, installer: string): Apt {
  const install = apt.install.bind(apt);
  apt.install = async (specs, opts) => {
    const before = await readSystemNames(apt.remote);
    let failure: unknown;
    try {
      return await install(specs, opts);
    } catch (err) {
      failure = err;
      throw err;
    } finally {
      const recorded = recordNew(apt.remote, installer, before);
      if (failure === undefined) await recorded;
      else await recorded.catch(() => undefined);
    }
  };
  return apt;
}

async function recordNew(remote: Remote, installer: string, before: SystemNames): Promise<void> {
  const added = newNames(before, await readSystemNames(remote));
  if (added.packages.length + added.groups.length + added.users.length === 0) return;
  await updateRecord(remote, installer, (record) => withAdded(record, added));
}
