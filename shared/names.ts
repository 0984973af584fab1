// The strict shapes of every user-given value that ends up in a command on the VM. Both the synth-time
// config and the handlers' event checks use these, so a value the stack accepts is one the handler
// accepts. Quoting still happens at the shell (see shell-quote.ts): these rules are the first line.

import { list, refine, string, type Validator, withSchema } from "./validate";

/** Debian policy: lowercase letters, digits, + - . ; at least two characters, starting alphanumeric. */
export const DEBIAN_PACKAGE = /^[a-z0-9][a-z0-9+.-]+$/;
/** Debian version: [epoch:]upstream[-revision]; digits first, then alphanumerics and . + ~ : - */
export const DEBIAN_VERSION = /^([0-9]+:)?[0-9][A-Za-z0-9.+~-]*$/;
/** PostgreSQL identifiers kept to the unquoted, lowercase form (so psql, pg_hba and URLs agree). */
export const PG_IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;
/** A PostgreSQL major version, 10 or later. */
export const PG_MAJOR = /^(1[0-9]|[2-9][0-9])$/;
/** A Unix login name as useradd accepts it by default. */
export const UNIX_USER = /^[a-z_][a-z0-9_-]{0,31}$/;
/** An OpenSSH host key fingerprint: "SHA256:" then 43 base64 characters (no padding). */
export const HOST_KEY_SHA256 = /^SHA256:[A-Za-z0-9+/]{43}$/;
/** An apt repository base URL: http(s), host, optional port and path; no query, no spaces, no quotes. */
export const REPO_URL = /^https?:\/\/[A-Za-z0-9.-]+(:[0-9]{1,5})?(\/[A-Za-z0-9._~%+/-]*)?$/;

const IPV4 = /^(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}$/;
const IPV6 = /^[0-9A-Fa-f:]+$/;
const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

export function isIpv4(value: string): boolean {
  return IPV4.test(value);
}

export function isIpv6(value: string): boolean {
  return IPV6.test(value) && value.includes(":") && value.split("::").length <= 2 && value.split(":").length <= 8;
}

/** An address to reach a host at: IPv4, IPv6 or a DNS name. */
export function isHostAddress(value: string): boolean {
  return isIpv4(value) || isIpv6(value) || HOSTNAME.test(value);
}

/** An IPv4 or IPv6 network in CIDR form, e.g. 10.0.0.0/8 or ::1/128. */
export function isCidr(value: string): boolean {
  const [address, bits, extra] = value.split("/");
  if (extra !== undefined || bits === undefined || !/^[0-9]{1,3}$/.test(bits)) return false;
  if (isIpv4(address)) return Number(bits) <= 32;
  return isIpv6(address) && Number(bits) <= 128;
}

/** postgresql.conf listen_addresses: "*", or a comma-separated list of host names and addresses. */
export function isListenAddresses(value: string): boolean {
  if (value === "*") return true;
  return value.split(",").every((item) => {
    const part = item.trim();
    return part === "*" || isHostAddress(part);
  });
}

/** `name` or `name=version`, as apt-get install takes it. */
export function parsePackageSpec(spec: string): { name: string; version?: string } | undefined {
  const eq = spec.indexOf("=");
  const name = eq < 0 ? spec : spec.slice(0, eq);
  const version = eq < 0 ? undefined : spec.slice(eq + 1);
  if (!DEBIAN_PACKAGE.test(name)) return undefined;
  if (version !== undefined && !DEBIAN_VERSION.test(version)) return undefined;
  return { name, version };
}

const packageSpecCheck = string({
  allowed: "a Debian package name (lowercase letters, digits, + - .; at least 2 characters), optionally =version",
  check: (v) => (parsePackageSpec(v) ? undefined : "is not a Debian package name with an optional =version"),
});
/** The same rule, with the pattern the JSON Schema gives an editor (the check keeps its own message). */
export const packageSpec: Validator<string> = withSchema(packageSpecCheck, {
  ...packageSpecCheck.schema,
  pattern: `^${DEBIAN_PACKAGE.source.slice(1, -1)}(=${DEBIAN_VERSION.source.slice(1, -1)})?$`,
});

/** Package specs: at least one, and each package named once (git and git=1:2.39 together is ambiguous). */
export const packageList: Validator<string[]> = refine(list(packageSpec, { minItems: 1 }), (specs, path, problems) => {
  const seen = new Map<string, number>();
  specs.forEach((spec, i) => {
    const name = parsePackageSpec(spec)?.name;
    if (name === undefined) return;
    if (seen.has(name)) problems.push(`${path}[${i}]: package ${JSON.stringify(name)} is already listed at ${path}[${seen.get(name)}]; list each package once`);
    else seen.set(name, i);
  });
});

export const pgIdentifier: Validator<string> = string({
  pattern: PG_IDENTIFIER,
  allowed: "a PostgreSQL name: lowercase letter or _, then lowercase letters, digits or _, at most 63",
  check: (v) => (v === "postgres" || v.startsWith("pg_") ? "is reserved by PostgreSQL; choose another name" : undefined),
});

