// Who listens on the address the login check is about to send a secret proof to: any user on the VM can bind
// a port PostgreSQL lost during a restart (or held before the first install), so before anything is sent the
// kernel's listening sockets (ss as root) must belong to the cluster's postmaster as systemd knows it (MainPID,
// taken from the pid file only for a process in the unit's cgroup), or to a child it just forked (a backend
// holds the socket until it closes it) on the kernel's word. Names a process gives itself only word the error.

import { quote } from "../../lib/shared/shell-quote";
import type { Remote } from "../common/exec";
import { defineLook, type Fact } from "../common/vm-facts";

/** The look at host:port's listeners, the cluster unit's main process, and the holders' names. */
export function listenerLook(port: number, unit: string) {
  return defineLook("the look at who listens on the PostgreSQL port", listenerProbes(String(port), quote(unit)));
}

/**
 * The listener look's probes, `port` as it may stand inside double quotes and `unit` as a sh word: literals,
 * or variables set by a look that runs them once per cluster (server-look.ts).
 */
export function listenerProbes(port: string, unit: string) {
  const sockets = `ss -Hltnp "sport = :${port}"`;
  const pids = `$(${sockets} | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -un)`;
  return [
    { name: "listeners", command: sockets, writer: "root", use: "which processes hold the port (kernel sockets)" },
    {
      name: "main_pid",
      command: `systemctl show -p MainPID --value ${unit}`,
      writer: "root",
      use: "the cluster's postmaster (systemd)",
    },
    {
      name: "holders",
      command: `for p in ${pids}; do ps -o pid=,user:32=,args= -p "$p"; done`,
      writer: "anyone",
      use: "names the holders in the error (user and command)",
    },
    {
      name: "parents",
      command: `for p in ${pids}; do echo "$p $(ps -o ppid= -p "$p")"; done`,
      writer: "root",
      use: "each holder's parent pid (kernel), none once it has exited: the postmaster's children share its socket",
    },
  ] as const;
}

type ListenerProbeName = ReturnType<typeof listenerProbes>[number]["name"];

/** The listener look's answers out of any look that ran listenerProbes. */
export function listenerFacts(get: (name: ListenerProbeName) => Fact): ListenerFacts {
  return { listeners: get("listeners"), mainPid: get("main_pid"), holders: get("holders"), parents: get("parents") };
}

/** One listening socket as ss shows it: local address (no brackets, no %interface) and the pids it names. */
interface Socket {
  address: string;
  port: number;
  pids: number[];
}

/** Addresses as ss prints them, compared in one form: IPv6 compressed and lower case. */
function canonical(address: string): string {
  if (!address.includes(":")) return address;
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return address.toLowerCase();
  }
}

/**
 * ss's lines (`LISTEN 0 244 127.0.0.1:5432 0.0.0.0:* users:(("postgres",pid=812,fd=6))`), or undefined when
 * a line is not one: a process name can hold any byte, so an unreadable line refuses the whole look
 * rather than be skipped. Every `pid=` on a line counts (a name cannot hide the real one ss appends).
 */
export function parseListeners(text: string): Socket[] | undefined {
  const out: Socket[] = [];
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const fields = line.trim().split(/\s+/);
    const local = /^(?:\[([^\]]+)\]|([^\s[\]]+?))(?:%[^:\s]+)?:([0-9]{1,5})$/.exec(fields[3] ?? "");
    if (fields[0] !== "LISTEN" || !local) return undefined;
    const rest = fields.slice(5).join(" ");
    const pids = [...rest.matchAll(/pid=([0-9]+)/g)].map((m) => Number(m[1]));
    out.push({ address: canonical(local[1] ?? local[2]), port: Number(local[3]), pids });
  }
  return out;
}

/** The sockets a connection to host:port can reach: that address, and the wildcards that cover it. */
function reaches(socket: Socket, host: string, port: number): boolean {
  if (socket.port !== port) return false;
  const h = canonical(host);
  const v6 = h.includes(":");
  const wild = v6 ? ["::", "*"] : ["0.0.0.0", "*", "::", canonical(`::ffff:${h}`)];
  return socket.address === h || wild.includes(socket.address);
}

export type ListenerVerdict =
  | { ok: true; pid: number }
  | { ok: false; why: "unreadable" | "no-server" | "nobody" | "other"; holders: number[] };

const GONE = -1;

/** The parents probe's lines (`pid ppid`, or `pid` alone once it has exited): pid -> parent, GONE when gone. */
function parentsOf(text: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const line of text.split("\n")) {
    const m = /^([0-9]+)(?: +([0-9]+))?$/.exec(line.trim());
    if (m) out.set(Number(m[1]), m[2] === undefined ? GONE : Number(m[2]));
  }
  return out;
}

