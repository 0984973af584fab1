// What one twin resource type implements; the protocol plumbing (provider-service.ts) and the generic
// planning rules (planning.ts) do the rest.
import type { CtyObject, CtyValue } from "./cty-value";
import type { Diagnostic } from "./diagnostics";

export interface ResourceImplementation {
  /** Attributes whose change replaces the resource (Terraform plans destroy + create). */
  readonly replaceOn: readonly string[];
  /** Plan-time values of optional+computed attributes the configuration leaves unset (the real provider's defaults). */
  readonly defaults?: Readonly<Record<string, CtyValue>>;
  /** Checks beyond the schema's own (required attributes are checked for every type); values may be unknown. */
  validate?(config: CtyObject): Diagnostic[];
  /** Makes the thing; returns the full new state (planned values kept, computed ones filled). */
  create(planned: CtyObject): Promise<CtyObject>;
  /** An in-place change (no replacing attribute changed). @default the planned state, recorded as is */
  update?(prior: CtyObject, planned: CtyObject): Promise<CtyObject>;
  /** Removes (or, as the real provider may, keeps) the thing. */
  delete(prior: CtyObject): Promise<void>;
  /** Refresh: the current state, or null when the thing is gone. @default the stored state */
  read?(state: CtyObject): Promise<CtyObject | null>;
}
