// dpkg repairs itself before any apt work: a dpkg interrupted mid-run leaves packages in one of its
// in-between states, and every later apt-get stops on it. The decisions here are pure (plan, script,
// words); apt.ts runs them.

import { quote } from "../../lib/shared/shell-quote";
import { TRANSACTION_DPKG_OPTIONS, TRANSACTION_OPTIONS } from "./apt-transaction";
import { compareDebianVersions } from "./debian-version";
import {
  ARCHIVES,
  auditPackages,
  type DpkgHealth,
  type DpkgPackage,
  lines,
  MAINTAINER_SCRIPT,
  mustReinstall,
  needsRepair,
} from "./dpkg-health";
import { tail } from "./exec";

// A dpkg interrupted mid-run (killed, the VM rebooted, the link dropped under an apt that died with it):
// what each in-between state needs (dpkg's own rules, src/main/enquiry.c and src/main/configure.c):
//
//   half-installed, or the reinst-required flag   the package's files are partly the old and partly the
//       new version's: only unpacking a whole .deb over them again helps. `dpkg --configure -a` refuses
//       ("very bad inconsistent state") or skips it, so it must be reinstalled first: at its recorded
//       version, from the archive cache or the mirror, else the .deb the interrupted run was unpacking;
//   unpacked, half-configured                      `dpkg --configure -a` runs the postinst (again);
//   triggers-awaited, triggers-pending             `dpkg --configure -a` / `--triggers-only -a`;
//   an unpacked package whose dependency apt never got to unpack   `apt-get -f install`, with
//       --no-remove: it may install what is missing, never remove what the VM had.
//
// A maintainer script the killed dpkg left running is waited for first: configuring its package while it
// still runs would run the same postinst twice at once.
// ---------------------------------------------------------------------------------------------------
// The plan.

/** How apt names a .deb in its archive cache: the epoch's colon URL-encoded. */
export function debFileName(name: string, version: string, arch: string): string {
  return `${name}_${version.replace(/:/g, "%3a")}_${arch}.deb`;
}

function versionOfFile(file: string): string {
  return (file.split("_")[1] ?? "").replace(/%3a/gi, ":");
}

export interface Reinstall {
  name: string;
  arch: string;
  /** The version on record, "" when dpkg has none. */
  version: string;
  /** Its .deb, when already in the archive cache. */
  cached?: string;
  /** Else fetched from the mirror with `apt-get download` as this spec (name:arch=version). */
  download?: string;
  /** Failing both: the newest other version in the cache (what an interrupted upgrade was unpacking). */
  fallback?: string;
}

export interface RepairPlan {
  reinstall: Reinstall[];
  /** Packages `dpkg --configure -a` finishes (unpacked, half-configured, triggers-*). */
  configure: string[];
  /** Maintainer scripts the interrupted dpkg left running, waited for before anything else. */
  scripts: string[];
}

const SAFE_FILE = /^[A-Za-z0-9][A-Za-z0-9.+~%_-]*\.deb$/;

export function planRepair(h: DpkgHealth): RepairPlan {
  const reinstall = h.packages.filter(mustReinstall).map((p): Reinstall => {
    const own = h.cached.filter((f) => SAFE_FILE.test(f) && f.startsWith(`${p.name}_`) && f.endsWith(`_${p.arch}.deb`));
    const exact = p.version ? own.find((f) => f === debFileName(p.name, p.version, p.arch)) : undefined;
    const newest = own
      .filter((f) => f !== exact)
      .sort((a, b) => compareDebianVersions(versionOfFile(b), versionOfFile(a)))[0];
    const spec = `${p.name}${p.arch && p.arch !== "all" ? `:${p.arch}` : ""}${p.version ? `=${p.version}` : ""}`;
    return exact
      ? { name: p.name, arch: p.arch, version: p.version, cached: exact }
      : { name: p.name, arch: p.arch, version: p.version, download: spec, ...(newest ? { fallback: newest } : {}) };
  });
  const configure = h.packages.filter((p) => !mustReinstall(p)).map((p) => p.name);
  return { reinstall, configure: [...new Set(configure)], scripts: h.scripts };
}

/** What the repair found, in words for the result's `changes`. */
export function describeDamage(h: DpkgHealth): string {
  const reinstall = h.packages.filter(mustReinstall).map((p) => p.name);
  const halfDone = h.packages.length
    ? h.packages.filter((p) => !mustReinstall(p)).map((p) => `${p.name} (${p.status})`)
    : auditPackages(h.audit);
  const list = (names: string[]) => `${names.slice(0, 8).join(" ")}${names.length > 8 ? " ..." : ""}`;
  const parts = [
    h.interrupted ? "an interrupted dpkg run" : "",
    reinstall.length ? `to reinstall: ${list(reinstall)}` : "",
    halfDone.length ? `half-done packages: ${list(halfDone)}` : "",
    h.scripts.length ? `maintainer scripts left running: ${h.scripts.length}` : "",
  ];
  return parts.filter(Boolean).join("; ") || tail(h.audit, 2).replace(/\n/g, " ");
}

