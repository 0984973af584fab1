// What apt and dpkg print, parsed: package states, candidates, lock holders, failure reasons. Pure, so
// the tests feed them real tool output.
import { quote } from "../../lib/shared/shell-quote";
import { tail } from "./exec";
import type { LockHolder } from "./lock-holders";

/** One package as dpkg sees it. */
export interface PackageState {
  name: string;
  /** True when dpkg's status is "installed" (fully configured). */
  installed: boolean;
  /** dpkg's state word: installed, not-installed, config-files, half-configured, unpacked, ... */
  status: string;
  /** Installed version, when there is one. */
  version?: string;
}

/**
 * Output of `dpkg-query -W -f='${Package}\t${Status}\t${Version}\n' NAMES...`. Names dpkg has never
 * heard of get no line; they come back as not-installed. With several architectures of one package
 * the installed one wins.
 */
export function parseDpkgQuery(stdout: string, names: string[]): Map<string, PackageState> {
  const states = new Map<string, PackageState>(
    names.map((name) => [name, { name, installed: false, status: "not-installed" }]),
  );
  for (const line of stdout.split("\n")) {
    const [pkg, status, version] = line.split("\t");
    if (!pkg || status === undefined) continue;
    const name = pkg.split(":")[0];
    if (!states.has(name)) continue;
    const word = status.trim().split(/\s+/)[2] ?? "not-installed"; // "install ok installed" -> installed
    const state: PackageState = { name, installed: word === "installed", status: word };
    if (version?.trim() && word !== "not-installed" && word !== "config-files") state.version = version.trim();
    if (!states.get(name)!.installed) states.set(name, state);
  }
  return states;
}

/** dpkg's view of `names` (LC_ALL=C: its words are parsed). */
export function dpkgQueryCommand(names: readonly string[]): string {
  return `dpkg-query -W -f='\${Package}\\t\${Status}\\t\${Version}\\n' ${names.map(quote).join(" ")}`;
}

/** What dpkgQueryCommand printed, per name. Exit 1 only means "some name not found": an answer, not a failure. */
export function dpkgQueryAnswer(
  stdout: string,
  code: number,
  stderr: string,
  names: string[],
): Map<string, PackageState> {
  if (code > 1) throw new Error(`dpkg-query failed on the VM (exit ${code}): ${tail(stderr, 5)}`);
  return parseDpkgQuery(stdout, names);
}

/** What the configured repositories offer for one package. */
export interface Candidate {
  name: string;
  /** The version apt would install; undefined for "(none)". */
  candidate?: string;
  /** Installed version; undefined for "(none)". */
  installed?: string;
  /** Every version in the version table (installable with name=version). */
  versions: string[];
}

/** Output of `apt-cache policy NAMES...` (LC_ALL=C). A name apt does not know has no block at all. */
export function parseAptCachePolicy(stdout: string): Map<string, Candidate> {
  const out = new Map<string, Candidate>();
  let current: Candidate | undefined;
  let inTable = false;
  const none = (v: string) => (v === "(none)" ? undefined : v);
  for (const line of stdout.split("\n")) {
    const header = /^(\S+):$/.exec(line);
    if (header) {
      current = { name: header[1], versions: [] };
      out.set(current.name, current);
      inTable = false;
      continue;
    }
    if (!current) continue;
    let m: RegExpExecArray | null;
    if ((m = /^\s+Installed: (.*)$/.exec(line))) current.installed = none(m[1].trim());
    else if ((m = /^\s+Candidate: (.*)$/.exec(line))) current.candidate = none(m[1].trim());
    else if (/^\s+Version table:/.test(line)) inTable = true;
    else if (inTable && (m = /^\s+(?:\*\*\*\s+)?(\S+)\s+(-?\d+)$/.exec(line))) current.versions.push(m[1]);
  }
  return out;
}

/** Why `name[=version]` cannot be installed given what apt offers; undefined when it can. */
export function candidateProblem(
  spec: { name: string; version?: string },
  offer: Candidate | undefined,
): string | undefined {
  if (!offer)
    return (
      "unknown package: apt on the VM knows no package of that name (check the spelling, or whether its " +
      "repository is configured)"
    );
  if (spec.version === undefined) {
    return offer.candidate
      ? undefined
      : "no installation candidate: apt knows the name but nothing installs it (a virtual or obsolete package? " +
          "`apt-cache showpkg` on the VM lists what provides it)";
  }
  if (offer.versions.includes(spec.version)) return undefined;
  const close = offer.versions.find((v) => v.replace(/^[0-9]+:/, "") === spec.version);
  const available = offer.versions.length ? offer.versions.slice(0, 8).join(", ") : "none";
  return `version ${spec.version} is not available${close ? ` (did you mean ${close}?)` : ""}; available: ${available}`;
}

const LOCK_WORDS = new RegExp(
  "Could not get lock|Unable to acquire the dpkg frontend lock|" +
    "Unable to lock (the )?(directory|administration directory)|(is )?locked by another process",
);

/** True when apt or dpkg output says the lock is taken by someone else. */
export function isLockError(text: string): boolean {
  return LOCK_WORDS.test(text);
}

/**
 * The lines of an apt failure that explain it: errors and unmet dependencies, at most a few, and the
 * detached step's own note on which proxy its fetches went through (detached.ts).
 */
export function aptFailureReason(result: { stdout: string; stderr: string }): string {
  const lines = `${result.stdout}\n${result.stderr}`.split("\n").map((l) => l.trim());
  const picked = lines.filter((l) => /^E: /.test(l) || /: (Pre-)?Depends: |: Breaks: |: Conflicts: /.test(l));
  const proxy = lines.filter((l) => /^vm-install: step \S+ ran (with|without) /.test(l)).slice(-1);
  const reason = picked.length
    ? [...new Set(picked)].slice(0, 6).join("; ")
    : tail(result.stderr || result.stdout, 4).replace(/\n/g, "; ");
  return proxy.length && !reason.includes(proxy[0]) ? `${reason}; ${proxy[0]}` : reason;
}

/** apt's own "It is held by process 1234 (apt-get)" note, used when /proc/locks shows nothing. */
export function parseAptHolderNote(text: string): LockHolder | undefined {
  const m = /Could not get lock (\S+?)\.? It is held by process ([0-9]+) \(([^)]*)\)/.exec(text);
  return m ? { lock: m[1], pid: Number(m[2]), command: m[3] } : undefined;
}

/** The dpkg/apt lock stayed busy through every attempt. */
export class AptLockError extends Error {
  constructor(
    message: string,
    readonly holders: LockHolder[],
  ) {
    super(message);
    this.name = "AptLockError";
  }
}

/** What apt says of a server it could not reach at all (not a 404 or a bad signature: those are the repository's). */
const UNREACHABLE = new RegExp(
  "Could not connect|Could not resolve|Temporary failure resolving|Unable to connect|" +
    "Connection (timed out|refused|failed)|No route to host|Network is unreachable|proxy",
  "i",
);

/**
 * apt-get update's "Failed to fetch URL  reason" lines whose server could not be reached (apt only warns
 * and exits 0 on them), as "URL: reason", each once: the mirror a VM without a route to it fails on.
 */
export function unreachableFetches(text: string): string[] {
  const found = [...text.matchAll(/^[WE]: Failed to fetch (\S+)\s+(.*)$/gm)]
    .filter((m) => UNREACHABLE.test(m[2]))
    .map((m) => `${m[1]}: ${m[2].trim()}`);
  return [...new Set(found)];
}
