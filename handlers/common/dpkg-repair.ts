// dpkg repairs itself before any apt work. A dpkg interrupted mid-run (killed, the VM rebooted, the
// link dropped under an apt that died with it) leaves packages half-installed or half-configured, and
// every later apt-get stops with "E: dpkg was interrupted, you must manually run 'dpkg --configure -a'".
// This does what that message asks, and what usually has to follow (apt-get -f install), then checks
// that dpkg is clean; the run's result lists what it did.

import { tail } from "./exec";

/** One unprivileged look: journal files dpkg left unapplied (/var/lib/dpkg/updates), then dpkg --audit. */
export const DPKG_HEALTH_PROBE = "ls -A /var/lib/dpkg/updates 2>/dev/null | head -5; echo '--- audit'; dpkg --audit 2>&1; true";

export interface DpkgHealth {
  /** dpkg's journal holds updates it never applied: it was interrupted. */
  interrupted: boolean;
  /** What dpkg --audit said (packages half-installed, half-configured, triggers pending ...). */
  audit: string;
}

export function parseDpkgHealth(stdout: string): DpkgHealth {
  const [updates, audit = ""] = stdout.split("--- audit\n");
  return { interrupted: updates.trim() !== "", audit: audit.trim() };
}

export function needsRepair(h: DpkgHealth): boolean {
  return h.interrupted || h.audit !== "";
}

/** Packages dpkg --audit names (its indented "<name>   <description>" lines). */
export function auditPackages(audit: string): string[] {
  const names = [...audit.matchAll(/^ ([a-z0-9][a-z0-9+.-]+)(?::[a-z0-9]+)?\s/gm)].map((m) => m[1]);
  return [...new Set(names)];
}

/** What the repair found, in words for the result's `changes`. */
export function describeDamage(h: DpkgHealth): string {
  const pkgs = auditPackages(h.audit);
  const parts = [
    h.interrupted ? "an interrupted dpkg run" : "",
    pkgs.length ? `half-done packages: ${pkgs.slice(0, 8).join(" ")}${pkgs.length > 8 ? " ..." : ""}` : "",
  ];
  return parts.filter(Boolean).join("; ") || tail(h.audit, 2).replace(/\n/g, " ");
}

/** The repair itself, run as root: finish what dpkg left, then let apt fix what that leaves broken. */
export function repairCommand(lockTimeoutSec: number): string {
  return (
    "dpkg --force-confdef --force-confold --configure -a && " +
    `apt-get -f install -y -q -o DPkg::Lock::Timeout=${lockTimeoutSec} -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold`
  );
}