/** Words pg_hba.conf or PostgreSQL give a meaning of their own: never a database or role of ours. */
const RESERVED_DB = ["all", "sameuser", "samerole", "samegroup", "replication", "template0", "template1"];
const RESERVED_ROLE = ["all", "public", "none", "current_user", "current_role", "session_user", "samerole", "sameuser", "replication"];

function pgName(reserved: string[], what: string): Validator<string> {
  const base = pgIdentifier;
  const schema = { ...base.schema, not: { enum: reserved } };
  const check = refine(base, (name, path, problems) => {
    if (reserved.includes(name))
      problems.push(`${path}: ${JSON.stringify(name)} is a reserved word for a ${what} (in PostgreSQL or pg_hba.conf); choose another name`);
  });
  return withSchema(check, schema);
}

/** A database name we create: a PostgreSQL name that is not a reserved word. */
export const pgDatabaseName: Validator<string> = pgName(RESERVED_DB, "database");
/** A role name we create: a PostgreSQL name that is not a reserved word. */
export const pgRoleName: Validator<string> = pgName(RESERVED_ROLE, "role");

export const pgMajor: Validator<string> = string({ pattern: PG_MAJOR, allowed: 'a PostgreSQL major version such as "15"' });
export const unixUser: Validator<string> = string({ pattern: UNIX_USER, allowed: "a Unix user name (lowercase, digits, _ -; at most 32)" });
export const hostKeySha256: Validator<string> = string({ pattern: HOST_KEY_SHA256, allowed: 'an OpenSSH fingerprint "SHA256:" + 43 base64 characters' });
export const repoUrl: Validator<string> = string({ pattern: REPO_URL, allowed: "an http(s) URL without query, quotes or spaces" });
export const cidr: Validator<string> = string({
  allowed: "an IPv4 or IPv6 network in CIDR form such as 10.0.0.0/8",
  check: (v) => (isCidr(v) ? undefined : "is not a network in CIDR form (address/bits)"),
});
export const listenAddresses: Validator<string> = string({
  allowed: '"*" or a comma-separated list of addresses and host names',
  check: (v) => (isListenAddresses(v) ? undefined : 'is not "*" or a comma-separated list of addresses'),
});
export const hostAddress: Validator<string> = string({
  allowed: "an IPv4 or IPv6 address or a DNS name",
  check: (v) => (isHostAddress(v) ? undefined : "is not an IP address or host name"),
});

/** An OpenPGP v4 key fingerprint as stored and compared: 40 upper-case hex digits. */
export const KEY_FINGERPRINT = /^[0-9A-F]{40}$/;
/** As people paste it: any case, spaces anywhere (gpg prints "9DC8 5822 ... 0EBF CD88"). */
const KEY_FINGERPRINT_INPUT = /^ *([0-9A-Fa-f] *){40}$/;

/** The stored form of a fingerprint as given, or undefined when it is not 40 hex digits. */
export function normalizeFingerprint(value: string): string | undefined {
  return KEY_FINGERPRINT_INPUT.test(value) ? value.replace(/ /g, "").toUpperCase() : undefined;
}

const FINGERPRINTS_ALLOWED = "one OpenPGP key fingerprint (40 hex digits, any case, spaces allowed as gpg prints them) or a list of them";

/**
 * The keys an apt repository's keyring must hold, exactly: one fingerprint or a list, normalised to a
 * list of upper-case hex without spaces (so `"9dc8 5822 ..."` and `"9DC85822..."` are the same key).
 */
export const keyFingerprints: Validator<string[]> = withSchema(
  (value, path, problems) => {
    const given = typeof value === "string" ? [value] : value;
    if (!Array.isArray(given) || given.length === 0) {
      problems.push(`${path}: expected ${FINGERPRINTS_ALLOWED}, got ${Array.isArray(given) ? "an empty list" : JSON.stringify(value)}`);
      return [];
    }
    const out: string[] = [];
    given.forEach((item, i) => {
      const where = typeof value === "string" ? path : `${path}[${i}]`;
      const fpr = typeof item === "string" ? normalizeFingerprint(item) : undefined;
      if (fpr === undefined) problems.push(`${where}: ${JSON.stringify(item)} is not an OpenPGP key fingerprint (40 hex digits; a short key ID is not enough)`);
      else if (out.includes(fpr)) problems.push(`${where}: ${fpr} is listed twice`);
      else out.push(fpr);
    });
    return out;
  },
  {
    anyOf: [
      { type: "string", pattern: KEY_FINGERPRINT_INPUT.source },
      { type: "array", items: { type: "string", pattern: KEY_FINGERPRINT_INPUT.source }, minItems: 1, uniqueItems: true },
    ],
    description: FINGERPRINTS_ALLOWED,
  },
);
