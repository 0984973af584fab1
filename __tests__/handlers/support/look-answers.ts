// What a look's script prints on the VM, for doubles: each probe's answer framed as vm-facts.ts frames it,
// from the probes a script declares (read off the script itself, so dynamic looks work too). A probe a
// test does not answer gets its "nothing there" answer below: clean dpkg, no cloud-init, no proxy file.

import { TRANSACTION_LOOK } from "../../../handlers/common/apt-transaction";

/** A probe's answer: its text (exit 0), or text and exit status. */
export type Answer = string | { text?: string; code?: number };

/** The answer of a probe no test step names: the VM as the installers find it most of the time. */
const QUIET: Record<string, Answer> = {
  cloud_init: "none\n",
  apt_proxy: { code: 3 },
  "inventory.packages": { code: 3 },
  systemd: { code: 0 },
  daemon_json: { code: 3 },
  compose_v1: { code: 5 },
  "apt.trusted": { code: 3 },
  "apt_tx.status": { code: 3 },
  // The packages' verify read with an install's record, when no step answers it: not read, so the verify
  // runs its own dpkg-query and a transcript's own dpkg step answers that.
  installed: { code: 127 },
  // install-packages' dpkg-query in the kit's first look, when no step answers it: not read (as where
  // dpkg-query is missing), so inspect reads dpkg itself and a transcript's own dpkg step answers that.
  packages: { code: 127 },
  // apt-cache policy read after apt-get update, when no step answers it: not read, so the candidates are
  // asked of apt on their own and a transcript's own policy step answers that.
  "apt.policy": { code: 127 },
};