/**
 * The decision, pure: every socket that can take a connection to host:port is the postmaster's (MainPID),
 * and there is at least one. Another pid on a socket the postmaster holds too passes when the kernel says
 * its parent is MainPID or it has exited (`parentsText`, the parents probe); a name can forge a `pid=` on a
 * line, never a real holder's parent. Else nothing is sent, and `holders` are the other pids.
 */
export function judgeListeners(
  ssText: string,
  mainPidText: string,
  host: string,
  port: number,
  parentsText = "",
): ListenerVerdict {
  const sockets = parseListeners(ssText);
  if (!sockets) return { ok: false, why: "unreadable", holders: [] };
  const main = /^[1-9][0-9]{0,9}$/.test(mainPidText.trim()) ? Number(mainPidText.trim()) : 0;
  const parents = parentsOf(parentsText);
  const forked = (p: number) => parents.get(p) === main || parents.get(p) === GONE;
  const reaching = sockets.filter((s) => reaches(s, host, port));
  const strangers = (s: Socket) => {
    if (!s.pids.length) return [0]; // a socket no process owns
    const others = s.pids.filter((p) => p !== main);
    return s.pids.includes(main) ? others.filter((p) => !forked(p)) : others;
  };
  const others = [...new Set(reaching.flatMap(strangers))];
  if (!main) return { ok: false, why: "no-server", holders: others.filter((p) => p !== 0) };
  if (others.length) return { ok: false, why: "other", holders: others.filter((p) => p !== 0) };
  if (!reaching.length) return { ok: false, why: "nobody", holders: [] };
  return { ok: true, pid: main };
}

/** ps's lines (`pid user args`), by pid, each cut to a readable length. */
function holderNames(text: string): Map<number, string> {
  const names = new Map<number, string>();
  for (const line of text.split("\n")) {
    const m = /^\s*([0-9]+)\s+(\S+)\s+(.*)$/.exec(line);
    if (m) names.set(Number(m[1]), `pid ${m[1]}, user ${m[2]}: ${m[3].slice(0, 100)}`);
  }
  return names;
}

/** The listener look's answers (listenerLook), however they were read. */
export interface ListenerFacts {
  listeners: Fact;
  mainPid: Fact;
  holders: Fact;
  parents: Fact;
}

/** Looks (as root) at who holds host:port: the listener look on its own. */
export async function lookAtListener(remote: Remote, port: number, unit: string): Promise<ListenerFacts> {
  const look = listenerLook(port, unit);
  const r = await remote.run(look.script, {
    sudo: true,
    env: { LC_ALL: "C" },
    label: `ss -ltnp sport :${port} + systemctl show ${unit}`,
    timeoutMs: 60_000,
  });
  const facts = look.parse(r.stdout);
  return listenerFacts((name) => facts.get(name));
}

/** Throws, before anything is sent, unless the postmaster of `unit` alone holds host:port; its pid. */
export function proveListener(facts: ListenerFacts, t: { host: string; port: number; unit: string }): number {
  const where = `${t.host.includes(":") ? `[${t.host}]` : t.host}:${t.port}`;
  const { listeners } = facts;
  if (listeners.code !== 0)
    throw new Error(
      `the login check could not list who listens on ${where} (ss exit ${listeners.code}: is iproute2 installed?); ` +
        "the password was not sent",
    );
  const verdict = judgeListeners(listeners.text, facts.mainPid.text, t.host, t.port, facts.parents.text);
  if (verdict.ok) return verdict.pid;
  const main = facts.mainPid.text.trim() || "none";
  const nothingSent = "nothing was sent to it (the role's password and any proof of it stay in the job)";
  if (verdict.why === "other") {
    const names = holderNames(facts.holders.text);
    const kill = verdict.holders.length ? ` (kill ${verdict.holders.join(" ")})` : "";
    const held = verdict.holders.map((p) => names.get(p) ?? `pid ${p}`).join("; ") || "a socket no process owns";
    throw new Error(
      `${where} is not held by the cluster's server: ${held} listens there, not ${t.unit} (MainPID ${main}); ` +
        `${nothingSent}. Another program holds the address PostgreSQL should listen on (it may have taken ` +
        `it while the server restarted): stop it${kill}, ` +
        `find out who started it, then \`systemctl restart ${t.unit}\` and run the job again`,
    );
  }
  const heldBy = verdict.holders.length ? ` while pid ${verdict.holders.join(", ")} listens there` : "";
  const why = {
    unreadable: `ss's list of listeners on port ${t.port} could not be read`,
    "no-server": `${t.unit} has no main process (MainPID ${main})${heldBy}`,
    nobody: `nothing listens on ${where}`,
  }[verdict.why];
  throw new Error(
    `the login check cannot prove who listens on ${where}: ${why}; ${nothingSent}. ` +
      `See \`ss -ltnp\` and \`systemctl status ${t.unit}\` on the VM`,
  );
}
