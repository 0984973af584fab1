// `parameters`: postgresql.conf settings kept in vm-install's conf.d drop-in beside listen_addresses, so
// they ride the same write, server check, restart-or-reload and rollback (configuration.ts, recovery.ts).
// Pure: what the drop-in holds, what the server runs with (parameters-server.ts reads it) -> the lines of
// what changes and whether the postmaster must restart for it.

import { type PgParameterValue, parameterOwner } from "../../lib/shared/pg-parameters";
import { type InEffect, inEffectWithout, type SettingSeen, takenBackLine } from "./parameter-fallback";
import { dropInContent } from "./pg";

/** One setting as the server runs it: pg_settings' context, its live value (with units), a restart waiting. */
export interface ParameterFact extends SettingSeen {
  name: string;
  context: string;
}

/** What the server says of the names the settings and the drop-in mention (parameters-server.ts). */
export interface ParameterFacts {
  /** By lowercase name: pg_settings has DateStyle, TimeZone... */
  known: Record<string, ParameterFact>;
  /** Every name the server knows (lowercase), only when some name asked for is not among them. */
  all: string[] | null;
}

export interface ParameterPlan {
  /** name -> its postgresql.conf text (quoted), as the drop-in is to hold them. */
  settings: Record<string, string>;
  /** The drop-in's parameter lines differ from the wanted ones. */
  changed: boolean;
  /** Names changed, removed or waiting whose server reads them only at start: a restart. */
  restart: string[];
  /** Names changed or removed that a reload applies. */
  reload: string[];
  /** One line per parameter, in the result's words. */
  lines: string[];
  /** Parameters as wanted in the drop-in but taken by the server from a file read after it. */
  warnings: string[];
  /** Names taken out of the drop-in (parameters-server.ts takenBack). */
  removed: Record<string, TakenBack>;
}

/** A name taken out of the drop-in: the text it had there, and what is foreseen in effect without it. */
export interface TakenBack {
  text: string;
  foreseen: InEffect;
}

/** The text postgres reads a value from: booleans on/off, numbers as written. */
export function plainValue(v: PgParameterValue): string {
  if (typeof v === "boolean") return v ? "on" : "off";
  return String(v);
}

/**
 * postgresql.conf's quoted form: the file's parser unescapes backslashes (GUC_scanstr) and a doubled
 * quote, so both are escaped; control characters never get here (the rule refuses them).
 */
export function confValue(v: PgParameterValue): string {
  return `'${plainValue(v).replace(/\\/g, "\\\\").replace(/'/g, "''")}'`;
}

/** The drop-in's `name = value` lines (value as written), in order; comments and blanks skipped. */
export function parseDropIn(text: string | null): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of (text ?? "").split("\n")) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*=?\s*(.*?)\s*$/.exec(line);
    if (m && !line.trimStart().startsWith("#")) out.set(m[1].toLowerCase(), m[2]);
  }
  return out;
}

/** The drop-in's parameters: every line but those another setting owns (listen_addresses, ssl*, ...). */
export function ownParameters(text: string | null): Map<string, string> {
  const all = parseDropIn(text);
  for (const name of [...all.keys()]) if (parameterOwner(name)) all.delete(name);
  return all;
}

/** Names the settings or the drop-in mention: what the server is asked about. */
export function namesToRead(wanted: Record<string, PgParameterValue>, dropInText: string | null): string[] {
  return [...new Set([...Object.keys(wanted), ...ownParameters(dropInText).keys()])].sort();
}

/** The wanted names whose drop-in text differs (what the server is asked to judge before any change). */
export function changedNames(wanted: Record<string, PgParameterValue>, dropInText: string | null): string[] {
  const current = ownParameters(dropInText);
  return Object.keys(wanted).filter((n) => current.get(n) !== confValue(wanted[n]));
}

/** Whether a change of `name` needs a restart; unknown (no server read yet, a module's own name): assumed so. */
function needsRestart(name: string, facts: ParameterFacts | undefined): boolean {
  const fact = facts?.known[name];
  return fact ? fact.context === "postmaster" : facts === undefined;
}

/**
 * Pure. `facts` undefined: no server to read (a check predicting a new cluster), so old values are the
 * drop-in's and every change is assumed to need a restart.
 */
