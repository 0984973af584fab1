// One declaration per setting, read by both sides: the stack's config check (cdktf.json, camelCase keys,
// at synth), the settings -> event mapping, the handler's event check (snake_case keys, before any SSH),
// the JSON Schema an editor checks cdktf.json with, and the README's tables. A setting added here shows
// up in all of them; one rule object checks both sides, so they cannot accept different values.
import { type Field, type FieldsOf, optional, required, type Validator } from "./validate";

/** One setting. The key it is declared under is its cdktf.json key. */
export interface Setting<T = unknown> {
  /** What a value must be, on both sides. */
  readonly rule: Validator<T>;
  /** One line: what it does. The README and the JSON Schema show it. */
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

type ValueOf<S> = S extends { rule: Validator<infer T> } ? T : never;
type HasDefault<S> = S extends { default: unknown } ? true : false;

/** The settings as cdktf.json holds them once defaults are filled in. */
export type ConfigOf<S extends Settings> = {
  readonly [K in keyof S as S[K] extends { eventOnly: true }
    ? never
    : HasDefault<S[K]> extends true
      ? K
      : never]: ValueOf<S[K]>;
} & {
  readonly [K in keyof S as S[K] extends { eventOnly: true }
    ? never
    : HasDefault<S[K]> extends true
      ? never
      : K]?: ValueOf<S[K]>;
};

type EventKey<S> = S extends { event: infer E extends string } ? E : never;
type Present<S> = S extends { eventRequired: true } ? true : HasDefault<S>;

/** The handler's event once checked (defaults filled in). */
export type EventOf<S extends Settings> = {
  [K in keyof S as Present<S[K]> extends true ? EventKey<S[K]> : never]: ValueOf<S[K]>;
} & {
  [K in keyof S as Present<S[K]> extends true ? never : EventKey<S[K]>]?: ValueOf<S[K]>;
};

function entries(settings: Settings): [string, Setting][] {
  return Object.entries(settings);
}

function copy<T>(value: T): T {
  return value === undefined ? value : structuredClone(value);
}

/**
 * The cdktf.json fields, every one optional and without its default: installer settings are checked as
 * written at each level (top level, VM), then merged; a mistake is reported where it was written.
 */
export function configFields(settings: Settings): Record<string, Field<unknown>> {
  const out: Record<string, Field<unknown>> = {};
  for (const [key, s] of entries(settings))
    if (!s.eventOnly) out[key] = optional(s.rule, undefined, describeSetting(s));
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

/** The doc line with its default, as the JSON Schema's description (an editor shows it on hover). */
function describeSetting(s: Setting): string {
  if (s.default !== undefined) return `${s.doc} Default: ${JSON.stringify(s.default)}.`;
  return s.defaultDoc ? `${s.doc} Default: ${s.defaultDoc}.` : s.doc;
}
