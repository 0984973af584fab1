// The planning rules every twin resource shares: required attributes, computed values unknown until apply
// (or the provider's default), and which changes replace the resource.
import { type CtyObject, sameValue, UNKNOWN } from "./cty-value";
import { type Diagnostic, errorDiagnostic } from "./diagnostics";
import type { ResourceImplementation } from "./resource";
import type { SchemaBlock } from "./schema";

/** Every attribute of the block, null when the object lacks it (cty objects always carry all of them). */
export function withAllAttributes(block: SchemaBlock, value: Record<string, unknown> | null): CtyObject {
  return Object.fromEntries(
    Object.keys(block.attributes).map((name) => [name, (value?.[name] ?? null) as CtyObject[string]]),
  );
}

export function requiredProblems(typeName: string, block: SchemaBlock, config: CtyObject): Diagnostic[] {
  return Object.entries(block.attributes)
    .filter(([name, a]) => a.required && config[name] === null)
    .map(([name]) =>
      errorDiagnostic(
        `${typeName}: ${name} is required`,
        `Set ${name} in the ${typeName} block; the twin, like the real provider, cannot plan without it.`,
        name,
      ),
    );
}

export interface Plan {
  planned: CtyObject | null;
  requiresReplace: string[];
}

export function planChange(
  block: SchemaBlock,
  impl: ResourceImplementation,
  prior: CtyObject | null,
  proposed: CtyObject | null,
  config: CtyObject | null,
): Plan {
  if (proposed === null) return { planned: null, requiresReplace: [] };
  const planned = { ...proposed };
  if (prior === null) {
    for (const [name, a] of Object.entries(block.attributes)) {
      if (a.computed && config?.[name] === null) planned[name] = impl.defaults?.[name] ?? UNKNOWN;
    }
    return { planned, requiresReplace: [] };
  }
  return {
    planned,
    requiresReplace: impl.replaceOn.filter((name) => !sameValue(prior[name] ?? null, proposed[name] ?? null)),
  };
}
