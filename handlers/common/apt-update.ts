// apt-get update, and the look after it in the same exec (issue 30): who holds apt's locks, dpkg's health and
// what the fresh lists offer for the names about to be installed. A first install read each of those in an
// exec of its own, one round trip after another. dpkg's health read there stands for the look before the
// first apt work only when nobody held a lock as it was read: otherwise Apt looks again, as before.

import { command } from "../../lib/shared/shell-quote";
import { type Candidate, parseAptCachePolicy, unreachableFetches } from "./apt-output";
import { DPKG_HEALTH_LOOK, type DpkgHealth, dpkgHealthFrom } from "./dpkg-health";
import { LOCK_TABLE_LOOK, lockTableFrom } from "./lock-holders";
import { defineLook, type Fact, type Probe } from "./vm-facts";

const STAMP = "/var/lib/apt/periodic/update-success-stamp";

/** The update, and our stamp of its success (listsAgeScript reads it). */
export const UPDATE_COMMAND = `apt-get update -q && mkdir -p ${STAMP.replace(/\/[^/]+$/, "")} && touch ${STAMP}`;

/** "<now> <lists' time>" or "<now> none": our stamp (or Ubuntu's update-notifier's), else the lists' directory. */
export const LISTS_AGE_SCRIPT =
  `now=$(date +%s); if ls /var/lib/apt/lists 2>/dev/null | grep -q _Packages; then ` +
  `if [ -e ${STAMP} ]; then t=$(stat -c %Y ${STAMP}); else t=$(stat -c %Y /var/lib/apt/lists); fi; echo "$now ` +
  `$t"; ` +
  `else echo "$now none"; fi`;

/**
 * Whether apt-get update is due with `cacheValidSec` (undefined: always) for lists `age` seconds old (undefined:
 * none): Apt.update's rule, and a check's when it foresees what the lists a run installs from offer.
 */
export function updateDue(age: number | undefined, cacheValidSec?: number): boolean {
  return cacheValidSec === undefined || age === undefined || age >= cacheValidSec;
}

/** LISTS_AGE_SCRIPT's answer in seconds; undefined when there are no lists. */
export function listsAge(stdout: string): number | undefined {
  const m = /^([0-9]+) ([0-9]+|none)\s*$/.exec(stdout.trim());
  if (!m || m[2] === "none") return undefined;
  return Math.max(0, Number(m[1]) - Number(m[2]));
}

/**
 * apt-get update exits 0 when no server can be reached and leaves the lists as they were: the install after
 * it then fails on "unknown package", far from the cause. When it reached none of the VM's sources (no
 * Hit or Get line) the update fails instead, naming the servers in apt's own words and, from the detached
 * step's note, the proxy it went through. One unreachable source among working ones stays apt's warning.
 */
export function failOnUnreachable(output: string): void {
  const failed = unreachableFetches(output);
  if (failed.length === 0 || /^(Hit|Get):\d+ /m.test(output)) return;
  const hosts = [...new Set(failed.map((f) => /^[a-z+]+:\/\/([^/:]+)/.exec(f)?.[1] ?? f))];
  const proxy = /^vm-install: step \S+ ran ((with|without) .*)$/m.exec(output)?.[1];
  throw new Error(
    `apt-get update could not reach ${hosts.join(", ")} from the VM: ${failed.slice(0, 4).join("; ")}` +
      `${proxy ? `; the step ran ${proxy}` : ""}. Nothing was installed. Check the VM's route, DNS and firewall ` +
      "to that mirror, or set the VM's aptProxy to a proxy it can reach.",
  );
}

const POLICY = "apt.policy";

/**
 * The look after the update, as root (the update's own step): with `health`, apt's locks and dpkg's health;
 * with `names`, apt-cache policy of them. Every probe reads root's files or the kernel's tables.
 */
export function afterUpdateLook(opts: { health: boolean; names: readonly string[] }) {
  const policy: Probe[] = opts.names.length
    ? [
        {
          name: POLICY,
          command: command("apt-cache", "policy", ...opts.names),
          writer: "root",
          use: "what the lists just fetched offer for the packages about to be installed",
        },
      ]
    : [];
  const health = opts.health ? [...LOCK_TABLE_LOOK.probes, ...DPKG_HEALTH_LOOK.probes] : [];
  return defineLook("the look after apt-get update", [...health, ...policy]);
}

export interface AfterUpdate {
  /** dpkg's health, when it was read and nobody held an apt lock then. */
  health?: DpkgHealth;
  /** apt-cache policy's answer for the names asked, when they were. */
  offers?: Map<string, Candidate>;
}

/**
 * What the look after the update says, from its probes' answers. dpkg's health counts only when the lock table
 * was read whole (every lock probe exited 0) and names no holder.
 */
export function afterUpdateFrom(look: ReturnType<typeof afterUpdateLook>, get: (name: string) => Fact): AfterUpdate {
  const has = (name: string) => look.probes.some((p) => p.name === name);
  const out: AfterUpdate = {};
  if (has(POLICY) && get(POLICY).code === 0) out.offers = parseAptCachePolicy(get(POLICY).text);
  const locksRead = has("locks.proc") && LOCK_TABLE_LOOK.probes.every((p) => get(p.name).code === 0);
  if (locksRead && lockTableFrom(get).length === 0) out.health = dpkgHealthFrom(get);
  return out;
}
