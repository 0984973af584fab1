// listen_addresses host names, checked on the VM before anything is changed and before the TCP login
// sends the password: a name (other than "localhost", which is never resolved: the login goes to the
// loopback literal) must resolve there, and only to addresses of the VM itself. The server could not
// listen on any other address anyway, and the login check would hand the password to whatever host the
// name points at. The login then goes to the address the check found, never to the name again (a DNS
// answer that changes in between cannot redirect it). The rule for the text itself is shared/names.ts'.

import { isIpv4, isIpv6, listenHostNames } from "../../shared/names";
import { quote } from "../../shared/shell-quote";
import type { Remote } from "../common/exec";

/** What the VM answered: each name's addresses (getent ahosts) and the VM's own (ip -o addr, or hostname -I). */
export interface NameCheck {
  resolved: Record<string, string[]>;
  own: string[];
}

/**
 * An IP literal in one form for comparison: IPv4 as is, IPv6 as eight 4-digit lower-case groups, an
 * IPv4-mapped one as its IPv4.
 */
export function canonicalIp(address: string): string | undefined {
  if (isIpv4(address)) return address;
  if (!isIpv6(address)) return undefined;
  const [head, tail = ""] = address.toLowerCase().split("::");
  const groupsOf = (s: string) =>
    s === ""
      ? []
      : s.split(":").flatMap((g) => {
          if (!isIpv4(g)) return [g];
          const [a, b, c, d] = g.split(".").map(Number);
          return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
        });
  const h = groupsOf(head);
  const t = address.includes("::") ? groupsOf(tail) : [];
  const all = [...h, ...Array(8 - h.length - t.length).fill("0"), ...t].map((g) => g.padStart(4, "0"));
  if (all.slice(0, 6).join(":") === "0000:0000:0000:0000:0000:ffff") {
    const [x, y] = [parseInt(all[6], 16), parseInt(all[7], 16)];
    return [x >> 8, x & 255, y >> 8, y & 255].join(".");
  }
  return all.join(":");
}

function isLoopback(canonical: string): boolean {
  return /^127\./.test(canonical) || canonical === "0000:0000:0000:0000:0000:0000:0000:0001";
}

/** The command that answers for `names` (each already a valid host name, quoted as well). */
export function nameCheckCommand(names: string[]): string {
  return (
    `for n in ${names.map(quote).join(" ")}; do echo "@@name $n"; getent ahosts "$n" | awk '{print $1}'; done; ` +
    "echo '@@own'; ip -o addr show 2>/dev/null || hostname -I; true"
  );
}

/** nameCheckCommand's output. Anything that is not an IP literal is ignored. */
export function parseNameCheck(stdout: string, names: string[]): NameCheck {
  const out: NameCheck = { resolved: Object.fromEntries(names.map((n) => [n, []])), own: [] };
  let section: string | undefined;
  for (const raw of stdout.split("\n")) {
    const line = raw.trim();
    const name = /^@@name (.*)$/.exec(line);
    if (name) {
      section = names.includes(name[1]) ? name[1] : undefined;
      continue;
    }
    if (line === "@@own") {
      section = "@@own";
      continue;
    }
    if (section === "@@own") {
      // `ip -o addr`: "2: eth0    inet 10.0.0.5/24 brd ..."; `hostname -I`: "10.0.0.5 2001:db8::5".
      const ip = /\binet6? ([0-9A-Fa-f:.]+)\//.exec(line);
      for (const a of ip ? [ip[1]] : line.split(/\s+/)) if (isIpv4(a) || isIpv6(a)) out.own.push(a);
    } else if (section !== undefined && (isIpv4(line) || isIpv6(line))) {
      if (!out.resolved[section].includes(line)) out.resolved[section].push(line);
    }
  }
  return out;
}

/**
 * Pure. One problem per name that does not resolve on the VM, or resolves to any address that is not the
 * VM's own (loopback counts as own: every Linux has it, and `hostname -I` does not list it).
 */
export function listenNameProblems(check: NameCheck): string[] {
  const own = new Set(check.own.map(canonicalIp).filter((a): a is string => a !== undefined));
  const problems: string[] = [];
  for (const [name, addresses] of Object.entries(check.resolved)) {
    if (!addresses.length) {
      problems.push(`${name} does not resolve on the VM (getent ahosts ${name} found no address)`);
      continue;
    }
    const foreign = addresses.filter((a) => {
      const c = canonicalIp(a);
      return c === undefined || !(own.has(c) || isLoopback(c));
    });
    if (foreign.length) {
      problems.push(
        `${name} resolves on the VM to ${foreign.join(", ")}, ` +
          `which ${foreign.length === 1 ? "is not an address" : "are not addresses"} of the VM ` +
          `(its own: ${check.own.join(", ") || "none found"})`,
      );
    }
  }
  return problems;
}

/** The error for listenNameProblems' problems: nothing changed, nothing sent. */
export function listenNameError(problems: string[]): Error {
  return new Error(
    `listen_addresses: ${problems.join("; ")}. ` +
      "The server cannot listen on another host's address, and the TCP login check would send the " +
      "role's password to it, so nothing was changed and no password was sent: " +
      `give the VM's own addresses (or "*" / "localhost"), ` +
      "or make the name resolve to the VM on the VM itself (/etc/hosts, DNS), and run the job again",
  );
}

/**
 * Resolves the names in `listen` on the VM and checks them (listenNameProblems); throws when any is not
 * the VM's own. Returns each name's addresses, for the login check to connect to. No command is run when
 * `listen` holds no name to resolve.
 */
export async function resolveListenNames(remote: Remote, listen: string): Promise<Record<string, string[]>> {
  const names = listenHostNames(listen);
  if (!names.length) return {};
  const r = await remote.run(nameCheckCommand(names), {
    env: { LC_ALL: "C" },
    label: `resolving ${names.join(", ")} on the VM`,
    timeoutMs: 60_000,
  });
  const check = parseNameCheck(r.stdout, names);
  const problems = listenNameProblems(check);
  if (problems.length) throw listenNameError(problems);
  return check.resolved;
}
