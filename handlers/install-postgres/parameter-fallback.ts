// What is in effect for a parameter once vm-install's drop-in line is gone, foreseen from what inspect read
// (pg_settings and pg_file_settings, which parses the files as a reload would), in the words pg_settings
// shows after the reload: so a check says the line a run says then. Pure; every fact is the VM's word and
// only feeds these words. Where it cannot be sure it says so, and a run then says the same.

import { type SettingType, showValue } from "./parameter-show";

/** What pg_settings and pg_file_settings say of a parameter (parameters.ts ParameterFact). */
export interface SettingSeen extends SettingType {
  /** The value it runs with, as SHOW prints it. */
  value: string;
  pending_restart: boolean;
  /** The file the running value comes from (null: a default, or not from a file). */
  sourcefile?: string | null;
  /** pg_settings' source ("default", "configuration file", "user", ...). */
  source?: string;
  /** The built-in default, in base units. */
  boot_val?: string | null;
  /** pg_file_settings' lines for the name, in the order the server reads the files (as they are now). */
  lines?: { setting: string; file: string }[];
}

/** What pg_settings would say of the parameter; undefined: no value (a module's name, its library gone). */
export type InEffect = Pick<SettingSeen, "value" | "sourcefile" | "source"> | { unsure: string } | undefined;

/** Sources a file's line outranks: what a name falls back to from them is the files' word (guc.h GucSource). */
const FILES_OR_BELOW = ["default", "environment variable", "configuration file"];

/**
 * Names whose default is not boot_val: taken from the postmaster's environment or computed at start (guc.c
 * InitializeGUCOptionsFromEnvironment, initdb's locale, -1 for "from shared_buffers").
 */
const COMPUTED_DEFAULT = new Set([
  "port",
  "datestyle",
  "client_encoding",
  "max_stack_depth",
  "timezone",
  "log_timezone",
  "timezone_abbreviations",
  "wal_buffers",
  "lc_messages",
  "lc_monetary",
  "lc_numeric",
  "lc_time",
]);

/** What `fact` (read with vm-install's line in `dropIn`) becomes without that line, after the reload or restart. */
export function inEffectWithout(name: string, fact: SettingSeen | undefined, dropIn: string): InEffect {
  if (!fact) return undefined;
  const now = { value: fact.value, sourcefile: fact.sourcefile ?? null, source: fact.source };
  // A source above the files (command line, ALTER ROLE/DATABASE, the session) keeps its value.
  if (!FILES_OR_BELOW.includes(fact.source ?? "")) return fact.source ? now : { unsure: "its source is not known" };
  // A line read after the drop-in's already wins, and still will.
  if (fact.sourcefile && fact.sourcefile !== dropIn && !fact.pending_restart) return now;
  if (!fact.lines) return { unsure: "the configuration files were not read" };
  const ours = fact.lines.filter((l) => l.file === dropIn).at(-1);
  // The words are trusted only where they give the server's own for the value it runs with.
  if (ours && fact.sourcefile === dropIn && !fact.pending_restart && showValue(ours.setting, fact) !== fact.value)
    return { unsure: `the server shows ${name} as '${fact.value}', not as written` };
  const rest = fact.lines.filter((l) => l.file !== dropIn).at(-1);
  if (rest) {
    const value = showValue(rest.setting, fact);
    if (value === undefined) return { unsure: `${rest.file} sets it to '${rest.setting}', which may not apply` };
    return { value, sourcefile: rest.file, source: "configuration file" };
  }
  const value = fact.boot_val == null ? undefined : showValue(fact.boot_val, fact);
  if (COMPUTED_DEFAULT.has(name) || value === undefined) return { unsure: "its default is set when the server starts" };
  return { value, sourcefile: null, source: "default" };
}

/** A parameter vm-install took back, in `changes`' words: what it was, and the value in effect now and whence. */
export function takenBackLine(name: string, ours: string, now: InEffect): string {
  const taken = `parameter ${name}: vm-install's ${ours} taken back`;
  if (now && "unsure" in now) return `${taken}; the server's other files or its default in effect (${now.unsure})`;
  const where = now?.sourcefile ? ` from ${now.sourcefile}` : ` (${now?.source ?? "default"})`;
  return `${taken}; ${now ? `'${now.value}'${where}` : "no value"} in effect`;
}
