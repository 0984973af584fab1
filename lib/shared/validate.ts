// A small validator used twice over the same rules: at synth on cdktf.json, and by each handler on its
// event before any SSH command. Every problem names its key path and what is allowed, all are collected,
// and each validator carries the JSON Schema of what it accepts (a `check` has none: synth sees it).
// Not a schema library (TypeBox, Valibot): these messages are quoted by tests and the docs, and every
// byte here is bundled into each job.

import { nearestName } from "./nearest-name";

/** A JSON Schema (draft 2020-12 subset: type, enum, pattern, minimum/maximum, items, properties). */
export type JsonSchema = Record<string, unknown>;

/** Checks `value` found at `path`; pushes one message per problem and returns the (defaulted) value. */
export interface Validator<T> {
  (value: unknown, path: string, problems: string[]): T;
  /** What it accepts, as JSON Schema. */
  readonly schema: JsonSchema;
}

/** Gives a checking function its JSON Schema. */
export function withSchema<T>(
  check: (value: unknown, path: string, problems: string[]) => T,
  schema: JsonSchema,
): Validator<T> {
  return Object.assign(check, { schema });
}

/** `base`, then `extra` on values `base` accepted; the schema stays `base`'s (plus `description`, if given). */
export function refine<T>(
  base: Validator<T>,
  extra: (value: T, path: string, problems: string[]) => void,
  description?: string,
): Validator<T> {
  return withSchema(
    (value, path, problems) => {
      const before = problems.length;
      const result = base(value, path, problems);
      if (problems.length === before) extra(result, path, problems);
      return result;
    },
    description ? { ...base.schema, description } : base.schema,
  );
}

