// The facts layer: one SSH exec per look at the VM, framed so no byte the VM writes can forge a field, each
// fact carrying who on the VM can write it. Frame: one line per probe, its name, a space, then base64 of its
// stdout, a line break and its exit status (base64 has no line break or space; the parser takes exactly the
// declared names, in order, each once). Decisions that act as root on a path, delete, sign or send a secret
// take only RootFact or the stack's settings; a fact a service user or any user can write informs messages
// and warnings only. vm-facts.test.ts holds the framing to random bytes.

import { quote } from "../../lib/shared/shell-quote";

/** Who on the VM can change what a probe reads. */
export type Writer =
  /** only root (dpkg's database, /etc/os-release, systemd's view, root-owned 0644 files, the kernel) */
  | "root"
  /** a service user as well as root (files owned by postgres, a cluster's configuration, psql's answers) */
  | "service"
  /** any user on the VM (listeners on a port, /tmp, process names, anything a login user can write) */
  | "anyone";

export interface Probe<N extends string = string, W extends Writer = Writer> {
  /** Its name in the output and in code: lower case letters, digits and `_:.-`. */
  readonly name: N;
  /** A read-only sh command; run with stdin from /dev/null, stderr dropped unless `stderr` is true. */
  readonly command: string;
  /** Who on the VM can write what it reads (for the decisions it may feed, and the audit table). */
  readonly writer: W;
  /** What the installer uses it for, in a few words (the audit table in the docs). */
  readonly use: string;
  /** Keep stderr, after stdout in the same frame (a tool's error words are part of the fact). */
  readonly stderr?: boolean;
  /**
   * Run as this user when the look runs as root: a file a service user controls is read with that user's
   * rights, so a link it plants at the path reaches nothing it could not read itself (root-facts.test.ts
   * requires it of every probe that reads a service user's file).
   */
  readonly readAs?: string;
  /**
   * Variables the command reads, exported in its own subshell: one command for every cluster, bound per look
   * (the server look's port and unit). Values are quoted; names must be sh variable names.
   */
  readonly env?: Readonly<Record<string, string>>;
}

/** One probe's answer. */
export interface Fact<W extends Writer = Writer> {
  readonly name: string;
  readonly writer: W;
  /** The probe's exit status. */
  readonly code: number;
  /** What it printed, exactly (bytes decoded as UTF-8). */
  readonly text: string;
}

/** A fact only root can write: what decisions to act as root, delete, sign or send a secret may take. */
export type RootFact = Fact<"root">;

type NameOf<P extends readonly Probe[]> = P[number]["name"];
type WriterOf<P extends readonly Probe[], N extends NameOf<P>> = Extract<P[number], { name: N }>["writer"];

/** The answers of a look, by probe name, typed with each probe's writer. */
export interface Facts<P extends readonly Probe[]> {
  get<N extends NameOf<P>>(name: N): Fact<WriterOf<P, N>>;
}

/** A look: its script (one SSH exec) and the parser of that script's output. */
export interface Look<P extends readonly Probe[]> {
  /** Its name in errors and in the docs' audit table ("the look at Docker"). */
  readonly what: string;
  readonly probes: P;
  readonly script: string;
  parse(stdout: string): Facts<P>;
}

const NAME = /^[a-z0-9_:.-]{1,64}$/;
const USER = /^[a-z_][a-z0-9_-]{0,31}$/;
const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

/** Thrown when a look's output is not the frames its script prints: the look is not used at all. */
export class LookCorrupted extends Error {}

/**
 * Declares a look. `what` names it in errors ("the docker look"). Names must be unique and well formed;
 * `const` keeps each probe's name and writer in the type, so `facts.get("x")` knows its writer.
 */
export function defineLook<const P extends readonly Probe[]>(what: string, probes: P): Look<P> {
  const seen = new Set<string>();
  for (const p of probes) {
    if (!NAME.test(p.name)) throw new Error(`${what}: probe name ${JSON.stringify(p.name)} is not [a-z0-9_:.-]+`);
    if (seen.has(p.name)) throw new Error(`${what}: probe ${p.name} is declared twice`);
    if (p.readAs !== undefined && !USER.test(p.readAs)) {
      throw new Error(`${what}: probe ${p.name} reads as ${JSON.stringify(p.readAs)}, not a user name`);
    }
    for (const name of Object.keys(p.env ?? {})) {
      if (!ENV_NAME.test(name)) throw new Error(`${what}: probe ${p.name} exports ${JSON.stringify(name)}, not a name`);
    }
    seen.add(p.name);
  }
  return { what, probes, script: lookScript(probes), parse: (stdout) => parseLook(what, probes, stdout) };
}

/**
 * The probes as one sh script. Each runs in a subshell (an `exit` ends only that probe) with stdin closed;
 * the printf after it appends a line break and its status inside the encoded part.
 */
