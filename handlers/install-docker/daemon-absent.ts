// install-docker with `state: "absent"` takes back the daemon.json keys vm-install wrote (the record in
// the inventory), after the packages: the file is no dpkg conffile, so a purge leaves it, and a dockerd that
// was there before vm-install must run again on the admin's own configuration.
import type { Change } from "../common/installer-model";
import type { DaemonFile, DaemonJson } from "./daemon-config";
import { writeDaemonJson } from "./daemon-config-apply";
import { type DaemonRecord, NO_RECORD, takenBack, writeDaemonRecord } from "./daemon-record";
import { sameJson } from "./json-value";
import type { DockerEvent } from "./package-work";

/** What taking back daemon.json does: the file's next text (null: remove it, undefined: leave it). */
export interface DaemonTakeBack {
  next?: string | null;
  removed: string[];
  /** Keys set back to the admin's value vm-install replaced. */
  restored: string[];
  /** Recorded keys the file no longer holds as vm-install wrote them: left to the admin. */
  kept: string[];
}

/**
 * Pure. daemon.json without what vm-install wrote and the file still holds, the admin's values it replaced
 * put back; undefined when nothing is recorded.
 */
export function daemonTakeBack(file: DaemonFile, record: DaemonRecord): DaemonTakeBack | undefined {
  const keys = Object.keys(record.written);
  if (!keys.length) return undefined;
  if (file.kind !== "json") return { removed: [], restored: [], kept: keys };
  const value: DaemonJson = { ...file.value };
  const removed: string[] = [];
  const restored: string[] = [];
  const kept: string[] = [];
  for (const key of keys) {
    const left = takenBack(key, value[key], record.written[key], record.replaced[key]);
    if (sameJson(left, value[key])) kept.push(key);
    else {
      if (key in record.replaced) restored.push(`${key} ${JSON.stringify(left)}`);
      else removed.push(left === undefined ? key : `${key} (the options vm-install set)`);
      if (left === undefined) delete value[key];
      else value[key] = left;
    }
  }
  if (!removed.length && !restored.length) return { removed, restored, kept };
  const next = Object.keys(value).length ? `${JSON.stringify(value, null, 2)}\n` : null;
  return { next, removed, restored, kept };
}

function words(plan: DaemonTakeBack): string[] {
  const file = "/etc/docker/daemon.json";
  const lines = [];
  if (plan.next === null) lines.push(`removed ${file} (it held only what vm-install wrote)`);
  else if (plan.removed.length) lines.push(`${file}: removed ${plan.removed.join(", ")} (written by vm-install)`);
  if (plan.next !== null && plan.restored.length)
    lines.push(`${file}: restored ${plan.restored.join(", ")} (the admin's values vm-install replaced)`);
  if (plan.kept.length) lines.push(`${file}: left ${plan.kept.join(", ")} (changed since vm-install wrote it)`);
  return lines;
}

/** The change: the file rewritten or removed, dockerd restarted when it still runs, the record cleared. */
export function daemonTakeBackChange(plan: DaemonTakeBack): Change<DockerEvent> {
  return {
    kind: "daemon-json",
    what: words(plan),
    why: "the inventory records daemon.json keys vm-install wrote",
    async apply({ remote, progress }) {
      if (plan.next !== undefined) {
        await writeDaemonJson(remote, plan.next);
        // A dockerd that was there before vm-install (its packages were not recorded, so they stay). One whose
        // package just went may still run with its unit file gone: nothing to restart there.
        const restart =
          "systemctl daemon-reload; if systemctl is-active --quiet docker.service && " +
          "systemctl cat docker.service >/dev/null 2>&1; then systemctl restart docker.service; fi";
        await remote.run(restart, {
          sudo: true,
          mutates: true,
          label: "restarting docker.service on its configuration before vm-install",
          timeoutMs: 120_000,
        });
      }
      await writeDaemonRecord(remote, () => NO_RECORD, progress);
      return undefined;
    },
  };
}
