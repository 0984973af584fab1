// Terraform's values as the twin handles them: plain JSON-like data, plus one marker for "known only after
// apply". cty (Terraform's type system) sends such values as msgpack with an extension for unknowns
// (ext 0; ext 12 when it carries refinements, which the twin does not need and reads as plain unknown).
import { decode, ExtensionCodec, encode } from "@msgpack/msgpack";

/** A value Terraform will know only after apply. */
export const UNKNOWN: unique symbol = Symbol("unknown");
export type CtyValue = null | string | number | boolean | typeof UNKNOWN | CtyValue[] | { [key: string]: CtyValue };
export type CtyObject = { [attribute: string]: CtyValue };

/** A cty type as schema JSON writes it: "string", "number", "bool", ["map", T], ["list", T], ["set", T]. */
export type CtyType = string | [string, CtyType];

const UNKNOWN_EXT = 0;
const REFINED_UNKNOWN_EXT = 12;

const codec = new ExtensionCodec();
codec.register({
  type: UNKNOWN_EXT,
  encode: (value: unknown) => (value === UNKNOWN ? new Uint8Array([0]) : null),
  decode: () => UNKNOWN,
});
codec.register({ type: REFINED_UNKNOWN_EXT, encode: () => null, decode: () => UNKNOWN });

export function decodeValue(bytes: Uint8Array | undefined): CtyValue {
  if (!bytes || bytes.length === 0) return null;
  return decode(bytes, { extensionCodec: codec, useBigInt64: false }) as CtyValue;
}

/** Encodes a value; callers pass objects with every attribute of their schema (null when unset), as cty requires. */
export function encodeValue(value: CtyValue): Uint8Array {
  return encode(value, { extensionCodec: codec, ignoreUndefined: false });
}

/** Deep equality of two values; an unknown equals nothing (it may become anything). */
export function sameValue(a: CtyValue, b: CtyValue): boolean {
  if (a === UNKNOWN || b === UNKNOWN) return false;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => k in b && sameValue((a as CtyObject)[k], (b as CtyObject)[k]));
}
