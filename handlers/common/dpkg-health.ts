// dpkg's health, looked at before any apt work: one unprivileged command reads what an interrupted dpkg
// left (unapplied journal entries, packages in in-between states, maintainer scripts still running, the
// .debs in apt's cache), and its parser. What to do about it is dpkg-repair.ts's.

import { quote } from "../../lib/shared/shell-quote";
import { defineLook, type Fact } from "./vm-facts";

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
export const DPKG_HEALTH_LOOK = defineLook("the look at dpkg's health", [
  {
    name: "dpkg.updates",
    command: "ls -A /var/lib/dpkg/updates | head -5",
    writer: "root",
    use: "dpkg was interrupted: repair before apt work",
  },
  { name: "dpkg.audit", command: "dpkg --audit", stderr: true, writer: "root", use: "packages dpkg --audit names" },
  {
    name: "dpkg.unsettled",
    // An empty journal leaves the glob unexpanded, and awk stops at a file it cannot open.
    command:
      `set -- /var/lib/dpkg/updates/[0-9]*; [ -e "$1" ] || set --; awk ${quote(UNSETTLED_AWK)} ` +
      `/var/lib/dpkg/status "$@"`,
    writer: "root",
    use: "packages in an in-between state: which to configure or reinstall",
  },
  {
    name: "dpkg.scripts",
    command: `pgrep -a -f '${MAINTAINER_SCRIPT}'`,
    // Any user can start a process with such a command line: it only makes the repair wait and say so.
    writer: "anyone",
    use: "maintainer scripts still running: the repair waits, and says so",
  },
  {
    name: "dpkg.cache",
    command: `ls ${ARCHIVES} | grep '[.]deb$'`,
    writer: "root",
    use: "whether a package to reinstall is in apt's cache",
  },
] as const);

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

/** The non-empty lines of `s`, trimmed. */
export const lines = (s: string) =>
  s
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);

/** The look's output as DpkgHealth. */
export function parseDpkgHealth(stdout: string): DpkgHealth {
  return dpkgHealthFrom(DPKG_HEALTH_LOOK.parse(stdout).get);
}

/** DpkgHealth from the look's probes however they were read (alone, or after apt-get update: apt-update.ts). */
export function dpkgHealthFrom(get: (name: (typeof DPKG_HEALTH_LOOK.probes)[number]["name"]) => Fact): DpkgHealth {
  const facts = { get };
  const packages = lines(facts.get("dpkg.unsettled").text).flatMap((line): DpkgPackage[] => {
    const [name, arch = "", status = "", version = ""] = line.split("\t");
    const [want = "", flag = "", state = ""] = status.split(" ");
    return name && state ? [{ name, arch, want, flag, status: state, version }] : [];
  });
  return {
    interrupted: facts.get("dpkg.updates").text.trim() !== "",
    // Unprivileged, dpkg 1.21 (Debian 12) cannot even look at its lock (mode 0640) and says only that:
    // no word on the packages, which the status files give anyway.
    audit: facts
      .get("dpkg.audit")
      .text.replace(/^dpkg: error: unable to check lock file for dpkg database directory .*: Permission denied$/m, "")
      .trim(),
    packages,
    scripts: lines(facts.get("dpkg.scripts").text),
    cached: lines(facts.get("dpkg.cache").text),
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