/** What the repair does, in words (the reinstalls with where their .deb came from, when the run said). */
export function describeRepair(plan: RepairPlan, sources: Map<string, string> = new Map()): string {
  const reinstalled = plan.reinstall.map((r) => {
    const from = sources.get(r.name);
    return `${r.name}${r.version ? ` ${r.version}` : ""}${from ? ` (${from})` : ""}`;
  });
  return [
    plan.scripts.length ? "waited for the maintainer scripts left running" : "",
    reinstalled.length ? `reinstalled ${reinstalled.join(", ")}` : "",
    "dpkg --configure -a and apt-get -f install --no-remove",
  ]
    .filter(Boolean)
    .join(", then ");
}

/** The script's own lines on stdout, read back by `repairSources` and `repairFailure`. */
const MARK = "vm-install-repair:";
/** Exit statuses of the repair script itself (not of dpkg or apt). */
export const REPAIR_NO_DEB = 90;
const REPAIR_SCRIPTS_RUNNING = 91;

/**
 * The repair, run as root in one detached step: wait for left-over maintainer scripts (up to
 * `waitSec`), unpack a whole .deb over each package that must be reinstalled, then configure
 * everything and let apt install what is missing without removing anything.
 */
export function repairScript(
  plan: RepairPlan,
  opts: { lockTimeoutSec: number; waitSec: number; record?: boolean },
): string {
  // Recorded: every dpkg run of the repair, apt-get's too, keeps the job's transaction record (apt-transaction.ts).
  const hooks = opts.record ? TRANSACTION_DPKG_OPTIONS.map(quote) : [];
  const aptHooks = opts.record ? ` ${TRANSACTION_OPTIONS.map(quote).join(" ")}` : "";
  const dpkg = ["dpkg --force-confdef --force-confold", ...hooks].join(" ");
  const out: string[] = [
    `A=${ARCHIVES}; debs=""`,
    `n=0; while pgrep -f '${MAINTAINER_SCRIPT}' > /dev/null; do n=$((n+1)); ` +
      `if [ $n -gt ${opts.waitSec * 5} ]; then echo "${MARK} scripts still running after ${opts.waitSec}s:" >&2; ` +
      `pgrep -a -f '${MAINTAINER_SCRIPT}' >&2; exit ${REPAIR_SCRIPTS_RUNNING}; fi; sleep 0.2; done`,
  ];
  for (const r of plan.reinstall) {
    if (
      !/^[a-z0-9][a-z0-9+.-]*$/.test(r.name) ||
      !/^[a-z0-9-]*$/.test(r.arch) ||
      !/^[A-Za-z0-9.+~:-]*$/.test(r.version)
    ) {
      throw new Error(
        `repairScript: ${JSON.stringify([r.name, r.arch, r.version])} is not a package name, architecture and version`,
      );
    }
    for (const f of [r.cached, r.fallback])
      if (f && !SAFE_FILE.test(f)) throw new Error(`repairScript: ${JSON.stringify(f)} is not a .deb file name`);
    const label = `${r.name}${r.version ? ` ${r.version}` : ""}`;
    if (r.cached) {
      out.push(`f="$A/${r.cached}"; echo "${MARK} reinstall ${r.name} from the archive cache"`);
    } else {
      const got = r.version ? debFileName(r.name, r.version, r.arch) : `${r.name}_*_${r.arch}.deb`;
      out.push(
        `f=""; rm -f "$A"/partial/${r.name}_*.deb; if (cd "$A/partial" && apt-get download -q -o ` +
          `DPkg::Lock::Timeout=${opts.lockTimeoutSec} ${quote(r.download!)} >&2); then ` +
          `for g in "$A"/partial/${got}; do [ -s "$g" ] && mv -f "$g" "$A/" && f="$A/\${g##*/}"; done; [ -n "$f" ] ` +
          `&& echo "${MARK} reinstall ${r.name} from the mirror"; fi`,
        r.fallback
          ? `if [ -z "$f" ] && [ -s "$A/${r.fallback}" ]; then f="$A/${r.fallback}"; echo "${MARK} reinstall ` +
              `${r.name} from the archive cache (${versionOfFile(r.fallback)}, the version being unpacked)"; fi`
          : ":",
      );
    }
    out.push(
      `[ -n "$f" ] && [ -s "$f" ] || { echo "${MARK} no-deb ${r.name}" ; echo "no .deb of ${label} in $A, and the ` +
        `mirror does not offer it" >&2; exit ${REPAIR_NO_DEB}; }`,
    );
    out.push(`debs="$debs $f"`);
  }
  if (plan.reinstall.length) out.push(`${dpkg} --unpack $debs || exit $?`);
  out.push(
    // Fails on a package whose dependency was never unpacked: apt-get -f install brings that in next.
    `${dpkg} --configure -a`,
    `apt-get -f install --no-remove -y -q -o DPkg::Lock::Timeout=${opts.lockTimeoutSec} -o ` +
      `Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold${aptHooks} || exit $?`,
    `${dpkg} --configure -a && ${["dpkg", ...hooks].join(" ")} --triggers-only -a`,
  );
  return out.join("\n");
}

