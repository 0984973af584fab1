// One declaration per setting, read by every side: the stack's config check and defaults (cdktf.json,
// camelCase keys, at synth), the settings -> event mapping, the handler's event check (snake_case keys),
// the JSON Schema an editor checks cdktf.json with, and the docs' tables. One rule object checks
// every side, so they cannot accept different values; groups and lists of settings nest the same way.
import { type Field, type FieldsOf, list, object, optional, required, type Validator } from "./validate";

/** One setting. The key it is declared under is its cdktf.json key. */
export interface Setting<T = unknown> {
  /** What a value must be, on both sides. */
  readonly rule: Validator<T>;
  /** One line: what it does. The docs and the JSON Schema show it. */
  readonly doc: string;
  /** The value when it is not given: at synth, and in the handler when the event leaves it out. */
  readonly default?: T | Readonly<T>;
  /** The default in words when it is not a fixed value (e.g. "the VM's login user"). */
  readonly defaultDoc?: string;
  /** Its key in the handler's event; without it the setting is for the stack only (e.g. `enabled`). */
  readonly event?: string;
  /** The event must carry it, though the config has a default (the stack always sends it). */
  readonly eventRequired?: boolean;
  /** Only in the event, not in cdktf.json (e.g. the password, which the stack takes from a variable). */
  readonly eventOnly?: boolean;
  /** Must be written in cdktf.json: it has no default, and leaving it out is a problem. */
  readonly required?: boolean;
  /** Its value is an object of these settings: see `group`. */
  readonly settings?: Settings;
  /** With `settings`: its value is a list of such objects. */
  readonly list?: boolean;
  /** Checks across `settings`, run once every value passed its own rule. */
  readonly rules?: readonly SettingsRule[];
  /** A group kept as written, its keys' defaults left to its reader (the handler, for `sshRetry`). */
  readonly asGiven?: boolean;
  /** The value once resolved, from the one written (or the default) and the rest of the config. */
  resolve?(value: T | undefined, scope: Record<string, unknown>, root: Record<string, unknown>): unknown;
  /** Read into another setting and not kept itself (the top-level `installers`: into each VM's). */
  readonly mergedInto?: string;
}

/** A rule across the settings of one group, declared beside them. */
export interface SettingsRule {
  /** The rule in words (docs). */
  readonly doc: string;
  /**
   * Each problem as "<key>: what to do", its key under `path`, the group's ("vms[0]"); `root` is the whole
   * config as written.
   */
  // biome-ignore lint/suspicious/noExplicitAny: a rule reads the group as written, which only its validator typed.
  readonly check: (given: any, root: any, path: string) => string[];
}

/** A group of settings under their cdktf.json keys. */
export type Settings = Record<string, Setting<unknown>>;

/** Declares a setting, keeping its literal keys so the config and event types derive from it. */
export function setting<T, const O extends Omit<Setting<T>, "rule">>(
  rule: Validator<T>,
  options: O,
): O & { rule: Validator<T> } {
  return { ...options, rule };
}

/** Options of a group setting: those of a setting, and for a list its least length. */
export type GroupOptions = Omit<Setting, "rule" | "settings"> & { readonly minItems?: number };

/** A setting whose value is an object of `settings` (with `list: true`, a list of them). */
export function group<const S extends Settings, const O extends GroupOptions>(settings: S, options: O) {
  const fields = object(configFields(settings));
  const rule = options.list ? list(fields, { minItems: options.minItems }) : fields;
  return { ...options, settings, rule: rule as Validator<unknown> };
}

type ValueOf<S> = S extends { resolve: (...args: never[]) => infer R }
  ? R
  : S extends { settings: infer C extends Settings }
    ? GroupValue<S, ConfigOf<C>>
    : S extends { rule: Validator<infer T> }
      ? T
      : never;
type GroupValue<S, V> = S extends { list: true } ? V[] : S extends { asGiven: true } ? Partial<V> : V;
type HasDefault<S> = S extends { default: unknown } ? true : false;
type Present<S> = S extends { required: true } | { resolve: unknown } ? true : HasDefault<S>;
type Kept<S> = S extends { eventOnly: true } | { mergedInto: string } ? false : true;

/** The settings as cdktf.json holds them once defaults are filled in. */
export type ConfigOf<S extends Settings> = {
  readonly [K in keyof S as Kept<S[K]> extends true ? (Present<S[K]> extends true ? K : never) : never]: ValueOf<S[K]>;
} & {
  readonly [K in keyof S as Kept<S[K]> extends true ? (Present<S[K]> extends true ? never : K) : never]?: ValueOf<S[K]>;
};

