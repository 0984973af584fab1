// The pure half of install-postgres: parsers for what the VM reports (dpkg, psql's JSON, pg_hba.conf; pg_lsclusters
// is clusters.ts) and planners that turn "what is there" + "what is wanted" into the few changes needed.
// No I/O here, so the unit tests feed it real tool output and check the decisions directly.

import { isIpv4, isIpv6 } from "../../lib/shared/names";
import type { OsInfo } from "../common/os-release";

// ---------------------------------------------------------------------------------------------------
// Versions and packages.

/**
 * The PostgreSQL major each release ships as its own `postgresql` (what "the distribution's own" means
 * when pg_version is left out). Releases not listed need pg_version set explicitly.
 */
export const DISTRIBUTION_MAJOR: Record<string, Record<string, string>> = {
  ubuntu: { focal: "12", jammy: "14", noble: "16" },
  debian: { buster: "11", bullseye: "13", bookworm: "15", trixie: "17" },
};

export function distributionMajor(os: OsInfo): string | undefined {
  return DISTRIBUTION_MAJOR[os.family]?.[os.codename];
}

/** One server package line of `dpkg-query -W -f='${Package}\t${Status}\t${Version}\n' 'postgresql-[0-9]*'`. */
export interface ServerPackage {
  major: string;
  version: string;
}

/** Installed server packages (postgresql-<major>) from dpkg-query; extensions and "not-installed" skipped. */
export function parseServerPackages(stdout: string): ServerPackage[] {
  const out: ServerPackage[] = [];
  for (const line of stdout.split("\n")) {
    const [pkg, status, version] = line.split("\t");
    const m = /^postgresql-([0-9]{2,})(:[a-z0-9]+)?$/.exec(pkg ?? "");
    if (!m || !status || status.trim().split(/\s+/)[2] !== "installed") continue;
    out.push({ major: m[1], version: (version ?? "").trim() });
  }
  return out.sort((a, b) => Number(a.major) - Number(b.major));
}

export {
  type Cluster,
  type ClusterListing,
  clusterUnit,
  parseClusters,
  parseUnits,
  pickCluster,
  type RefusedCluster,
} from "./clusters";

/** "15.20" from server_version "15.20 (Debian 15.20-0+deb12u1)". */
export function shortServerVersion(serverVersion: string): string {
  return /^[0-9]+(\.[0-9]+)?/.exec(serverVersion.trim())?.[0] ?? serverVersion.trim();
}

// ---------------------------------------------------------------------------------------------------
// What psql reports.

/** The state query's answer (one JSON object; see sql.ts inspectSql). */
export interface ServerState {
  server_version: string;
  hba_file: string;
  config_file: string;
  listen_addresses: string;
  pending_restart: string[];
  role: { login: boolean; superuser: boolean; secret: string | null } | null;
  database: { owner: string } | null;
  /** pg_hba.conf as the server would read it now. */
  hba_text: string;
  /** Our conf.d drop-in, or null when there is none. */
  dropin_text: string | null;
  /** The server's `ssl` setting: "on" or "off". */
  ssl?: string;
  /** Which of vm-install's TLS files (TLS_FILE_NAMES) exist, as paths; null or absent: none. */
  tls_left?: string[] | null;
  /**
   * The server's scram_iterations (PostgreSQL 16+; null before): the cap on a stored verifier's count
   * (scram.ts iterationCap).
   */
  scram_iterations?: string | null;
  /**
   * Roles the inventory lists for this cluster that still exist, with what decides whether LOGIN may be
   * taken back (grants.ts planRoles).
   */
  recorded_roles?: Record<string, RecordedRole> | null;
}

/** A role the inventory lists, as the server has it. */
export interface RecordedRole {
  login: boolean;
  superuser: boolean;
  /** The bootstrap superuser (oid 10, the role initdb made: "postgres" on Debian and Ubuntu). */
  bootstrap: boolean;
  /** Carries the comment vm-install writes when it creates a role or gives one LOGIN (sql.ts ROLE_MARK). */
  marked: boolean;
}

/** The last line of psql's output that parses as a JSON object (psql -At prints it alone). */
export function parsePsqlJson<T>(stdout: string, what: string): T {
  const lines = stdout
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.startsWith("{"));
  const last = lines[lines.length - 1];
  if (last !== undefined) {
    try {
      return JSON.parse(last) as T;
    } catch {
      /* fall through */
    }
  }
  throw new Error(`${what}: psql printed no JSON object (got ${JSON.stringify(stdout.slice(0, 200))})`);
}