/** Where each reinstalled package's .deb came from, as the script said: name -> "from the mirror" ... */
export function repairSources(stdout: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of stdout.matchAll(/^vm-install-repair: reinstall (\S+) (from .*)$/gm)) out.set(m[1], m[2]);
  return out;
}

/** The packages dpkg or apt named as failing in `output` ("dpkg: error processing package X", ...). */
export function failingPackages(output: string): string[] {
  // A package as dpkg names it: "name", "name:arch", or the .deb it was unpacking.
  const nameOf = (s: string) =>
    s
      .replace(/^.*\//, "")
      .replace(/_[^_]*_[^_]*\.deb$/, "")
      .replace(/:[a-z0-9]+$/, "");
  const named = [
    ...[...output.matchAll(/^dpkg: error processing (?:package|archive) (\S+) /gm)].map((m) => m[1]),
    ...[...output.matchAll(/^vm-install-repair: no-deb (\S+)$/gm)].map((m) => m[1]),
  ];
  const errors = /^Errors were encountered while processing:\n((?: .+\n?)+)/m.exec(output);
  if (errors) named.push(...lines(errors[1]));
  return [...new Set(named.map(nameOf))];
}

/** Packages `apt-get -s` would remove ("Remv name [version]" lines). */
export function wouldRemove(simulation: string): string[] {
  return [...new Set([...simulation.matchAll(/^Remv (\S+?)(?::[a-z0-9]+)? /gm)].map((m) => m[1]))];
}

/** The one command a person would run on the VM for what is left in `h`. */
export function manualCommand(h: DpkgHealth, failing: string[] = []): string {
  const reinstall = h.packages.filter(mustReinstall);
  if (reinstall.length)
    return (
      `sudo apt-get install --reinstall ` +
      `${reinstall.map((p) => (p.version ? `${p.name}=${p.version}` : p.name)).join(" ")}`
    );
  const names = failing.length ? failing : h.packages.map((p) => p.name);
  return names.length ? `sudo dpkg --configure ${names.join(" ")}` : "sudo dpkg --configure -a";
}

/** A package in between, in words: "perl-base (must be reinstalled, half-installed at 5.36.0-7+deb12u3)". */
function stateOf(p: DpkgPackage): string {
  return (
    `${p.name} ` +
    `(${p.flag === "reinstreq" ? "must be reinstalled, " : ""}${p.status}${p.version ? ` at ${p.version}` : ""})`
  );
}

/**
 * Why the repair did not leave dpkg clean, for a person: the packages, dpkg's own last lines, and the one
 * command to run on the VM. `removes`: what apt-get -f install would have removed, when it wanted to.
 */
export function repairFailureMessage(f: {
  target: string;
  after: DpkgHealth;
  output: string;
  exit?: number | null;
  removes?: string[];
}): string {
  const failing = failingPackages(f.output);
  const left = f.after.packages.map(stateOf);
  const what = failing.length
    ? failing.join(" ")
    : left.length
      ? left.join(", ")
      : "no package named (updates still pending in /var/lib/dpkg/updates)";
  const still = needsRepair(f.after)
    ? ` dpkg still reports: ` +
      `${left.length ? left.join(", ") : tail(f.after.audit, 3).replace(/\n/g, " ") || "an interrupted run"}.`
    : "";
  const removal = f.removes
    ? ` apt-get -f install would remove ${f.removes.length ? f.removes.join(" ") : "packages"} the VM has; refused ` +
      `(--no-remove).`
    : "";
  return (
    `dpkg could not be repaired on ${f.target}${f.exit != null ? ` (exit ${f.exit})` : ""}: ` +
    `${what}.${still}${removal}\n` +
    `dpkg's last lines:\n${tail(f.output, 12)}\n` +
    `On the VM, run \`${manualCommand(f.after, failing)}\` and read its error, then run the job again (raise run_id).`
  );
}