type EventKey<S> = S extends { event: infer E extends string } ? E : never;
type InEvent<S> = S extends { eventRequired: true } ? true : HasDefault<S>;

/** The handler's event once checked (defaults filled in). */
export type EventOf<S extends Settings> = {
  [K in keyof S as InEvent<S[K]> extends true ? EventKey<S[K]> : never]: ValueOf<S[K]>;
} & {
  [K in keyof S as InEvent<S[K]> extends true ? never : EventKey<S[K]>]?: ValueOf<S[K]>;
};

function entries(settings: Settings): [string, Setting][] {
  return Object.entries(settings);
}

function copy<T>(value: T): T {
  return value === undefined ? value : structuredClone(value);
}

/**
 * The cdktf.json fields, checked as written: defaults are filled in after (resolveSettings, or an
 * installer's merge of its top-level and VM settings), so a mistake is reported where it was written.
 */
export function configFields(settings: Settings): Record<string, Field<unknown>> {
  const out: Record<string, Field<unknown>> = {};
  for (const [key, s] of entries(settings)) {
    if (s.eventOnly) continue;
    const field = s.required ? required(s.rule, describeSetting(s)) : optional(s.rule, undefined, describeSetting(s));
    out[key] = { ...field, shownDefault: copy(s.default) };
  }
  return out;
}

/** The handler's event fields: required, or optional with the same default the config has. */
export function eventFields<S extends Settings>(settings: S): FieldsOf<EventOf<S>> {
  const out: Record<string, Field<unknown>> = {};
  for (const [, s] of entries(settings)) {
    if (!s.event) continue;
    out[s.event] = s.eventRequired ? required(s.rule, s.doc) : optional(s.rule, copy(s.default) as unknown, s.doc);
  }
  return out as FieldsOf<EventOf<S>>;
}

/** The defaults of the cdktf.json settings that have one. */
export function configDefaults(settings: Settings): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, s] of entries(settings)) if (!s.eventOnly && s.default !== undefined) out[key] = copy(s.default);
  return out;
}

/** Resolved cdktf.json settings -> the handler's event keys (unset values are left out). */
export function toEvent(settings: Settings, config: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, s] of entries(settings)) {
    if (s.event && !s.eventOnly && config[key] !== undefined) out[s.event] = config[key];
  }
  return out;
}

/**
 * Settings as written -> as the stack uses them: each default filled in, each `resolve` applied, groups
 * resolved key by key. `root` is the whole config as written, for defaults that depend on other keys.
 */
export function resolveSettings(
  settings: Settings,
  given: Record<string, unknown>,
  root: Record<string, unknown> = given,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, s] of entries(settings)) {
    if (s.eventOnly || s.mergedInto) continue;
    const value = given[key] ?? copy(s.default);
    const resolved = s.resolve ? s.resolve(value, given, root) : resolveGroup(s, value, root);
    if (resolved !== undefined) out[key] = resolved;
  }
  return out;
}

function resolveGroup(s: Setting, value: unknown, root: Record<string, unknown>): unknown {
  const children = s.settings;
  if (value === undefined || !children || s.asGiven) return value;
  const one = (item: unknown) => resolveSettings(children, item as Record<string, unknown>, root);
  return s.list ? (value as unknown[]).map(one) : one(value);
}

/** The problems of every rule across settings, inner groups first, each under its key path. */
export function ruleProblems(
  settings: Settings,
  rules: readonly SettingsRule[],
  given: Record<string, unknown>,
  root: Record<string, unknown> = given,
  path = "",
): string[] {
  const under = (key: string) => (path ? `${path}.${key}` : key);
  const problems: string[] = [];
  for (const [key, s] of entries(settings)) {
    const value = given[key];
    if (!s.settings || value === undefined) continue;
    const items = s.list ? (value as Record<string, unknown>[]) : [value as Record<string, unknown>];
    items.forEach((item, i) => {
      const at = s.list ? `${under(key)}[${i}]` : under(key);
      problems.push(...ruleProblems(s.settings ?? {}, s.rules ?? [], item, root, at));
    });
  }
  for (const rule of rules) problems.push(...rule.check(given, root, path).map(under));
  return problems;
}

/** The doc line with its default, as the JSON Schema's description (an editor shows it on hover). */
export function describeSetting(s: Setting): string {
  if (s.required) return `${s.doc} Required.`;
  if (s.default !== undefined) return `${s.doc} Default: ${JSON.stringify(s.default)}.`;
  return `${s.doc} Default: ${s.defaultDoc ?? "none"}.`;
}