/** Thrown with every problem found; `message` lists them one per line. */
export class ValidationError extends Error {
  constructor(
    readonly where: string,
    readonly problems: string[],
  ) {
    const count = `${problems.length} problem${problems.length === 1 ? "" : "s"}`;
    super(`${where}: ${count}:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ValidationError";
  }
}

/** Runs `validator` on `value` and throws a ValidationError naming `where` when anything is wrong. */
export function validate<T>(validator: Validator<T>, value: unknown, where: string, root = ""): T {
  const problems: string[] = [];
  const result = validator(value, root, problems);
  if (problems.length > 0) throw new ValidationError(where, problems);
  return result;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value);
  if (typeof value === "object") return "an object";
  return `${typeof value} ${String(value)}`;
}

function at(path: string): string {
  return path === "" ? "(top level)" : path;
}

export interface StringRule {
  /** A pattern the whole string must match. */
  pattern?: RegExp;
  /** What a valid value looks like, in words, for the error message. */
  allowed?: string;
  /** An extra check returning a reason when the value is not acceptable. */
  check?: (value: string) => string | undefined;
}

export function string(rule: StringRule = {}): Validator<string> {
  const schema: JsonSchema = {
    type: "string",
    ...(rule.pattern ? { pattern: rule.pattern.source } : {}),
    ...(rule.allowed ? { description: rule.allowed } : {}),
  };
  return withSchema((value, path, problems) => {
    if (typeof value !== "string") {
      problems.push(
        `${at(path)}: expected a string${rule.allowed ? ` (${rule.allowed})` : ""}, got ${describe(value)}`,
      );
      return "";
    }
    if (rule.pattern && !rule.pattern.test(value)) {
      problems.push(
        `${at(path)}: ${describe(value)} is not allowed; expected ${rule.allowed ?? `a match for ${rule.pattern}`}`,
      );
      return value;
    }
    const reason = rule.check?.(value);
    if (reason) problems.push(`${at(path)}: ${describe(value)} ${reason}`);
    return value;
  }, schema);
}

export function integer(min: number, max: number): Validator<number> {
  return withSchema(
    (value, path, problems) => {
      if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
        problems.push(`${at(path)}: expected a whole number from ${min} to ${max}, got ${describe(value)}`);
        return min;
      }
      return value;
    },
    { type: "integer", minimum: min, maximum: max },
  );
}

export function boolean(): Validator<boolean> {
  return withSchema(
    (value, path, problems) => {
      if (typeof value !== "boolean") {
        problems.push(`${at(path)}: expected true or false, got ${describe(value)}`);
        return false;
      }
      return value;
    },
    { type: "boolean" },
  );
}

export function oneOf<T extends string>(choices: readonly T[]): Validator<T> {
  return withSchema(
    (value, path, problems) => {
      if (typeof value !== "string" || !(choices as readonly string[]).includes(value)) {
        problems.push(
          `${at(path)}: expected one of ${choices.map((c) => JSON.stringify(c)).join(", ")}, got ${describe(value)}`,
        );
        return choices[0];
      }
      return value as T;
    },
    { enum: [...choices] },
  );
}

export function list<T>(item: Validator<T>, opts: { minItems?: number; unique?: boolean } = {}): Validator<T[]> {
  const schema: JsonSchema = {
    type: "array",
    items: item.schema,
    ...(opts.minItems ? { minItems: opts.minItems } : {}),
    ...(opts.unique ? { uniqueItems: true } : {}),
  };
  return withSchema((value, path, problems) => {
    if (!Array.isArray(value)) {
      problems.push(`${at(path)}: expected a list, got ${describe(value)}`);
      return [];
    }
    if (opts.minItems !== undefined && value.length < opts.minItems) {
      problems.push(
        `${at(path)}: expected at least ${opts.minItems} item${opts.minItems === 1 ? "" : "s"}, got ${value.length}`,
      );
    }
    const items = value.map((v, i) => item(v, `${path}[${i}]`, problems));
    if (opts.unique) {
      const seen = new Set<string>();
      items.forEach((v, i) => {
        const key = JSON.stringify(v);
        if (seen.has(key)) problems.push(`${path}[${i}]: ${key} appears twice; each item must be unique`);
        seen.add(key);
      });
    }
    return items;
  }, schema);
}

/** A field of an object: its validator and, when it may be left out, its default. */
export interface Field<T> {
  validator: Validator<T>;
  /** Present when the key may be omitted; undefined-valued means "optional, no default". */
  fallback?: { value: T | undefined };
  /** One line for the JSON Schema's description. */
  doc?: string;
  /** The default the JSON Schema shows, when one is filled in later rather than by `object`. */
  shownDefault?: unknown;
}

export function required<T>(validator: Validator<T>, doc?: string): Field<T> {
  return { validator, doc };
}

export function optional<T>(validator: Validator<T>, defaultValue?: T, doc?: string): Field<T> {
  return { validator, fallback: { value: defaultValue }, doc };
}

/** An unknown key's problem: the nearest allowed name first (a slip of a letter), then every allowed name. */
function unknownKey(path: string, key: string, allowed: readonly string[]): string {
  const nearest = nearestName(key, allowed);
  const guess = nearest === undefined ? "" : ` did you mean "${nearest}"?`;
  return `${path}: unknown key;${guess} allowed here: ${allowed.join(", ")}`;
}

/** The JSON Schema of an object with exactly these fields. */
function objectSchema(fields: Record<string, Field<unknown>>): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const [key, field] of Object.entries(fields)) {
    const extra = {
      ...(field.doc ? { description: field.doc } : {}),
      ...(field.fallback?.value !== undefined ? { default: field.fallback.value } : {}),
      ...(field.shownDefault !== undefined ? { default: field.shownDefault } : {}),
    };
    properties[key] = { ...field.validator.schema, ...extra };
  }
  const required = Object.entries(fields)
    .filter(([, f]) => !f.fallback)
    .map(([k]) => k);
  return { type: "object", properties, ...(required.length ? { required } : {}), additionalProperties: false };
}

/** The fields map `object` takes: one Field per key of T. */
export type FieldsOf<T> = { [K in keyof T]-?: Field<T[K]> };

/** An object whose keys are exactly `fields` (an unknown key is a problem); defaults filled in. */
export function object<T>(fields: FieldsOf<T>): Validator<T> {
  return withSchema(
    (value, path, problems) => {
      const out: Record<string, unknown> = {};
      const prefix = path === "" ? "" : `${path}.`;
      if (typeof value !== "object" || value === null || Array.isArray(value)) {
        problems.push(
          `${at(path)}: expected an object with keys ${Object.keys(fields).join(", ")}, got ${describe(value)}`,
        );
        return out as T;
      }
      const given = value as Record<string, unknown>;
      for (const key of Object.keys(given)) {
        if (!(key in fields)) problems.push(unknownKey(`${prefix}${key}`, key, Object.keys(fields)));
      }
      for (const [key, field] of Object.entries(fields) as [string, Field<unknown>][]) {
        if (given[key] === undefined) {
          if (field.fallback) {
            if (field.fallback.value !== undefined) out[key] = structuredClone(field.fallback.value);
          } else {
            problems.push(`${prefix}${key}: required key is missing`);
          }
          continue;
        }
        out[key] = field.validator(given[key], `${prefix}${key}`, problems);
      }
      return out as T;
    },
    objectSchema(fields as Record<string, Field<unknown>>),
  );
}