/** The probe names of a look's script, in order; undefined when `script` is not a look's. */
export function probeNames(script: string): string[] | undefined {
  const names = [...script.matchAll(/^printf '%s ' ([a-z0-9_:.-]+); \{ \(/gm)].map((m) => m[1]);
  return names.length && names.length === script.split("\n").length ? names : undefined;
}

/** A look's probe line: its name and its command, as vm-facts.ts writes them. */
const PROBE_LINE =
  /^printf '%s ' ([a-z0-9_:.-]+); \{ \((.*)\) <\/dev\/null 2>(?:&1|\/dev\/null); printf '\\n%s' "\$\?"; \} \| base64 -w0; echo$/;

/** Whether `command` is a look's script (every line a framed probe). */
export const isLook = (command: string) => command.split("\n").every((l) => PROBE_LINE.test(l));

/** A reply of a stateful double to one command. */
export interface Reply {
  code?: number | null;
  stdout?: string;
  stderr?: string;
}

/**
 * A stateful double's reply to a followedByLook exec (undefined when `script` is not one): `answer` replies to
 * the command, then to each probe's command alone; a probe it does not know (undefined) answers QUIET (dpkg
 * clean, nobody holding apt's locks).
 */
export function answerFollowed<R extends Reply>(
  script: string,
  answer: (command: string) => R | undefined,
): R | undefined {
  const parts = followedParts(script);
  if (!parts) return undefined;
  const r = answer(parts.command) ?? ({} as R);
  const frames = probesOf(parts.look).map((p) => {
    const a = answer(p.command);
    return frame(p.name, a ? { text: a.stdout ?? "", code: a.code ?? 0 } : (QUIET[p.name] ?? ""));
  });
  return { ...r, stdout: `${r.stdout ?? ""}\n${frames.join("")}` };
}

/**
 * A stateful double's reply to an install and the look at its transaction in one exec (apt-transaction.ts
 * followedStep; undefined when `script` is not one): each part answered as the double answers it alone.
 */
export function answerWithTransaction<R extends Reply>(script: string, answer: (part: string) => R): R | undefined {
  const parts = followedParts(script);
  if (!parts?.look.startsWith(TRANSACTION_LOOK.script)) return undefined;
  const r = answer(parts.command);
  return { ...r, stdout: `${r.stdout ?? ""}\n${answer(parts.look).stdout ?? ""}` };
}

/**
 * An exec as postgres whose first part is SQL from the first bytes of stdin (sql-first.ts), split: that psql's
 * command as psql() sends it alone, its SQL, and the rest of the exec with the rest of stdin; undefined when
 * `script` is not one.
 */
export function sqlFirstParts(
  script: string,
  stdin: string,
): { psql: string; sql: string; rest: string; restStdin: string } | undefined {
  const m =
    /^\{ head -c ([0-9]+) \| \(export PGCLIENTENCODING=UTF8 LC_MESSAGES=C; (cd \/ && psql [^)]*)\) >\/dev\/null \|\| exit \$\(\(100 \+ \$\?\)\); \} && ([\s\S]*)$/.exec(
      script,
    );
  if (!m) return undefined;
  const bytes = Buffer.from(stdin);
  const n = Number(m[1]);
  return { psql: m[2], sql: bytes.subarray(0, n).toString(), rest: m[3], restStdin: bytes.subarray(n).toString() };
}

/** A command and the look after it in one exec (vm-facts.ts followedByLook), split; undefined when not one. */
export function followedParts(script: string): { command: string; look: string } | undefined {
  const m = /^\( ([\s\S]*)\n\); vmi_status=\$\?; echo\n([\s\S]*)\nexit \$vmi_status$/.exec(script);
  return m && isLook(m[2]) ? { command: m[1], look: m[2] } : undefined;
}

/** What one probe's command prints on a stateful double, and its exit status. */
export interface ProbeAnswer {
  stdout: string;
  code: number;
}

/**
 * What `script` prints on a stateful double whose `answer` knows each probe's command (it throws on one it
 * does not know): the double answers what is asked, not a list of names.
 */
export function answerLookWith(script: string, answer: (command: string) => ProbeAnswer): string {
  return script
    .split("\n")
    .map((line) => {
      const m = PROBE_LINE.exec(line);
      if (!m) throw new Error(`answerLookWith: not a probe line of a look: ${line}`);
      const a = answer(asRun(m[2]));
      return frame(m[1], { text: a.stdout, code: a.code });
    })
    .join("");
}

/** A look's probes, name and command as the VM runs it, in order. */
export function probesOf(script: string): { name: string; command: string }[] {
  return script.split("\n").flatMap((line) => {
    const m = PROBE_LINE.exec(line);
    return m ? [{ name: m[1], command: asRun(m[2]) }] : [];
  });
}

/**
 * A probe's command as the VM runs it: its exported variables (Probe.env) written in where it reads them,
 * one with `readAs` unwrapped from vm-facts.ts' runuser wrapper.
 */
function asRun(command: string): string {
  const value = "'(?:[^']|'\\\\'')*'|[A-Za-z0-9_@%+=:,./-]+";
  const exported = new RegExp(`^export ((?:[A-Z_][A-Z0-9_]*=(?:${value}) ?)+); ([\\s\\S]*)$`).exec(command);
  const values = exported
    ? [...exported[1].matchAll(new RegExp(`([A-Z_][A-Z0-9_]*)=(${value})`, "g"))].map(([, n, v]) => [n, unword(v)])
    : [];
  const rest = exported ? exported[2] : command;
  const m = /^if \[ "\$\(id -u\)" -eq 0 \]; then runuser -u [a-z_][a-z0-9_-]* -- sh -c (.*); else sh -c \1; fi$/.exec(
    rest,
  );
  const inner = m ? unword(m[1]) : rest;
  return values.reduce((c, [n, v]) => c.replaceAll(`"$${n}"`, v).replaceAll(`$${n}`, v), inner);
}

/** A word as quote() wrote it, back to its value. */
const unword = (w: string) => (w.startsWith("'") ? w.slice(1, -1).replace(/'\\''/g, "'") : w);

/** The frame of one probe. */
function frame(name: string, answer: Answer): string {
  const { text = "", code = 0 } = typeof answer === "string" ? { text: answer } : answer;
  return `${name} ${Buffer.from(`${text}\n${code}`).toString("base64")}\n`;
}

/** What `script` prints when its probes answer `answers` (the rest QUIET, else empty with exit 0). */
export function answerLook(script: string | { script: string }, answers: Record<string, Answer> = {}): string {
  const text = typeof script === "string" ? script : script.script;
  const names = probeNames(text);
  if (!names) throw new Error(`answerLook: not a look's script: ${text.slice(0, 80)}`);
  // A per-item probe ("user:deploy") the look did not ask for is simply not printed.
  const unknown = Object.keys(answers).filter((n) => !names.includes(n) && !n.includes(":"));
  if (unknown.length) throw new Error(`answerLook: the look has no probe ${unknown.join(", ")} (it has ${names})`);
  return names.map((n) => frame(n, answers[n] ?? QUIET[n] ?? "")).join("");
}

const b64 = (text: string) => Buffer.from(text).toString("base64");

/** stale-repositories.ts's look answered: the source files (path, bytes), legacy keyrings there, apt-key's keys. */
export function sourcesFacts(
  files: { path: string; text: string }[],
  keyrings: string[] = [],
  trusted?: string,
): Record<string, Answer> {
  return {
    "apt.sources": files.map((f) => `${b64(f.path)} ${b64(f.text)}\n`).join(""),
    "apt.keyrings": keyrings.map((k) => `${b64(k)}\n`).join(""),
    "apt.trusted": trusted === undefined ? { code: 3 } : trusted,
  };
}
