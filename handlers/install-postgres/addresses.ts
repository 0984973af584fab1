// listen_addresses host names, checked on the VM before anything is changed and before the TCP login
// sends the password: a name (other than "localhost", which is never resolved: the login goes to the
// loopback literal) must resolve there, and only to addresses of the VM itself. The server could not
// listen on any other address anyway, and the login check would hand the password to whatever host the
// name points at. The login then goes to the address the check found, never to the name again (a DNS
// answer that changes in between cannot redirect it). The rule for the text itself is lib/shared/names.ts'.

import { isIpv4, isIpv6 } from "../../lib/shared/names";
import { quote } from "../../lib/shared/shell-quote";
import type { Fact, Probe } from "../common/vm-facts";

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

/**
 * The look's probes for `names` (each already a valid host name, quoted as well): each one's addresses as
 * the VM resolves it, and the VM's own addresses. Root's facts: the resolver is root's configuration
 * (/etc/hosts, nsswitch, the name servers root set), the addresses the kernel's.
 */
export function nameProbes(names: string[]): Probe<string, "root">[] {
  if (!names.length) return [];
  const probes: Probe<string, "root">[] = names.map((n, i) => ({
    name: `name:${i}`,
    command: `getent ahosts ${quote(n)}`,
    writer: "root",
    use: "a listen_addresses name's addresses on the VM: its own only, or the job stops (the login goes there)",
  }));
  probes.push({
    name: "own",
    command: "ip -o addr show || hostname -I",
    writer: "root",
    use: "the VM's own addresses, which a listen_addresses name must resolve to",
  });
  return probes;
}

/** nameProbes' answers (`get` gives each by its name). Anything that is not an IP literal is ignored. */
export function nameCheckFrom(get: (name: string) => Fact<"root">, names: string[]): NameCheck {
  const out: NameCheck = { resolved: {}, own: [] };
  if (!names.length) return out;
  names.forEach((n, i) => {
    // getent ahosts: "10.0.0.5       STREAM db.internal", a line per address and socket type.
    const addresses = get(`name:${i}`)
      .text.split("\n")
      .map((l) => l.trim().split(/\s+/)[0])
      .filter((a) => isIpv4(a) || isIpv6(a));
    out.resolved[n] = [...new Set(addresses)];
  });
  for (const line of get("own").text.split("\n")) {
    // `ip -o addr`: "2: eth0    inet 10.0.0.5/24 brd ..."; `hostname -I`: "10.0.0.5 2001:db8::5".
    const ip = /\binet6? ([0-9A-Fa-f:.]+)\//.exec(line);
    for (const a of ip ? [ip[1]] : line.trim().split(/\s+/)) if (isIpv4(a) || isIpv6(a)) out.own.push(a);
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
function listenNameError(problems: string[]): Error {
  return new Error(
    `listen_addresses: ${problems.join("; ")}. ` +
      "The server cannot listen on another host's address, and the TCP login check would send the " +
      "role's password to it, so nothing was changed and no password was sent: " +
      `give the VM's own addresses (or "*" / "localhost"), ` +
      "or make the name resolve to the VM on the VM itself (/etc/hosts, DNS), and run the job again",
  );
}

/** `check`'s names, each with its addresses, for the login check to connect to; throws when any is not the VM's own. */
export function checkedListenNames(check: NameCheck): Record<string, string[]> {
  const problems = listenNameProblems(check);
  if (problems.length) throw listenNameError(problems);
  return check.resolved;
}
