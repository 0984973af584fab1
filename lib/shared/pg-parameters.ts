// The shape of install-postgres' `parameters` (postgresql.conf settings) and `extensions`, checked at synth
// and again by the handler. Only the shape can be checked here: the server itself judges names and values
// once it exists (handlers/install-postgres/parameters.ts). Values end up in a file postgres parses, so a
// newline or control character is refused outright and quoting is left to confValue.
import { list, string, type Validator, withSchema } from "./validate";

/** A GUC name as postgresql.conf takes it, lowercase; a custom one has dotted parts ("pg_stat_statements.max"). */
const GUC_NAME = /^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)*$/;

/** A value of `parameters`: postgres reads every one of them from text. */
export type PgParameterValue = string | number | boolean;

/** Names another setting (or postgresql-common) owns: refused in `parameters`, naming the owner. */
const OWNERS: [RegExp, string][] = [
  [/^listen_addresses$/, "the listenAddresses setting"],
  [/^shared_preload_libraries$/, "the extensions setting (it adds the libraries extensions need, keeping the others)"],
  [/^ssl(_.*)?$/, "the TLS settings (remoteSsl and the server's certificate)"],
  [/^(data_directory|config_file|hba_file|ident_file|external_pid_file)$/, "postgresql-common (the cluster's layout)"],
  [/^include(_dir|_if_exists)?$/, "nobody: it is a postgresql.conf directive, not a parameter"],
];

/** Why `name` may not be set through `parameters`, or undefined when it may. */
export function parameterOwner(name: string): string | undefined {
  return OWNERS.find(([pattern]) => pattern.test(name))?.[1];
}

function describe(value: unknown): string {
  if (value === null) return "null";
  return Array.isArray(value) ? "a list" : typeof value;
}

function checkValue(value: unknown, path: string, problems: string[]): void {
  if (typeof value === "boolean") return;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) problems.push(`${path}: ${value} is not a finite number`);
    return;
  }
  if (typeof value !== "string") {
    problems.push(`${path}: expected a string, a number or true/false, got ${describe(value)}`);
    return;
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused here.
  if (/[\x00-\x1f\x7f]/.test(value))
    problems.push(`${path}: contains a control character (newline, tab, ...); postgresql.conf cannot hold it`);
  if (value.length > 4096) problems.push(`${path}: is ${value.length} characters long; at most 4096 are allowed`);
}

/** `parameters`: postgresql.conf settings by name; the server checks them again once it runs. */
export const pgParameters: Validator<Record<string, PgParameterValue>> = withSchema(
  (value, path, problems) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      problems.push(`${path}: expected an object of postgresql.conf settings, got ${describe(value)}`);
      return {};
    }
    const out: Record<string, PgParameterValue> = {};
    for (const [name, v] of Object.entries(value)) {
      const at = `${path}.${name}`;
      if (!GUC_NAME.test(name) || name.length > 100) {
        problems.push(
          `${at}: ${JSON.stringify(name.slice(0, 60))} is not a parameter name; expected lowercase letters, digits ` +
            'and _, dotted for a module\'s own ("pg_stat_statements.max")',
        );
        continue;
      }
      const owner = parameterOwner(name);
      if (owner) problems.push(`${at}: is not set through parameters: it belongs to ${owner}`);
      checkValue(v, at, problems);
      out[name] = v as PgParameterValue;
    }
    return out;
  },
  {
    type: "object",
    propertyNames: { pattern: GUC_NAME.source },
    additionalProperties: { type: ["string", "number", "boolean"] },
    description: 'postgresql.conf settings by name, e.g. {"work_mem": "64MB", "max_connections": 200}',
  },
);

/** An extension name as CREATE EXTENSION takes it (contrib's "uuid-ossp" has a hyphen). */
const PG_EXTENSION = /^[a-z_][a-z0-9_-]{0,62}$/;

export const pgExtensions: Validator<string[]> = list(
  string({
    pattern: PG_EXTENSION,
    allowed: 'an extension name: lowercase letters, digits, _ or -, at most 63 (e.g. "pg_stat_statements")',
  }),
  { unique: true },
);
