// The strict shapes of every user-given value that ends up in a command on the VM. Both the synth-time
// config and the handlers' event checks use these, so a value the stack accepts is one the handler
// accepts. Quoting still happens at the shell (see shell-quote.ts): these rules are the first line.

import { list, refine, string, type Validator, withSchema } from "./validate";

/** Debian policy: lowercase letters, digits, + - . ; at least two characters, starting alphanumeric. */
const DEBIAN_PACKAGE = /^[a-z0-9][a-z0-9+.-]+$/;
/** Debian version: [epoch:]upstream[-revision]; digits first, then alphanumerics and . + ~ : - */
const DEBIAN_VERSION = /^([0-9]+:)?[0-9][A-Za-z0-9.+~-]*$/;
/** PostgreSQL identifiers kept to the unquoted, lowercase form (so psql, pg_hba and URLs agree). */
const PG_IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;
/** A PostgreSQL major version, 10 or later. */
const PG_MAJOR = /^(1[0-9]|[2-9][0-9])$/;
/** A Unix login name as useradd accepts it by default. */
export const UNIX_USER = /^[a-z_][a-z0-9_-]{0,31}$/;
/** An OpenSSH host key fingerprint: "SHA256:" then 43 base64 characters (no padding). */
export const HOST_KEY_SHA256 = /^SHA256:[A-Za-z0-9+/]{43}$/;
/**
 * SSH_HOST_KEY_SOURCE: where the key in SSH_HOST_KEY_SHA256 comes from, so a mismatch can say what to
 * do: the VM's pin, the key the stack delivered through cloud-init, or the key recorded at first contact.
 */
export const HOST_KEY_SOURCES = ["pin", "delivered", "first-contact"] as const;
export type HostKeySource = (typeof HOST_KEY_SOURCES)[number];
/** An apt repository base URL: http(s), host, optional port and path; no query, no spaces, no quotes. */
export const REPO_URL = /^https?:\/\/[A-Za-z0-9.-]+(:[0-9]{1,5})?(\/[A-Za-z0-9._~%+/-]*)?$/;

