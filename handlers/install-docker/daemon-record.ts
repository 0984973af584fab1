// What vm-install wrote into daemon.json and the admin's values it replaced there, kept in the grants
// inventory (docker.daemon_json, docker.daemon_json_replaced). Before anything acts on it the record is
// checked against the file: a key (a log option, for log-opts) that no longer holds what vm-install wrote
// was changed or removed since, so it is the admin's and forgotten. Taking a setting back puts back the
// value it replaced; log-opts is merged with the admin's options, so only the options vm-install set count.

import type { Remote } from "../common/exec";
import { GRANTS_FILE, type Inventory, readGrants, withSection, writeGrants } from "../common/grants";
import type { Progress } from "../common/progress";
import { isObject, type JsonObject, sameJson } from "./json-value";

/** written: key -> the value vm-install wrote; replaced: key -> the value it replaced (log-opts: by option). */
export interface DaemonRecord {
  written: JsonObject;
  replaced: JsonObject;
}

export const NO_RECORD: DaemonRecord = { written: {}, replaced: {} };

const objectOr = (v: unknown): JsonObject => (isObject(v) ? v : {});

/** The record in the inventory's docker section (a hand-edited part that is not an object: nothing recorded). */
export function recordOf(inventory: Inventory): DaemonRecord {
  const docker = objectOr(inventory.docker);
  return { written: objectOr(docker.daemon_json), replaced: objectOr(docker.daemon_json_replaced) };
}

/** The inventory with the docker section's record replaced; its other entries (group_members) kept. */
export function withDaemonRecord(inventory: Inventory, record: DaemonRecord): Inventory {
  const { daemon_json_replaced: _, ...docker } = objectOr(inventory.docker);
  const replaced = Object.keys(record.replaced).length ? { daemon_json_replaced: record.replaced } : {};
  return withSection(inventory, "docker", { ...docker, daemon_json: record.written, ...replaced });
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

/**
 * Pure. The record as the file bears it out, and what it forgets: each key whose value is not what
 * vm-install wrote (log-opts: each option), with the value it replaced there. Names: "debug", "log-opts max-size".
 */
export function checkDaemonRecord(
  current: JsonObject,
  record: DaemonRecord,
): { record: DaemonRecord; forgotten: string[] } {
  const written: JsonObject = {};
  const replaced: JsonObject = {};
  const forgotten: string[] = [];
  for (const [key, value] of Object.entries(record.written)) {
    if (key === "log-opts" && isObject(value)) {
      const now = objectOr(current[key]);
      const held = Object.keys(value).filter((o) => o in now && sameJson(now[o], value[o]));
      for (const o of Object.keys(value)) if (!held.includes(o)) forgotten.push(`${key} ${o}`);
      if (!held.length) continue;
      written[key] = Object.fromEntries(held.map((o) => [o, value[o]]));
      // An option the admin set since is theirs: the value vm-install had replaced there is forgotten with it.
      const gone = Object.keys(value).filter((o) => !held.includes(o));
      const was = Object.entries(objectOr(record.replaced[key])).filter(([o]) => !gone.includes(o));
      if (was.length) replaced[key] = Object.fromEntries(was);
    } else if (key in current && sameJson(current[key], value)) {
      written[key] = value;
      if (key in record.replaced) replaced[key] = record.replaced[key];
    } else forgotten.push(key);
  }
  return { record: { written, replaced }, forgotten };
}

/**
 * Pure. What a recorded key becomes once the settings no longer ask for it: the value vm-install
 * replaced (undefined: removed), or, for log-opts, the file's options minus those vm-install set, with
 * those it replaced put back. A value that is not what vm-install wrote stays as it is.
 */
export function takenBack(key: string, current: unknown, written: unknown, replaced: unknown): unknown {
  if (key !== "log-opts") return sameJson(current, written) ? replaced : current;
  if (!isObject(current) || !isObject(written)) return current;
  const mine = (k: string) => k in written && sameJson(current[k], written[k]);
  if (!Object.keys(current).some(mine)) return current;
  const left = Object.fromEntries(Object.entries(current).filter(([k]) => !mine(k)));
  const back = { ...left, ...Object.fromEntries(Object.entries(objectOr(replaced)).filter(([k]) => !(k in left))) };
  return Object.keys(back).length ? back : undefined;
}

/**
 * Pure. The record after a write: each key the settings own that vm-install changed now or had recorded
 * (log-opts: the options changed now or recorded), and for each, the admin's value it replaced (kept from
 * the record when vm-install had written the key before). A key the file already held as asked stays the admin's.
 */
export function nextRecord(current: JsonObject, owned: JsonObject, recorded: DaemonRecord): DaemonRecord {
  const written: JsonObject = {};
  const replaced: JsonObject = {};
  for (const [k, v] of Object.entries(owned)) {
    if (k === "log-opts" && isObject(v)) {
      const was = objectOr(current[k]);
      const rec = objectOr(recorded.written[k]);
      const mine = Object.entries(v).filter(([o, x]) => o in rec || !sameJson(was[o], x));
      if (!mine.length) continue;
      written[k] = Object.fromEntries(mine);
      // The admin's options overwritten now, or dropped (another driver's), beside those replaced before.
      const lost = Object.entries(was).filter(([o, x]) => !(o in rec) && !sameJson(v[o], x));
      const before = { ...Object.fromEntries(lost), ...objectOr(recorded.replaced[k]) };
      if (Object.keys(before).length) replaced[k] = before;
    } else if (k in recorded.written || !sameJson(current[k], v)) {
      written[k] = v;
      if (k in recorded.replaced) replaced[k] = recorded.replaced[k];
      else if (!(k in recorded.written) && k in current) replaced[k] = current[k];
    }
  }
  return { written, replaced };
}
