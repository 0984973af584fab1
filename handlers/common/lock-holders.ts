// Who holds apt's and dpkg's locks, and whether that is the VM's first boot at work. A holder counts as
// first boot (cloud-init, apt's daily jobs, unattended-upgrades) by the systemd unit its cgroup names,
// which only root can choose; a command name alone never does, since any user can name a process
// "unattended-upgrade". Only where the cgroup names no unit (no systemd) does the process ancestry
// decide: the holder or an ancestor is cloud-init, apt.systemd.daily or unattended-upgrade.
import { quote } from "../../lib/shared/shell-quote";
import type { Remote } from "./exec";
import { defineLook, type Fact } from "./vm-facts";

/** The files apt and dpkg lock, in the order they are taken. */
const APT_LOCK_FILES = [
  "/var/lib/dpkg/lock-frontend",
  "/var/lib/dpkg/lock",
  "/var/lib/apt/lists/lock",
  "/var/cache/apt/archives/lock",
];

/** A process holding one of apt's locks, with what tells whether the first boot holds it. */
export interface LockHolder {
  lock: string;
  pid: number;
  command: string;
  /** The systemd unit its cgroup names ("apt-daily-upgrade.service"), when it names one. */
  unit?: string;
  /** Set when the holder is the VM's first boot or apt's own periodic work: why ("unit cloud-final.service"). */
  firstBoot?: string;
}

/** cloud-init's own units (22.x to 24.x names), apt's daily jobs and unattended-upgrades. */
const FIRST_BOOT_UNITS = new Set(
  ["cloud-init-local", "cloud-init", "cloud-init-network", "cloud-init-main", "cloud-config", "cloud-final"]
    .concat(["apt-daily", "apt-daily-upgrade", "unattended-upgrades"])
    .map((u) => `${u}.service`),
);
/**
 * What started a holder, when no unit says: cloud-init itself, apt's daily script, unattended-upgrade, at
 * the paths their packages install them (only root writes there), run by their interpreter.
 */
const INTERPRETER = "(\\S*/)?(python3?(\\.[0-9]+)?|sh|bash|dash) (-\\S+ )*";
const STARTER = "(/usr)?/bin/(cloud-init|unattended-upgrade)|/usr/lib/apt/apt\\.systemd\\.daily";
const FIRST_BOOT_COMMAND = new RegExp(`^(${INTERPRETER})?(${STARTER})( |$)`);

const LOCK_INODES =
  `ino=" "; for f in ${APT_LOCK_FILES.map(quote).join(" ")}; do ` +
  '[ -e "$f" ] && ino="$ino$(stat -c %i "$f") "; done';

/**
 * The lock table (root): each lock file's inode, /proc/locks, and for open-file-description locks
 * (which /proc/locks shows with pid -1) the pids whose fdinfo holds one on a lock file's inode.
 */
export const LOCK_TABLE_LOOK = defineLook("the look at apt's locks", [
  {
    name: "locks.files",
    command: `for f in ${APT_LOCK_FILES.map(quote).join(" ")}; do [ -e "$f" ] && stat -c '%n %i' "$f"; done; true`,
    writer: "root",
    use: "the inodes of apt's and dpkg's lock files",
  },
  {
    name: "locks.proc",
    command: "cat /proc/locks",
    writer: "root",
    use: "which pid holds a lock (the kernel's table)",
  },
  {
    name: "locks.ofd",
    command:
      `${LOCK_INODES}; for i in ` +
      `$(awk '$2 == "OFDLCK" && $5 == "-1" { n = split($6, a, ":"); print a[n] }' /proc/locks | sort -u); do ` +
      `case "$ino" in *" $i "*) grep -l -E "^lock:.*OFDLCK.*:$i " /proc/[0-9]*/fdinfo/* | ` +
      `sed "s#^/proc/\\([0-9]*\\)/.*#$i \\1#";; esac; done | sort -u`,
    writer: "root",
    use: "which pid holds an open-file-description lock (the kernel's fdinfo)",
  },
] as const);

/** Per holder, itself and its ancestors up to pid 1: "holder\tpid\tppid\tcgroup\tcommand" lines (root). */
function holderDetailsProbe(pids: number[]): string {
  return (
    `for h in ${pids.join(" ")}; do p=$h; n=0; while [ -r /proc/$p/status ] && [ $n -lt 16 ]; do ` +
    `u=$(sed -n 's/^[0-9]*:name=systemd://p; s/^0:://p' /proc/$p/cgroup 2>/dev/null | head -n 1); ` +
    `pp=$(sed -n 's/^PPid:[[:space:]]*//p' /proc/$p/status); ` +
    `printf '%s\\t%s\\t%s\\t%s\\t' "$h" "$p" "$pp" "$u"; ` +
    `tr '\\000\\t\\n' '   ' < /proc/$p/cmdline 2>/dev/null; echo; ` +
    `[ "$pp" -gt 1 ] 2>/dev/null || break; p=$pp; n=$((n+1)); done; done`
  );
}

