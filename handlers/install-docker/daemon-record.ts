// What vm-install wrote into daemon.json, kept in the grants inventory (docker.daemon_json), so a rerun
// whose settings no longer ask for a key removes it, and only when the file still holds what vm-install
// wrote: a key the admin wrote (or changed since) is never removed. log-opts is merged with the admin's
// options, so only the options vm-install set (max-size, max-file) are recorded and removed there.

import type { Remote } from "../common/exec";
import { GRANTS_FILE, type Inventory, readGrants, withSection, writeGrants } from "../common/grants";
import type { Progress } from "../common/progress";

/** key -> the value vm-install wrote; for log-opts, only the options it set. */
export type DaemonRecord = Record<string, unknown>;

function isObject(v: unknown): v is DaemonRecord {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The record in the inventory's docker section (a hand-edited one that is not an object: nothing recorded). */
export function recordOf(inventory: Inventory): DaemonRecord {
  const docker = inventory.docker;
  const rec = isObject(docker) ? docker.daemon_json : undefined;
  return isObject(rec) ? rec : {};
}

/** The inventory with the docker section's daemon_json replaced; its other entries (group_members) kept. */
export function withDaemonRecord(inventory: Inventory, record: DaemonRecord): Inventory {
  const docker = isObject(inventory.docker) ? inventory.docker : {};
  return withSection(inventory, "docker", { ...docker, daemon_json: record });
}

/** Reads the inventory's record (root-only file). */
export function readDaemonRecord(remote: Remote, progress: Progress): Promise<DaemonRecord> {
  return progress.step(`reading ${GRANTS_FILE}`, async () => recordOf(await readGrants(remote)), "grants");
}

/** Records what daemon.json now holds from vm-install; the inventory is read again so no other entry is lost. */
export async function writeDaemonRecord(
  remote: Remote,
  recordAfter: (recorded: DaemonRecord) => DaemonRecord,
  progress: Progress,
): Promise<void> {
  await progress.step(
    `recording in ${GRANTS_FILE}`,
    async () => {
      const inventory = await readGrants(remote);
      await writeGrants(remote, withDaemonRecord(inventory, recordAfter(recordOf(inventory))));
    },
    "grants",
  );
}
