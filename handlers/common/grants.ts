// The inventory of what vm-install granted on a VM (pg_hba.conf lines, roles given LOGIN, docker group
// members), one root-only JSON file keyed by installer, so a rerun with narrower settings can take back
// what it gave, and only that. Written after the changes it describes, in one atomic write: a run that
// dies in between leaves a grant unrecorded (kept forever, the safe side).

import type { Remote } from "./exec";
import { type RemoteFile, writeRemoteFile } from "./remote-file";
import { defineLook, type RootFact, rootFact } from "./vm-facts";

export const GRANTS_DIR = "/var/lib/vm-install";
export const GRANTS_FILE = `${GRANTS_DIR}/grants.json`;
const ABOUT =
  "What vm-install granted on this VM; a rerun revokes what its settings no longer grant, and only what is listed " +
  "here.";

/** The whole file: `version`, `about`, then one key per installer ("postgres", "docker"). */
export interface Inventory {
  version: 1;
  [installer: string]: unknown;
}

export function emptyInventory(): Inventory {
  return { version: 1 };
}

/** The file's text as read (undefined: no file yet) as an Inventory; a damaged file fails with what to do. */
function parseInventory(text: string | undefined): Inventory {
  if (text === undefined || text.trim() === "") return emptyInventory();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(
      `${GRANTS_FILE} on the VM is not valid JSON (${(err as Error).message}): repair it, or remove it to make the ` +
        `project forget ` +
        "what it granted (nothing is revoked then), and run the job again",
    );
  }
  if (
    typeof value !== "object" ||
    value === null ||
    Array.isArray(value) ||
    (value as { version?: unknown }).version !== 1
  ) {
    throw new Error(
      `${GRANTS_FILE} on the VM is not a version 1 inventory: repair or remove it, and run the job again`,
    );
  }
  return value as Inventory;
}

/** A list of strings from an installer's section, whatever the file holds (a hand edit must not crash a run). */
export function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/** The inventory file (root's, 0600: read through sudo); exit 3 when there is none. */
export const GRANTS_LOOK = defineLook("the look at the grants inventory", [
  {
    name: "grants",
    command: `if [ -e ${GRANTS_FILE} ]; then cat ${GRANTS_FILE}; else exit 3; fi`,
    writer: "root",
    use: "what vm-install granted: the only grants a rerun revokes",
  },
] as const);

/** The inventory from its probe's answer: only root's file may say which grants are revoked. */
export function grantsFrom(fact: RootFact): Inventory {
  const f = rootFact(fact, "the revocation of grants");
  if (f.code !== 0 && f.code !== 3) throw new Error(`cannot read ${GRANTS_FILE} on the VM (exit ${f.code})`);
  return parseInventory(f.code === 3 ? undefined : f.text);
}

/** Reads the inventory (root-only, so through sudo). Missing file: an empty inventory. */
export async function readGrants(remote: Remote): Promise<Inventory> {
  const r = await remote.run(GRANTS_LOOK.script, { sudo: true, label: `reading ${GRANTS_FILE}`, timeoutMs: 30_000 });
  return grantsFrom(GRANTS_LOOK.parse(r.stdout).get("grants"));
}

/** The inventory with `installer`'s section replaced; other installers' sections are kept as they were. */
export function withSection(inventory: Inventory, installer: string, section: unknown): Inventory {
  return { ...inventory, version: 1, about: ABOUT, [installer]: section };
}

/**
 * Writes the inventory (remote-file.ts): directory 0700 and file 0600, both root's; the content goes on
 * stdin (it names users and networks, nothing secret, but nothing user-given is put on a command line).
 */
export async function writeGrants(remote: Remote, inventory: Inventory): Promise<void> {
  await writeRemoteFile(remote, inventoryFile(GRANTS_FILE, `${JSON.stringify(inventory, null, 2)}\n`));
}

/** One of vm-install's root-only records in GRANTS_DIR (grants, packages): 0600 in a 0700 directory. */
export function inventoryFile(path: string, content: string): RemoteFile {
  return { path, content, writer: "root", mode: "0600", dir: { mode: "0700", exact: true } };
}

/** Same members, in any order. */
export function sameSet(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}
