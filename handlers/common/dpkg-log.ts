// dpkg's own log (/var/log/dpkg.log and its rotations, root's) as the witness of a recorded package removed
// and installed again since vm-install's transaction installed it: that one is someone else's now, so state
// absent keeps it (removal.ts). An upgrade or `apt-get install --reinstall` logs no removal: the package never
// left, so it stays vm-install's. Times compare as dpkg writes them, the VM's local clock to the second.
import type { InstalledRecord } from "./package-inventory";
import { type RootFact, rootFact } from "./vm-facts";

const LOG = "/var/log/dpkg.log";

/**
 * Oldest first: dpkg.log.N (or .N.gz) from 1 while the sequence has no hole, then dpkg.log. Every file must be
 * a regular file root owns that group and others cannot write (exit 4), else its lines could be anyone's. The
 * first line of all (where the logs begin) and every install, remove and purge line are printed.
 */
const DPKG_LOG_SCRIPT = [
  "cd /var/log || exit 3;",
  "[ -e dpkg.log ] || exit 3;",
  "fs=dpkg.log; n=1;",
  'while [ -e "dpkg.log.$n" ] || [ -e "dpkg.log.$n.gz" ]; do',
  'if [ -e "dpkg.log.$n" ]; then fs="dpkg.log.$n $fs"; else fs="dpkg.log.$n.gz $fs"; fi; n=$((n + 1));',
  "done;",
  "for f in $fs; do",
  '[ -f "$f" ] && [ ! -L "$f" ] && [ -n "$(find "$f" -maxdepth 0 -user 0 ! -perm /022)" ] || exit 4;',
  'case $f in *.gz) gzip -t "$f" || exit 5;; esac;',
  "done;",
  'for f in $fs; do case $f in *.gz) gzip -dc "$f";; *) cat "$f";; esac; done |',
  'awk \'(NR == 1) || $3 == "install" || $3 == "remove" || $3 == "purge"\'',
].join(" ");

/** In the look before a removal (removal.ts), as root. */
export const DPKG_LOG_PROBE = {
  name: "removal.dpkg_log",
  command: DPKG_LOG_SCRIPT,
  writer: "root",
  use: "recorded packages removed and installed again since vm-install installed them (root's files only): kept",
} as const;

/** One install, remove or purge line of dpkg.log. */
export interface DpkgLogLine {
  time: string;
  action: "install" | "remove" | "purge";
  pkg: string;
}

/** What the logs say, from `since` (their first line) on; or why they cannot say anything. */
export type DpkgLog = { since: string; lines: DpkgLogLine[] } | { unknown: string };

const LINE = /^([0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}) (\S+) ([^\s:]+)(?::\S+)?(?: |$)/;

/** Pure: the probe's answer. Only root's files may keep a package off a removal's list. */
export function dpkgLogFrom(fact: RootFact): DpkgLog {
  const f = rootFact(fact, "dpkg's log");
  if (f.code === 3) return { unknown: `the VM has no ${LOG}` };
  if (f.code === 4)
    return { unknown: `a file of ${LOG}* is not root's alone (a regular file, not group or other writable)` };
  if (f.code !== 0) return { unknown: `reading ${LOG}* failed (exit ${f.code})` };
  let since: string | undefined;
  const lines: DpkgLogLine[] = [];
  for (const text of f.text.split("\n")) {
    const m = LINE.exec(text);
    if (!m) continue;
    since ??= m[1];
    if (m[2] === "install" || m[2] === "remove" || m[2] === "purge")
      lines.push({ time: m[1], action: m[2], pkg: m[3] });
  }
  return since ? { since, lines } : { unknown: `${LOG} is empty` };
}

/** Whether `pkg`, installed by vm-install's transaction that began at `at`, is still the one it installed. */
export type Provenance =
  | { verdict: "ours" }
  | { verdict: "reinstalled"; removal: DpkgLogLine }
  | { verdict: "unknown"; why: string };

/**
 * Pure: a removal or purge of `pkg` logged after `at` means it left the VM and came back. In the second `at`
 * itself, one counts only after an install of it in that second (the transaction's own): before that, it is
 * the removal that made room for the transaction. Logs that begin after `at` cannot tell.
 */
export function provenance(log: DpkgLog, pkg: string, at: string): Provenance {
  if ("unknown" in log) return { verdict: "unknown", why: log.unknown };
  if (log.since > at)
    return { verdict: "unknown", why: `dpkg's log begins at ${log.since}, after vm-install installed it (${at})` };
  let installedThatSecond = false;
  for (const line of log.lines) {
    if (line.pkg !== pkg || line.time < at) continue;
    if (line.action === "install") installedThatSecond ||= line.time === at;
    else if (line.time > at || installedThatSecond) return { verdict: "reinstalled", removal: line };
  }
  return { verdict: "ours" };
}

/** Pure: the recorded packages still there that carry a time, by what dpkg's log says of them since. */
export function provenanceOf(record: InstalledRecord, present: ReadonlyMap<string, unknown>, logFact: RootFact) {
  const timed = record.packages.filter((p) => present.has(p) && record.installedAt?.[p]);
  const log = dpkgLogFrom(logFact);
  const seen = timed.map((name) => ({ name, was: provenance(log, name, record.installedAt![name]) }));
  return {
    reinstalled: seen.flatMap(({ name, was }) =>
      was.verdict === "reinstalled" ? [{ name, removal: was.removal }] : [],
    ),
    unsure: seen.flatMap(({ name, was }) => (was.verdict === "unknown" ? [{ name, why: was.why }] : [])),
  };
}