/**
 * Pairs the lock files' inodes with /proc/locks (6th field maj:min:inode) and the open-file-description
 * holders found in fdinfo. Blocked waiters ("->" lines) are not holders. By inode only: the lock files
 * all live on the root filesystem.
 */
export function parseLockTable(lookOut: string): { lock: string; pid: number }[] {
  return lockTableFrom(LOCK_TABLE_LOOK.parse(lookOut).get);
}

/** parseLockTable from the look's probes however they were read (alone, or after apt-get update). */
export function lockTableFrom(
  get: (name: (typeof LOCK_TABLE_LOOK.probes)[number]["name"]) => Fact,
): { lock: string; pid: number }[] {
  const facts = { get };
  const byInode = new Map<string, string>();
  for (const line of facts.get("locks.files").text.split("\n")) {
    const m = /^(\S+) ([0-9]+)$/.exec(line.trim());
    if (m) byInode.set(m[2], m[1]);
  }
  const found: { lock: string; pid: number }[] = [];
  const add = (inode: string | undefined, pid: number) => {
    const lock = inode !== undefined ? byInode.get(inode) : undefined;
    if (lock && pid > 0 && !found.some((f) => f.lock === lock && f.pid === pid)) found.push({ lock, pid });
  };
  for (const line of facts.get("locks.proc").text.split("\n")) {
    const fields = line.trim().split(/\s+/);
    if (fields.length >= 6 && fields[1] !== "->") add(fields[5].split(":")[2], Number(fields[4]));
  }
  for (const line of facts.get("locks.ofd").text.split("\n")) {
    const [inode, pid] = line.trim().split(" ");
    if (pid) add(inode, Number(pid));
  }
  return found;
}

/** One process of a holder's ancestry, the holder first. */
export interface ProcessInfo {
  pid: number;
  command: string;
  /** The unit its cgroup path names (the last .service or .scope in it), if any. */
  unit?: string;
}

/** "/system.slice/cloud-final.service" -> cloud-final.service; "/" or "" -> undefined. */
function unitOf(cgroup: string): string | undefined {
  return cgroup
    .split("/")
    .filter((part) => /\.(service|scope)$/.test(part))
    .pop();
}

/** holderDetailsProbe's output: holder pid -> its ancestry, itself first. */
export function parseHolderDetails(text: string): Map<number, ProcessInfo[]> {
  const out = new Map<number, ProcessInfo[]>();
  for (const line of text.split("\n")) {
    const [holder, pid, , cgroup, ...command] = line.split("\t");
    if (!holder || pid === undefined || command.length === 0) continue;
    const chain = out.get(Number(holder)) ?? [];
    chain.push({ pid: Number(pid), command: command.join(" ").trim(), unit: unitOf(cgroup ?? "") });
    out.set(Number(holder), chain);
  }
  return out;
}

/** Why `chain` (a holder and its ancestors) is the first boot at work, or undefined when it is not. */
export function firstBootReason(chain: ProcessInfo[]): string | undefined {
  const unit = chain[0]?.unit;
  if (unit !== undefined) return FIRST_BOOT_UNITS.has(unit) ? `unit ${unit}` : undefined;
  const starter = chain.find((p) => FIRST_BOOT_COMMAND.test(p.command));
  if (!starter) return undefined;
  return starter === chain[0] ? `command ${starter.command}` : `started by ${starter.command} (pid ${starter.pid})`;
}

/** Who holds apt's locks now, each with its unit and whether it is the first boot (two root reads). */
export async function readLockHolders(remote: Remote): Promise<LockHolder[]> {
  const env = { LC_ALL: "C" };
  const opts = { sudo: true, check: false, env, timeoutMs: 30_000 };
  const table = await remote.run(LOCK_TABLE_LOOK.script, { ...opts, label: "finding the apt lock holder" });
  const held = parseLockTable(table.stdout);
  if (held.length === 0) return [];
  const pids = [...new Set(held.map((h) => h.pid))];
  const label = "reading the lock holder's command and unit";
  const details = await remote.run(holderDetailsProbe(pids), { ...opts, label });
  const chains = parseHolderDetails(details.stdout);
  return held.map((h) => {
    const chain = chains.get(h.pid) ?? [];
    const reason = firstBootReason(chain);
    const unit = chain[0]?.unit;
    const command = chain[0]?.command ?? "";
    return { ...h, command, ...(unit ? { unit } : {}), ...(reason ? { firstBoot: reason } : {}) };
  });
}

/** "/var/lib/dpkg/lock-frontend is held by pid 4242 (apt-get install x; unit cloud-final.service)". */
export function describeHolders(holders: LockHolder[]): string {
  const one = (h: LockHolder) => {
    const about = [h.command || "command unknown"];
    if (h.unit) about.push(`unit ${h.unit}`);
    else if (h.firstBoot) about.push(h.firstBoot);
    return `${h.lock} is held by pid ${h.pid} (${about.join("; ")})`;
  };
  return holders.map(one).join("; ");
}