// ---------------------------------------------------------------------------------------------------
// listen_addresses.

/** listen_addresses compared as the server reads it: items trimmed, empty items dropped. */
export function normalizeListen(value: string): string {
  return value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .join(",");
}

/** Our conf.d drop-in, under the cluster's config directory (Debian's postgresql.conf includes conf.d). */
export const DROPIN_NAME = "90-vm-install.conf";

/** The server certificate's files (tls "stack-ca" or "given"), relative to postgresql.conf's folder. */
export const TLS_FILE_NAMES = {
  dropIn: "conf.d/91-vm-install-tls.conf",
  cert: "vm-install-server.crt",
  key: "vm-install-server.key",
} as const;

export function dropInPath(configFile: string): string {
  return `${configFile.replace(/\/[^/]*$/, "")}/conf.d/${DROPIN_NAME}`;
}

/** `settings`: further lines, name -> its value already in postgresql.conf syntax (parameters.ts confValue). */
export function dropInContent(listen: string, settings: Record<string, string> = {}): string {
  // postgresql.conf string syntax: single quotes, a quote doubled (the validator allows none anyway).
  return (
    "# Written by vm-install (install-postgres) from its job's settings; a rerun rewrites it.\n" +
    `listen_addresses = '${listen.replace(/'/g, "''")}'\n` +
    Object.entries(settings)
      .map(([name, value]) => `${name} = ${value}\n`)
      .join("")
  );
}

/** One row of pg_file_settings for listen_addresses, in the order the server reads them. */
export interface FileSetting {
  file: string | null;
  line: number | null;
  setting: string | null;
  error: string | null;
}

/**
 * When another file read after our drop-in also sets listen_addresses, ours does not count: name it,
 * so the error can say where to look. Rows that failed to parse are skipped (the server skips them too).
 */
export function listenOverride(rows: FileSetting[], ourFile: string): FileSetting | undefined {
  const usable = rows.filter((r) => r.error === null || /could not be applied/.test(r.error));
  const last = usable[usable.length - 1];
  return last && last.file !== ourFile ? last : undefined;
}

// ---------------------------------------------------------------------------------------------------
// pg_hba.conf.

/** The trailing comment on lines this installer adds, so a later run can tell them from the admin's. */
export const HBA_MARKER = "# vm-install:install-postgres";

/** "hostssl" (the client must use SSL) or "host" (SSL or not), from remote_ssl. */
export type HbaType = "hostssl" | "host";

/** One of this installer's entries as the inventory names it: "hostssl myapp app_user 10.0.0.0/8 scram-sha-256". */
export function hbaEntry(type: HbaType, db: string, user: string, cidr: string): string {
  return `${type} ${db} ${user} ${cidr} scram-sha-256`;
}

/** The warning for a copy of a line vm-install took back (planHba's and absent's `copies`). */
export function hbaCopyWarning(file: string, entry: string): string {
  return `${file}: kept a copy of vm-install's line ${entry}, marker included: vm-install took back its one line`;
}

export function hbaLine(type: HbaType, db: string, user: string, cidr: string): string {
  return `${type}    ${db}    ${user}    ${cidr}    scram-sha-256    ${HBA_MARKER}`;
}

/** The fields of one pg_hba.conf line without its comment (quotes kept, as the server would read them). */
export function hbaFields(line: string): string[] {
  const fields: string[] = [];
  let current = "";
  let quoted = false;
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    if (ch === "#" && !quoted) break;
    if (/\s/.test(ch) && !quoted) {
      if (current) fields.push(current);
      current = "";
    } else current += ch;
  }
  if (current) fields.push(current);
  return fields;
}

export interface HbaPlan {
  /** The file's new text; equal to the old when nothing changes. */
  content: string;
  /** Entries appended (hbaEntry form). */
  added: string[];
  /** This installer's entries removed because the settings no longer ask for them: revocations. */
  removed: string[];
  /** Second copies of a wanted entry of ours, dropped (the grant itself stays). */
  duplicates: string[];
  /** The wanted entries whose line is this installer's (carries HBA_MARKER): what the inventory records. */
  owned: string[];
  /** Entries taken back whose marked copy (not vm-install's: one line per entry is) stays: named in warnings. */
  copies: string[];
}

/** A host/hostssl line's fields as an entry ("hostssl db user cidr method"), or undefined for any other line. */
export function entryOf(line: string): string | undefined {
  const f = hbaFields(line);
  if (f.length !== 5 || !/^host(ssl)?$/i.test(f[0])) return undefined;
  return [f[0].toLowerCase(), f[1], f[2], f[3], f[4].toLowerCase()].join(" ");
}