function lookScript(probes: readonly Probe[]): string {
  return probes
    .map((p) => {
      const err = p.stderr ? "2>&1" : "2>/dev/null";
      const exports = Object.entries(p.env ?? {}).map(([name, value]) => `${name}=${quote(value)}`);
      const read = p.readAs ? readingAs(p.readAs, p.command) : p.command;
      const command = exports.length ? `export ${exports.join(" ")}; ${read}` : read;
      return `printf '%s ' ${p.name}; { (${command}) </dev/null ${err}; printf '\\n%s' "$?"; } | base64 -w0; echo`;
    })
    .join("\n");
}

/**
 * `command` with `user`'s rights when the look runs as root; a look run as another user (the TLS look runs as
 * postgres, where runuser is refused) already reads with no more than that user's rights.
 */
export function readingAs(user: string, command: string): string {
  const q = quote(command);
  return `if [ "$(id -u)" -eq 0 ]; then runuser -u ${user} -- sh -c ${q}; else sh -c ${q}; fi`;
}

function parseLook<P extends readonly Probe[]>(what: string, probes: P, stdout: string): Facts<P> {
  const lines = stdout.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  if (lines.length !== probes.length) {
    throw new LookCorrupted(`${what}: expected ${probes.length} answers, got ${lines.length} lines (cut short?)`);
  }
  const facts = new Map<string, Fact>();
  probes.forEach((p, i) => {
    const m = /^([a-z0-9_:.-]+) ([A-Za-z0-9+/]*={0,2})$/.exec(lines[i]);
    if (!m || m[1] !== p.name) {
      throw new LookCorrupted(`${what}: answer ${i + 1} is not probe ${p.name}'s frame`);
    }
    const decoded = Buffer.from(m[2], "base64").toString("utf8");
    const cut = decoded.lastIndexOf("\n");
    const code = Number(decoded.slice(cut + 1));
    if (cut < 0 || !/^[0-9]{1,3}$/.test(decoded.slice(cut + 1))) {
      throw new LookCorrupted(`${what}: probe ${p.name}'s frame has no exit status`);
    }
    facts.set(p.name, { name: p.name, writer: p.writer, code, text: decoded.slice(0, cut) });
  });
  return {
    get: (name) => {
      const f = facts.get(name);
      if (!f) throw new Error(`${what}: no probe named ${name}`);
      // biome-ignore lint/suspicious/noExplicitAny: the declared writer is the probe's own, checked by defineLook.
      return f as any;
    },
  };
}

/**
 * `fact` as a RootFact, or an error naming the decision and the fact: decisions that act as root, delete,
 * sign or send a secret call it on what they are handed, so a fact widened or cast past the types (a look
 * built at run time, a caller in plain JavaScript) is refused all the same.
 */
export function rootFact(fact: Fact, decision: string): RootFact {
  if (fact.writer === "root") return fact as RootFact;
  const who = fact.writer === "service" ? "a service user" : "any user on the VM";
  throw new Error(
    `${decision} takes only what root alone can write on the VM, and ${fact.name} can be written by ${who}: ` +
      "refused (a bug in vm-install: report it)",
  );
}

/** `probes`, each exporting `env` (Probe.env); the same probes when there is none. */
export function withEnv<const P extends readonly Probe[]>(probes: P, env?: Readonly<Record<string, string>>): P {
  return (env ? probes.map((p) => ({ ...p, env: { ...p.env, ...env } })) : probes) as P;
}

/** The line that ends a command's part of an exec that a look follows (followedByLook). */
const STATUS_KEPT = "); vmi_status=$?; echo";

/**
 * `command`, then `look`, in one exec: a long step's result and the look after it for one round trip (issue
 * 30). The look runs whatever the command's outcome; the exec exits with the command's status. The look's
 * frames are the output's last lines, after a line break: nothing the command printed before them can stand
 * in for one (lookAtEnd counts them from the end).
 */
export function followedByLook(command: string, look: Look<readonly Probe[]>): string {
  if (look.probes.length === 0) return command;
  return `( ${command}\n${STATUS_KEPT}\n${look.script}\nexit $vmi_status`;
}

/**
 * A followedByLook exec's output: the command's own (`before`) and the look's facts; `facts` is undefined when
 * the last lines are not the look's whole frames (the exec was cut short, or ran elsewhere), and the caller
 * then looks on its own.
 */
export function lookAtEnd<P extends readonly Probe[]>(
  look: Look<P>,
  stdout: string,
): { before: string; facts: Facts<P> | undefined } {
  if (look.probes.length === 0) return { before: stdout, facts: look.parse("") };
  const lines = stdout.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  // The line break printed after the command starts the frames on a line of their own.
  const at = lines.length - look.probes.length;
  if (at < 0) return { before: stdout, facts: undefined };
  try {
    return { before: lines.slice(0, at).join("\n"), facts: look.parse(lines.slice(at).join("\n")) };
  } catch (e) {
    if (e instanceof LookCorrupted) return { before: stdout, facts: undefined };
    throw e;
  }
}
