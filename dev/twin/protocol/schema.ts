// The twin serves exactly the schemas in providers/schemas/*.json, the files the stack's bindings are
// generated from: one source, so the twin and the stack cannot disagree on an attribute.
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_ROOT } from "../../../lib/entry-points";
import type { CtyType } from "./cty-value";

export interface SchemaAttribute {
  type: CtyType;
  description?: string;
  description_kind?: string;
  required?: boolean;
  optional?: boolean;
  computed?: boolean;
  sensitive?: boolean;
  deprecated?: boolean;
}

export interface SchemaBlock {
  attributes: Record<string, SchemaAttribute>;
  description?: string;
  description_kind?: string;
  deprecated?: boolean;
}

export interface TypeSchema {
  version: number;
  block: SchemaBlock;
}

/** One provider's entry of `terraform providers schema -json`. */
export interface ProviderSchema {
  /** Source address, e.g. "terra.k8c.ru/nubes/nubes". */
  source: string;
  provider: TypeSchema;
  resource_schemas: Record<string, TypeSchema>;
}

const SCHEMAS_DIR = path.join(PROJECT_ROOT, "providers", "schemas");

/** Reads providers/schemas/<name>.json; it holds exactly one provider. */
export function loadProviderSchema(name: string, dir = SCHEMAS_DIR): ProviderSchema {
  const file = path.join(dir, `${name}.json`);
  const all = JSON.parse(fs.readFileSync(file, "utf8")) as {
    provider_schemas: Record<string, Omit<ProviderSchema, "source">>;
  };
  const entries = Object.entries(all.provider_schemas ?? {});
  if (entries.length !== 1)
    throw new Error(`${file}: expected exactly one provider under provider_schemas, found ${entries.length}`);
  const [source, schema] = entries[0];
  return { source, ...schema };
}

const KIND = { plain: 0, markdown: 1 } as const;

/** A schema as tfplugin6's Schema message (proto-loader's plain-object form). */
export function toProtoSchema(schema: TypeSchema) {
  const b = schema.block;
  return {
    version: schema.version,
    block: {
      version: schema.version,
      description: b.description ?? "",
      description_kind: KIND[(b.description_kind ?? "plain") as keyof typeof KIND] ?? 0,
      deprecated: !!b.deprecated,
      block_types: [],
      attributes: Object.entries(b.attributes)
        .sort(([x], [y]) => x.localeCompare(y))
        .map(([name, a]) => ({
          name,
          type: Buffer.from(JSON.stringify(a.type)),
          description: a.description ?? "",
          description_kind: KIND[(a.description_kind ?? "plain") as keyof typeof KIND] ?? 0,
          required: !!a.required,
          optional: !!a.optional,
          computed: !!a.computed,
          sensitive: !!a.sensitive,
          deprecated: !!a.deprecated,
        })),
    },
  };
}