/**
 * The indexes of `lines` that are vm-install's own: with an inventory (`recorded`), one marked line per
 * recorded entry, the last (vm-install appends its one line; taking back the last keeps the copy that was
 * already matched first); without one (a version that kept none), every marked line.
 */
export function ownHbaLines(lines: string[], recorded: string[] | undefined): Set<number> {
  const own = new Set<number>();
  const claimed = new Set<string>();
  for (let i = lines.length - 1; i >= 0; i--) {
    const entry = lines[i].includes(HBA_MARKER) ? entryOf(lines[i]) : undefined;
    if (entry === undefined || (recorded !== undefined && (!recorded.includes(entry) || claimed.has(entry)))) continue;
    claimed.add(entry);
    own.add(i);
  }
  return own;
}

/**
 * Ensures exactly `wanted` (hbaEntry form; empty: none) have a line. A line the admin wrote with the same
 * fields counts as present and is never this installer's (not recorded, never removed). Only vm-install's
 * own lines (ownHbaLines) are removed: a recorded one no longer wanted, or one the admin's own line with
 * the same fields makes redundant. A marked line that is not its own (a copy, marker and all, or one the
 * inventory does not list) is never touched; a copy of a line taken back is named (`copies`). New lines go
 * at the end: the stock file has no broader `host` rule for remote addresses.
 */
export function planHba(content: string, wanted: string[], recorded: string[] | undefined): HbaPlan {
  const lines = content.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  const own = ownHbaLines(lines, recorded);
  const first = new Map<string, number>();
  const copies: string[] = [];
  const plan: HbaPlan = { content, added: [], removed: [], duplicates: [], owned: [], copies: [] };
  const kept = lines.filter((line, i) => {
    const entry = entryOf(line);
    if (entry === undefined) return true;
    const ours = own.has(i);
    if (!ours) {
      if (line.includes(HBA_MARKER)) copies.push(entry);
      if (wanted.includes(entry) && !first.has(entry)) first.set(entry, i);
      return true;
    }
    if (!wanted.includes(entry)) plan.removed.push(entry);
    // Redundant only behind the admin's own line (a copy of ours first: ours stays, the one recorded).
    else if (first.has(entry) && (recorded === undefined || !lines[first.get(entry)!].includes(HBA_MARKER)))
      plan.duplicates.push(entry);
    else {
      first.set(entry, i);
      plan.owned.push(entry);
      return true;
    }
    return false;
  });
  plan.added = wanted.filter((e) => !first.has(e));
  plan.owned.push(...plan.added);
  plan.owned = [...new Set(plan.owned)];
  plan.copies = copies.filter((e) => plan.removed.includes(e));
  if (plan.added.length + plan.removed.length + plan.duplicates.length === 0) return plan;
  const out = [...kept, ...plan.added.map((e) => hbaLineOf(e))];
  return { ...plan, content: `${out.join("\n")}\n` };
}

function hbaLineOf(entry: string): string {
  const [type, db, user, cidr] = entry.split(" ");
  return hbaLine(type as HbaType, db, user, cidr);
}

// ---------------------------------------------------------------------------------------------------
// Quoting for the two places a value is written into text the VM parses.

/**
 * A psql meta-command argument (`\set name '<value>'`): single-quoted, where psql turns `''` into `'`
 * and `\\` into `\`. Newlines cannot be expressed; the validator rejects control characters.
 */
export function psqlMetaQuote(value: string): string {
  return `'${value.replace(/\\/g, "\\\\").replace(/'/g, "''")}'`;
}

/**
 * The host the TCP check connects to: loopback when the server listens there, else its first address. A
 * host name is never connected to by name: `resolved` holds the addresses the VM gave for it, all checked
 * to be the VM's own (addresses.ts), and the first of them is used (IPv4 first).
 */
export function verifyHost(listen: string, resolved: Record<string, string[]> = {}): string {
  const items = normalizeListen(listen).split(",");
  if (items.some((i) => i === "*" || i === "localhost" || i === "127.0.0.1" || i === "0.0.0.0")) return "127.0.0.1";
  if (items.some((i) => i === "::" || i === "::1")) return "::1";
  const first = items[0];
  if (isIpv4(first) || isIpv6(first)) return first;
  const addresses = resolved[first] ?? [];
  const chosen = addresses.find((a) => isIpv4(a)) ?? addresses[0];
  if (chosen !== undefined) return chosen;
  throw new Error(
    `listen_addresses: ${first} was not resolved on the VM before the TCP login check; nothing is sent to it`,
  );
}