const IPV4 = /^(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}$/;
const H16 = /^[0-9A-Fa-f]{1,4}$/;
const HOSTNAME =
  /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** A dotted quad: four decimal numbers 0-255, no leading zeros (not inet_aton's octal, hex or short forms). */
export function isIpv4(value: string): boolean {
  return IPV4.test(value);
}

/**
 * IPv6 in one of RFC 4291's text forms (section 2.2): eight groups of 1-4 hex digits, one "::" standing for
 * one or more zero groups, optionally a dotted quad as the last 32 bits. No zone id ("%eth0"), no prefix.
 */
export function isIpv6(value: string): boolean {
  if (value.length > 45) return false;
  const halves = value.split("::");
  if (halves.length > 2) return false;
  const groups = (s: string) => (s === "" ? [] : s.split(":"));
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  const all = [...head, ...tail];
  // The dotted quad may only end the address ("1.2.3.4::" is not one).
  const endsWithV4 = all.length > 0 && isIpv4(all[all.length - 1]) && (halves.length === 1 || tail.length > 0);
  const hex = endsWithV4 ? all.slice(0, -1) : all;
  if (!hex.every((g) => H16.test(g))) return false;
  const count = hex.length + (endsWithV4 ? 2 : 0);
  return halves.length === 2 ? count <= 7 : count === 8;
}

/**
 * A DNS host name (RFC 1123 labels) whose last label starts with a letter: names like "0", "2130706433",
 * "0x7f000001" or "0177.0.0.1" are read by getaddrinfo (inet_aton) as IPv4 addresses in other forms, so they
 * are not names (RFC 3696 section 2: a top-level label is never all-numeric).
 */
export function isHostName(value: string): boolean {
  if (!HOSTNAME.test(value)) return false;
  const last = value.slice(value.lastIndexOf(".") + 1);
  return /^[A-Za-z]/.test(last);
}

/** An address to reach a host at: IPv4, IPv6 or a DNS name. */
export function isHostAddress(value: string): boolean {
  return isIpv4(value) || isIpv6(value) || isHostName(value);
}

/** An IPv4 or IPv6 network in CIDR form, e.g. 10.0.0.0/8 or ::1/128. */
export function isCidr(value: string): boolean {
  const [address, bits, extra] = value.split("/");
  if (extra !== undefined || bits === undefined || !/^[0-9]{1,3}$/.test(bits)) return false;
  if (isIpv4(address)) return Number(bits) <= 32;
  return isIpv6(address) && Number(bits) <= 128;
}

/** Why one item of listen_addresses is not an address to listen on, or undefined when it is one. */
function listenItemProblem(item: string): string | undefined {
  if (item === "") return "an empty item (two commas, or one at an end)";
  if (item === "*" || isIpv4(item) || isIpv6(item) || isHostName(item)) return undefined;
  const shown = JSON.stringify(item.slice(0, 60));
  if (item.includes("/"))
    return `${shown} is a network (CIDR), not an address to listen on: give the address itself, or "*"`;
  if (item.includes("%"))
    return `${shown} has a zone id: give an address without it (link-local addresses are not supported)`;
  if (/^(0[xX][0-9A-Fa-f]*|[0-9]+)(\.(0[xX][0-9A-Fa-f]*|[0-9]+))*$/.test(item)) {
    return (
      `${shown} is not a dotted-quad IPv4 address (four decimal numbers 0-255, no leading zeros): ` +
      "the system would read it as another address (a number, octal, hex or a short form)"
    );
  }
  if (item.includes(":"))
    return `${shown} is not an IPv6 address (RFC 4291: eight groups of 1-4 hex digits, one "::" at most)`;
  return `${shown} is not an IP address or a host name`;
}

/**
 * postgresql.conf listen_addresses: "*", or a comma-separated list of IP literals (strict, see isIpv4 and
 * isIpv6) and host names. A name other than "localhost" must also resolve, on the VM, to addresses of
 * the VM itself: the installer checks that there before the TCP login sends the password (see
 * handlers/install-postgres/addresses.ts).
 */
function listenAddressesProblem(value: string): string | undefined {
  const problems = value.split(",").map((i) => listenItemProblem(i.trim()));
  const found = problems.filter((p): p is string => p !== undefined);
  return found.length ? found.join("; ") : undefined;
}

/** The items of listen_addresses that are host names to resolve on the VM ("localhost", the loopback, never is). */
export function listenHostNames(value: string): string[] {
  const items = value.split(",").map((i) => i.trim());
  return [...new Set(items.filter((i) => i !== "localhost" && !isIpv4(i) && !isIpv6(i) && isHostName(i)))];
}

/**
 * A PostgreSQL cluster name as pg_createcluster accepts it (`^([-.\w]+)$`, ASCII): letters, digits, _ . -,
 * neither "." nor ".." (postgresql-common skips those). Cluster names are read from the VM (pg_lsclusters
 * lists every directory under /etc/postgresql/<major>/, and those directories belong to postgres): anything
 * else is refused before it can reach a command.
 */
const PG_CLUSTER_NAME = /^[A-Za-z0-9_.-]{1,255}$/;
export function isPgClusterName(value: string): boolean {
  return PG_CLUSTER_NAME.test(value) && value !== "." && value !== "..";
}

/** A cluster's version as postgresql-common lists it: a major of 10 and later, or 9.x and older. */
export const PG_CLUSTER_VERSION = /^([1-9][0-9]|[6-9]\.[0-9])$/;

/**
 * An absolute path read from the VM that a command may name: characters a shell, sed and the tools read
 * literally, no "." or ".." component, at most 4096 bytes. It is quoted as well; the rule keeps a path
 * a database superuser or a hand edit chose from meaning anything but itself.
 */
export function isSafeAbsolutePath(value: string): boolean {
  if (value.length > 4096 || !/^\/[A-Za-z0-9_.,+@%=:/-]*$/.test(value)) return false;
  return value
    .split("/")
    .slice(1)
    .every((part, i, parts) => part !== "." && part !== ".." && (part !== "" || i === parts.length - 1));
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
const packageSpec: Validator<string> = withSchema(packageSpecCheck, {
  ...packageSpecCheck.schema,
  pattern: `^${DEBIAN_PACKAGE.source.slice(1, -1)}(=${DEBIAN_VERSION.source.slice(1, -1)})?$`,
});

/** Package specs: at least one, and each package named once (git and git=1:2.39 together is ambiguous). */
export const packageList: Validator<string[]> = refine(list(packageSpec, { minItems: 1 }), (specs, path, problems) => {
  const seen = new Map<string, number>();
  specs.forEach((spec, i) => {
    const name = parsePackageSpec(spec)?.name;
    if (name === undefined) return;
    if (seen.has(name))
      problems.push(
        `${path}[${i}]: package ${JSON.stringify(name)} is already listed at ${path}[${seen.get(name)}]; ` +
          "list each package once",
      );
    else seen.set(name, i);
  });
});

const pgIdentifier: Validator<string> = string({
  pattern: PG_IDENTIFIER,
  allowed: "a PostgreSQL name: lowercase letter or _, then lowercase letters, digits or _, at most 63",
  check: (v) =>
    v === "postgres" || v.startsWith("pg_") ? "is reserved by PostgreSQL; choose another name" : undefined,
});

/** Words pg_hba.conf or PostgreSQL give a meaning of their own: never a database or role of ours. */
const RESERVED_DB = ["all", "sameuser", "samerole", "samegroup", "replication", "template0", "template1"];
const RESERVED_ROLE = [
  "all",
  "public",
  "none",
  "current_user",
  "current_role",
  "session_user",
  "samerole",
  "sameuser",
  "replication",
];

function pgName(reserved: string[], what: string): Validator<string> {
  const base = pgIdentifier;
  const schema = { ...base.schema, not: { enum: reserved } };
  const check = refine(base, (name, path, problems) => {
    if (reserved.includes(name))
      problems.push(
        `${path}: ${JSON.stringify(name)} is a reserved word for a ${what} (in PostgreSQL or pg_hba.conf); ` +
          "choose another name",
      );
  });
  return withSchema(check, schema);
}

/** A database name we create: a PostgreSQL name that is not a reserved word. */
export const pgDatabaseName: Validator<string> = pgName(RESERVED_DB, "database");
/** A role name we create: a PostgreSQL name that is not a reserved word. */
export const pgRoleName: Validator<string> = pgName(RESERVED_ROLE, "role");

export const pgMajor: Validator<string> = string({
  pattern: PG_MAJOR,
  allowed: 'a PostgreSQL major version such as "15"',
});
export const unixUser: Validator<string> = string({
  pattern: UNIX_USER,
  allowed: "a Unix user name (lowercase, digits, _ -; at most 32)",
});
export const hostKeySha256: Validator<string> = string({
  pattern: HOST_KEY_SHA256,
  allowed: 'an OpenSSH fingerprint "SHA256:" + 43 base64 characters',
});
export const repoUrl: Validator<string> = string({
  pattern: REPO_URL,
  allowed: "an http(s) URL without query, quotes or spaces",
});
export const cidr: Validator<string> = string({
  allowed: "an IPv4 or IPv6 network in CIDR form such as 10.0.0.0/8",
  check: (v) => (isCidr(v) ? undefined : "is not a network in CIDR form (address/bits)"),
});
export const listenAddresses: Validator<string> = string({
  allowed:
    '"*" or a comma-separated list of IP addresses and host names ' +
    "(a name must resolve, on the VM, to its own addresses)",
  check: (v) => {
    const problem = listenAddressesProblem(v);
    return problem ? `is not "*" or a comma-separated list of IP addresses and host names: ${problem}` : undefined;
  },
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
function normalizeFingerprint(value: string): string | undefined {
  return KEY_FINGERPRINT_INPUT.test(value) ? value.replace(/ /g, "").toUpperCase() : undefined;
}

const FINGERPRINTS_ALLOWED =
  "one OpenPGP key fingerprint (40 hex digits, any case, spaces allowed as gpg prints them) or a list of them";

/**
 * The keys an apt repository's keyring must hold, exactly: one fingerprint or a list, normalised to a
 * list of upper-case hex without spaces (so `"9dc8 5822 ..."` and `"9DC85822..."` are the same key).
 */
export const keyFingerprints: Validator<string[]> = withSchema(
  (value, path, problems) => {
    const given = typeof value === "string" ? [value] : value;
    if (!Array.isArray(given) || given.length === 0) {
      const got = Array.isArray(given) ? "an empty list" : JSON.stringify(value);
      problems.push(`${path}: expected ${FINGERPRINTS_ALLOWED}, got ${got}`);
      return [];
    }
    const out: string[] = [];
    given.forEach((item, i) => {
      const where = typeof value === "string" ? path : `${path}[${i}]`;
      const fpr = typeof item === "string" ? normalizeFingerprint(item) : undefined;
      if (fpr === undefined)
        problems.push(
          `${where}: ${JSON.stringify(item)} is not an OpenPGP key fingerprint ` +
            "(40 hex digits; a short key ID is not enough)",
        );
      else if (out.includes(fpr)) problems.push(`${where}: ${fpr} is listed twice`);
      else out.push(fpr);
    });
    return out;
  },
  {
    anyOf: [
      { type: "string", pattern: KEY_FINGERPRINT_INPUT.source },
      {
        type: "array",
        items: { type: "string", pattern: KEY_FINGERPRINT_INPUT.source },
        minItems: 1,
        uniqueItems: true,
      },
    ],
    description: FINGERPRINTS_ALLOWED,
  },
);