export function planParameters(
  wanted: Record<string, PgParameterValue>,
  dropInText: string | null,
  facts: ParameterFacts | undefined,
  dropIn: string,
): ParameterPlan {
  const current = ownParameters(dropInText);
  const plan: ParameterPlan = {
    settings: {},
    changed: false,
    restart: [],
    reload: [],
    lines: [],
    warnings: [],
    removed: {},
  };
  const how = (name: string) => {
    const restart = needsRestart(name, facts);
    (restart ? plan.restart : plan.reload).push(name);
    return restart ? "restart" : "reload";
  };
  for (const name of Object.keys(wanted).sort()) {
    const text = confValue(wanted[name]);
    plan.settings[name] = text;
    const fact = facts?.known[name];
    if (current.get(name) !== text) {
      plan.changed = true;
      const old = fact ? `'${fact.value}'` : current.has(name) ? current.get(name) : "(not set)";
      plan.lines.push(`parameter ${name} ${old} -> ${text} (${dropIn}, ${how(name)})`);
    } else if (fact?.pending_restart) {
      plan.restart.push(name);
      plan.lines.push(`parameter ${name} ${text} applied (it was waiting for a restart)`);
    } else if (fact?.sourcefile && fact.sourcefile !== dropIn) {
      plan.warnings.push(
        `parameter ${name}: the server runs with '${fact.value}' from ${fact.sourcefile}, read after ${dropIn}, ` +
          `not with ${text}: remove it there` +
          (fact.sourcefile.endsWith("postgresql.auto.conf") ? ` (ALTER SYSTEM RESET ${name})` : ""),
      );
    }
  }
  for (const [name, text] of current) {
    if (name in wanted) continue;
    plan.changed = true;
    plan.removed[name] = { text, foreseen: inEffectWithout(name, facts?.known[name], dropIn) };
    plan.lines.push(
      `parameter ${name} ${text} removed from ${dropIn} (no longer in the settings; ` +
        `the server's other files or its default apply, ${how(name)})`,
    );
  }
  return plan;
}

/** What the restart or reload says of each name taken back, foreseen (a run says what it reads then). */
export function takenBackLines(params: ParameterPlan | undefined): string[] {
  const removed = params?.removed ?? {};
  // In the order the run reads them (parameters-server.ts takenBack).
  return Object.keys(removed)
    .sort()
    .map((name) => takenBackLine(name, removed[name].text, removed[name].foreseen));
}

/** What of the configuration plan (configuration.ts ConfigPlan) the parameters touch. */
interface WithParameters {
  listen: string;
  listenChanged: boolean;
  hbaChanged: boolean;
  lines: string[];
  parameters?: ParameterPlan;
  dropInText?: string;
}

/** The configuration plan with the parameters' lines and the drop-in text holding them. */
export function withParameters<C extends WithParameters>(config: C, params: ParameterPlan): C {
  return {
    ...config,
    parameters: params,
    dropInText: dropInContent(config.listen, params.settings),
    lines: [...config.lines, ...params.lines],
  };
}

/** The restart is needed: listen_addresses, or a parameter the server reads only at start. */
export function restartNeeded(config: WithParameters): boolean {
  return config.listenChanged || (config.parameters?.restart.length ?? 0) > 0;
}

/** Something in the drop-in or pg_hba.conf is to be written or applied. */
export function configurationChanges(config: WithParameters): boolean {
  return config.listenChanged || config.hbaChanged || (config.parameters?.lines.length ?? 0) > 0;
}

/** Levenshtein distance, for the nearest names to an unknown one. */
function distance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length];
}

/** Up to three names the server knows close to `name` (a typo's likely meaning); far ones are no help. */
export function nearestNames(name: string, all: string[]): string[] {
  const near = Math.max(2, Math.floor(name.length / 3));
  return [...all]
    .map((n) => ({ n, d: distance(name, n) - (n.includes(name) || name.includes(n) ? 2 : 0) }))
    .filter((x) => x.d <= near)
    .sort((x, y) => x.d - y.d || x.n.localeCompare(y.n))
    .slice(0, 3)
    .map((x) => x.n);
}

/**
 * The names the server does not know, each with its nearest ones. A dotted name (a module's own, e.g.
 * pg_stat_statements.max) is unknown until its library is loaded, so only plain names are refused.
 */
export function unknownNames(wanted: Record<string, PgParameterValue>, facts: ParameterFacts): string[] {
  return Object.keys(wanted)
    .filter((n) => !facts.known[n] && !n.includes("."))
    .map((n) => `${n} (nearest: ${nearestNames(n, facts.all ?? []).join(", ") || "none"})`);
}

/** Names the server will not let anyone set (context internal: compiled in or set at initdb). */
export function readOnlyNames(wanted: Record<string, PgParameterValue>, facts: ParameterFacts): string[] {
  return Object.keys(wanted).filter((n) => facts.known[n]?.context === "internal");
}
