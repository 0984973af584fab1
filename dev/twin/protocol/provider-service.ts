// tfplugin6.Provider for a twin provider: the schema from providers/schemas, values in msgpack, each
// resource type's behaviour from its ResourceImplementation. Failures become diagnostics (what failed,
// where, what to do), never gRPC errors, so Terraform prints them as a provider would.
import { type CtyObject, decodeValue, encodeValue } from "./cty-value";
import { type Diagnostic, errorDiagnostic, toDiagnostic } from "./diagnostics";
import { planChange, requiredProblems, withAllAttributes } from "./planning";
import type { UnaryHandlers } from "./plugin-server";
import type { ResourceImplementation } from "./resource";
import { type ProviderSchema, toProtoSchema } from "./schema";

interface DynamicValue {
  msgpack?: Uint8Array;
  json?: Uint8Array;
}

const asObject = (v: DynamicValue | undefined) => decodeValue(v?.msgpack) as CtyObject | null;
const dynamic = (v: CtyObject | null) => ({ msgpack: encodeValue(v) });

export interface TwinProvider {
  schema: ProviderSchema;
  resources: Record<string, ResourceImplementation>;
  /** Provider configuration checks (values may be unknown). */
  validateConfig?(config: CtyObject): Diagnostic[];
  /** Terraform was interrupted (Ctrl-C): cut short what is running, so apply can report and end. */
  stop?(): void;
}

/** The resource type's implementation and schema block; a type Terraform should never ask for is a bug. */
function resourceType(twin: TwinProvider, typeName: string) {
  const impl = twin.resources[typeName];
  const typeSchema = twin.schema.resource_schemas[typeName];
  if (!impl || !typeSchema) throw new Error(`resource type ${typeName} is not served by ${twin.schema.source}'s twin`);
  return { impl, block: typeSchema.block };
}

const CAPABILITIES = { plan_destroy: false, get_provider_schema_optional: false, move_resource_state: false };

/** What the provider is: schemas, capabilities, configuration checks. */
function describingHandlers(twin: TwinProvider): UnaryHandlers {
  const { schema } = twin;
  return {
    GetMetadata: async () => ({
      server_capabilities: CAPABILITIES,
      resources: Object.keys(twin.resources).map((type_name) => ({ type_name })),
    }),
    GetProviderSchema: async () => ({
      provider: toProtoSchema(schema.provider),
      resource_schemas: Object.fromEntries(
        Object.entries(schema.resource_schemas).map(([name, s]) => [name, toProtoSchema(s)]),
      ),
      data_source_schemas: {},
      server_capabilities: CAPABILITIES,
    }),
    GetFunctions: async () => ({}),
    ValidateProviderConfig: async (req: { config: DynamicValue }) => ({
      diagnostics: twin.validateConfig?.(asObject(req.config) ?? {}) ?? [],
    }),
    ConfigureProvider: async () => ({ diagnostics: [] }),
    ValidateDataResourceConfig: async (req: { type_name: string }) => ({
      diagnostics: [errorDiagnostic(`data source ${req.type_name} is not in ${schema.source}'s schema`)],
    }),
    ValidateResourceConfig: async (req: { type_name: string; config: DynamicValue }) => {
      const { impl, block } = resourceType(twin, req.type_name);
      const config = withAllAttributes(block, asObject(req.config));
      return { diagnostics: [...requiredProblems(req.type_name, block, config), ...(impl.validate?.(config) ?? [])] };
    },
    ImportResourceState: async (req: { type_name: string }) => ({
      diagnostics: [
        errorDiagnostic(
          `${req.type_name}: import is not supported by the twin`,
          "The twin records only what it created; create the resource with a deploy instead.",
        ),
      ],
    }),
    StopProvider: async () => {
      twin.stop?.();
      return { Error: "" };
    },
  };
}

async function applyChange(
  twin: TwinProvider,
  req: { type_name: string; prior_state: DynamicValue; planned_state: DynamicValue },
) {
  const { impl, block } = resourceType(twin, req.type_name);
  const prior = asObject(req.prior_state);
  const planned = asObject(req.planned_state);
  try {
    if (planned === null) {
      if (prior) await impl.delete(prior);
      return { new_state: dynamic(null) };
    }
    const next =
      prior === null ? await impl.create(planned) : impl.update ? await impl.update(prior, planned) : planned;
    return { new_state: dynamic(withAllAttributes(block, next)) };
  } catch (e) {
    // A failed create leaves nothing in state; a failed update or delete keeps what was there.
    return {
      new_state: req.prior_state ?? dynamic(null),
      diagnostics: [toDiagnostic(e, `${req.type_name} ${planned === null ? "destroy" : "apply"}`)],
    };
  }
}

/** A resource's life: state upgrade, refresh, plan, apply. */
function lifecycleHandlers(twin: TwinProvider): UnaryHandlers {
  return {
    UpgradeResourceState: async (req: { type_name: string; raw_state: { json?: Uint8Array } }) => {
      const { block } = resourceType(twin, req.type_name);
      const raw = req.raw_state?.json?.length ? JSON.parse(Buffer.from(req.raw_state.json).toString("utf8")) : null;
      return { upgraded_state: dynamic(raw && withAllAttributes(block, raw)) };
    },
    ReadResource: async (req: { type_name: string; current_state: DynamicValue; private: Uint8Array }) => {
      const { impl } = resourceType(twin, req.type_name);
      const state = asObject(req.current_state);
      try {
        const now = state && impl.read ? await impl.read(state) : state;
        return { new_state: dynamic(now), private: req.private };
      } catch (e) {
        return {
          new_state: req.current_state,
          private: req.private,
          diagnostics: [toDiagnostic(e, `reading ${req.type_name}`)],
        };
      }
    },
    PlanResourceChange: async (req: {
      type_name: string;
      prior_state: DynamicValue;
      proposed_new_state: DynamicValue;
      config: DynamicValue;
    }) => {
      const { impl, block } = resourceType(twin, req.type_name);
      const config = asObject(req.config);
      const problems = config
        ? [...requiredProblems(req.type_name, block, config), ...(impl.validate?.(config) ?? [])]
        : [];
      if (problems.some((d) => d.severity === 1))
        return { planned_state: req.proposed_new_state, diagnostics: problems };
      const plan = planChange(block, impl, asObject(req.prior_state), asObject(req.proposed_new_state), config);
      return {
        planned_state: dynamic(plan.planned),
        requires_replace: plan.requiresReplace.map((name) => ({ steps: [{ attribute_name: name }] })),
        diagnostics: problems,
      };
    },
    ApplyResourceChange: (req: { type_name: string; prior_state: DynamicValue; planned_state: DynamicValue }) =>
      applyChange(twin, req),
  };
}

export function providerService(twin: TwinProvider): UnaryHandlers {
  return { ...describingHandlers(twin), ...lifecycleHandlers(twin) };
}
