// install-docker's records re-checked against the VM before anything acts on them (issue 32): a member
// vm-install added who is no longer in group docker was removed since, a daemon.json key (or log option)
// that no longer holds what vm-install wrote was changed or removed since. Such a record is forgotten
// (grants.json rewritten, said in `changes`), so a later grant of the same by hand is the admin's, never revoked.

import { GRANTS_FILE, type Inventory, readGrants, stringList, withSection, writeGrants } from "../common/grants";
import type { Change } from "../common/installer-model";
import { DAEMON_JSON, type DaemonFile } from "./daemon-config";
import { checkDaemonRecord, type DaemonRecord, recordOf, withDaemonRecord } from "./daemon-record";
import type { DockerState } from "./docker-state";
import { isObject } from "./json-value";
import type { DockerEvent } from "./package-work";

/** What the inventory says, as the VM bears it out, and what it no longer does. */
export interface RecordCheck {
  /** The inventory without what it forgets: what the group and daemon.json steps plan from. */
  inventory: Inventory;
  daemon: DaemonRecord;
  /** Members vm-install added that are not members now, and not to be added again. */
  members: string[];
  /** daemon.json keys ("debug") and log options ("log-opts max-size") no longer as vm-install wrote them. */
  keys: string[];
}

export const groupMembersOf = (inventory: Inventory): string[] =>
  stringList(isObject(inventory.docker) ? inventory.docker.group_members : undefined);

/** Pure. The inventory re-checked against the group's members and daemon.json as found. */
export function checkRecords(
  inventory: Inventory,
  docker: DockerState,
  users: string[],
  file: DaemonFile,
): RecordCheck {
  const recorded = groupMembersOf(inventory);
  // A member listed in users who left is added again (and recorded again) by the group step: not forgotten.
  const members = recorded.filter((m) => !docker.groupMembers.includes(m) && !users.includes(m));
  const group = recorded.filter((m) => !members.includes(m));
  const daemon = checkDaemonRecord(file.kind === "json" ? file.value : {}, recordOf(inventory));
  const section = isObject(inventory.docker) ? inventory.docker : {};
  const withGroup = members.length ? withSection(inventory, "docker", { ...section, group_members: group }) : inventory;
  const next = daemon.forgotten.length ? withDaemonRecord(withGroup, daemon.record) : withGroup;
  return { inventory: next, daemon: daemon.record, members, keys: daemon.forgotten };
}

/** The change lines of what the check forgets. */
function forgetLines(check: RecordCheck): string[] {
  return [
    ...check.members.map(
      (m) =>
        `forgot: ${m} in group docker (not a member now: removed since vm-install added them; ` +
        "a later grant is the admin's, never revoked)",
    ),
    ...check.keys.map(
      (k) =>
        `forgot: ${DAEMON_JSON} ${k} (the file no longer holds what vm-install wrote: ` +
        "changed or removed since, the admin's now)",
    ),
  ];
}

/**
 * The forgetting as a change, planned first: the inventory read again and written without those records
 * (nothing else of it lost). The rest was planned from the re-checked inventory, so no new look is needed.
 * Undefined when the records hold.
 */
export function forgetChange(check: RecordCheck): Change<DockerEvent> | undefined {
  if (!check.members.length && !check.keys.length) return undefined;
  return {
    kind: "forget",
    what: forgetLines(check),
    why: `${GRANTS_FILE} records what the VM no longer shows`,
    async apply({ remote, progress }) {
      await progress.step(
        `forgetting in ${GRANTS_FILE} what the VM no longer shows`,
        async () => {
          const now = await readGrants(remote);
          const section = isObject(now.docker) ? now.docker : {};
          const group = groupMembersOf(now).filter((m) => !check.members.includes(m));
          const base = check.members.length ? withSection(now, "docker", { ...section, group_members: group }) : now;
          await writeGrants(remote, check.keys.length ? withDaemonRecord(base, check.daemon) : base);
        },
        "grants",
      );
      return undefined;
    },
  };
}
