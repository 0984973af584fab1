// dpkg's health, looked at before any apt work: one unprivileged command reads what an interrupted dpkg
// left (unapplied journal entries, packages in in-between states, maintainer scripts still running, the
// .debs in apt's cache), and its parser. What to do about it is dpkg-repair.ts's.

import { quote } from "../../shared/shell-quote";

export const ARCHIVES = "/var/cache/apt/archives";

/** A maintainer script's command line: dpkg runs them from info/ (postinst, prerm ...) or tmp.ci/ (a new preinst). */
export const MAINTAINER_SCRIPT = "[/]var/lib/dpkg/(info|tmp\\.ci)/";

/**
 * Every package whose status is not settled, as "name\tarch\tstatus\tversion" lines, read from dpkg's
 * files themselves: dpkg-query and dpkg --audit need the lock (root) while a journal is pending, which
 * is exactly when this is asked. The journal's entries (updates/0000 ...) override the status file's.
 */
export const UNSETTLED_AWK = [
  'function flush() { if (p != "") r[p "\\t" a] = s "\\t" v; p = a = s = v = "" }',
  "FNR == 1 { flush() }",
  '/^Package: / { p = $2 } /^Architecture: / { a = $2 } /^Version: / { v = $2 } /^Status: / { s = $2 " " $3 " " $4 }',
  "/^$/ { flush() }",
  'END { flush(); for (k in r) { split(r[k], x, "\\t"); if (x[1] !~ / ok (installed|not-installed|config-files)$/) ' +
    'print k "\\t" r[k] } }',
].join(" ");

/**
 * One unprivileged look: journal files dpkg left unapplied (/var/lib/dpkg/updates), dpkg --audit, every
 * package not in a settled state, maintainer scripts still running, the .debs in apt's archive cache.
 */
export const DPKG_HEALTH_PROBE = [
  "ls -A /var/lib/dpkg/updates 2>/dev/null | head -5",
  "echo '--- audit'; dpkg --audit 2>&1",
  // An empty journal leaves the glob unexpanded, and awk stops at a file it cannot open.
  `echo '--- packages'; set -- /var/lib/dpkg/updates/[0-9]*; [ -e "$1" ] || set --; awk ${quote(UNSETTLED_AWK)} ` +
    `/var/lib/dpkg/status "$@" 2>/dev/null`,
  `echo '--- scripts'; pgrep -a -f '${MAINTAINER_SCRIPT}'`,
  `echo '--- cache'; ls ${ARCHIVES} 2>/dev/null | grep '[.]deb$'`,
  "true",
].join("; ");

/** A package dpkg holds in an in-between state. */
export interface DpkgPackage {
  name: string;
  /** dpkg's Architecture field: amd64, all ... */
  arch: string;
  /** The want flag: install, hold, deinstall, purge. */
  want: string;
  /** ok, or reinstreq (dpkg's "reinst-required": the package must be reinstalled). */
  flag: string;
  /** half-installed, unpacked, half-configured, triggers-awaited, triggers-pending ... */
  status: string;
  /** The version dpkg has on record: for an upgrade cut short, the old one. May be empty. */
  version: string;
}

export interface DpkgHealth {
  /** dpkg's journal holds updates it never applied: it was interrupted. */
  interrupted: boolean;
  /** What dpkg --audit said (packages half-installed, half-configured, triggers pending ...). */
  audit: string;
  /** Every package not installed, not-installed or config-files with flag ok. */
  packages: DpkgPackage[];
  /** Maintainer scripts running right now ("<pid> <command line>"). */
  scripts: string[];
  /** File names of the .debs in the archive cache. */
  cached: string[];
}

function section(stdout: string, name: string): string {
  const start = stdout.indexOf(`--- ${name}\n`);
  if (start < 0) return "";
  const rest = stdout.slice(start + name.length + 5);
  const end = rest.search(/^--- [a-z]+$/m);
  return end < 0 ? rest : rest.slice(0, end);
}

/** The non-empty lines of `s`, trimmed. */
export const lines = (s: string) =>
  s
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);

export function parseDpkgHealth(stdout: string): DpkgHealth {
  const updates = stdout.slice(0, Math.max(0, stdout.indexOf("--- audit\n")));
  const packages = lines(section(stdout, "packages")).flatMap((line): DpkgPackage[] => {
    const [name, arch = "", status = "", version = ""] = line.split("\t");
    const [want = "", flag = "", state = ""] = status.split(" ");
    return name && state ? [{ name, arch, want, flag, status: state, version }] : [];
  });
  return {
    interrupted: updates.trim() !== "",
    // Unprivileged, dpkg 1.21 (Debian 12) cannot even look at its lock (mode 0640) and says only that:
    // no word on the packages, which the status files give anyway.
    audit: section(stdout, "audit")
      .replace(/^dpkg: error: unable to check lock file for dpkg database directory .*: Permission denied$/m, "")
      .trim(),
    packages,
    scripts: lines(section(stdout, "scripts")),
    cached: lines(section(stdout, "cache")),
  };
}

/** A package that only unpacking a whole .deb again can mend. */
export function mustReinstall(p: DpkgPackage): boolean {
  return p.flag === "reinstreq" || p.status === "half-installed";
}

export function needsRepair(h: DpkgHealth): boolean {
  return h.interrupted || h.audit !== "" || h.packages.length > 0;
}

/** Packages dpkg --audit names (its indented "<name>   <description>" lines). */
export function auditPackages(audit: string): string[] {
  const names = [...audit.matchAll(/^ ([a-z0-9][a-z0-9+.-]+)(?::[a-z0-9]+)?\s/gm)].map((m) => m[1]);
  return [...new Set(names)];
}
