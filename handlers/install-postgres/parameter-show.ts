// A postgresql.conf value in the words SHOW (and pg_settings.setting's current_setting) prints it: parsed as the
// server parses a file's value (guc.c parse_int/parse_real: decimal, octal, hex, a fraction, a unit), then
// printed as _ShowOption does (the greatest unit that holds the value exactly, %g for reals, on/off). Pure;
// undefined where the server's own hooks or forms could print otherwise (a check then says it is not sure).

/** What pg_settings says of a parameter's type: how a file's text is parsed and shown. */
export interface SettingType {
  vartype?: string;
  /** pg_settings.unit: its base unit ("kB", "8kB", "ms", "s", "min"...), null for none. */
  unit?: string | null;
  enumvals?: string[] | null;
  /** pg_settings' range of a number, in base units: a value outside it the server refuses. */
  min_val?: string | null;
  max_val?: string | null;
}

const MEMORY: [string, number][] = [
  ["TB", 1024 ** 4],
  ["GB", 1024 ** 3],
  ["MB", 1024 ** 2],
  ["kB", 1024],
  ["B", 1],
];
const TIME: [string, number][] = [
  ["d", 86_400_000],
  ["h", 3_600_000],
  ["min", 60_000],
  ["s", 1000],
  ["ms", 1],
  ["us", 0.001],
];

/** The units a base unit converts to, greatest first, each with its size in base units (guc.c's tables). */
function conversions(base: string): [string, number][] | undefined {
  const block = /^(\d+)kB$/.exec(base);
  const memory = block ? Number(block[1]) * 1024 : MEMORY.find(([u]) => u === base)?.[1];
  if (memory) return MEMORY.map(([u, size]) => [u, size / memory]);
  const time = TIME.find(([u]) => u === base)?.[1];
  return time ? TIME.map(([u, size]) => [u, size / time]) : undefined;
}

/** C's rint: to the nearest integer, halves to even. */
function rint(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** strtol with base 0, or strtod where that stops at a fraction or an exponent: [number, the rest]. */
function leadingNumber(text: string, integer: boolean): [number, string] | undefined {
  const int = /^\s*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)/.exec(text);
  const rest = int ? text.slice(int[0].length) : "";
  if (int && integer && !/^[.eE]/.test(rest)) {
    const digits = int[2];
    const radix = /^0[xX]/.test(digits) ? 16 : digits.length > 1 && digits.startsWith("0") ? 8 : 10;
    const n = Number.parseInt(radix === 16 ? digits.slice(2) : digits, radix);
    return [int[1] === "-" ? -n : n, rest];
  }
  const real = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(text);
  return real ? [Number(real[0]), text.slice(real[0].length)] : undefined;
}

/** A number and an optional unit in base units (guc.c convert_to_base_unit); undefined: the server refuses it. */
function parseNumber(text: string, base: string | null | undefined, integer: boolean): number | undefined {
  const lead = leadingNumber(text, integer);
  if (!lead || !Number.isFinite(lead[0])) return undefined;
  const [value, after] = lead;
  const unit = /^\s*(\S{1,3})?\s*$/.exec(after);
  if (!unit) return undefined;
  if (!unit[1]) return value;
  const table = base ? conversions(base) : undefined;
  const i = table?.findIndex(([u]) => u === unit[1]) ?? -1;
  if (!table || i < 0) return undefined;
  const next = table[i + 1]?.[1];
  // A fraction of a unit ("1.5GB") is rounded to the next smaller unit, as the server does.
  return next === undefined ? value * table[i][1] : rint((value * table[i][1]) / next) * next;
}

/** C's printf %g: six significant digits, trailing zeros dropped, an exponent outside 1e-4 .. 1e6. */
function formatG(x: number): string {
  if (x === 0) return "0";
  const [mantissa, exp] = x.toExponential(5).split("e");
  const e = Number(exp);
  const trim = (s: string) => (s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s);
  if (e < -4 || e >= 6) return `${trim(mantissa)}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  return trim(x.toFixed(5 - e));
}

/** An integer in base units in the greatest unit that holds it exactly (guc.c convert_int_from_base_unit). */
function showInt(value: number, base: string | null | undefined): string {
  const table = base ? conversions(base) : undefined;
  if (!table || value <= 0) return String(value);
  const [unit, size] = table.find(([, size]) => size <= 1 || value % Math.trunc(size) === 0) ?? table[table.length - 1];
  return `${rint(value / size)}${unit}`;
}

/** A real in base units in the first unit that gives (nearly) an integer, else the smallest one. */
function showReal(value: number, base: string | null | undefined): string {
  const table = base ? conversions(base) : undefined;
  if (!table || value <= 0) return formatG(value);
  let shown = formatG(value);
  for (const [unit, size] of table) {
    const v = value / size;
    shown = `${formatG(v)}${unit}`;
    if (v > 0 && Math.abs(rint(v) / v - 1) <= 1e-8) break;
  }
  return shown;
}

/** parse_bool: true/false, yes/no, on/off, 1/0 and their unambiguous prefixes, any case. */
function parseBool(text: string): boolean | undefined {
  const t = text.toLowerCase();
  if (!t) return undefined;
  if ("true".startsWith(t) || "yes".startsWith(t) || t === "1" || (t.length >= 2 && "on".startsWith(t))) return true;
  if ("false".startsWith(t) || "no".startsWith(t) || t === "0" || (t.length >= 2 && "off".startsWith(t))) return false;
  return undefined;
}

/** Within pg_settings' range (and an int's); no range known: only an int's. */
function inRange(n: number, type: SettingType): boolean {
  const int = type.vartype === "integer";
  const min = type.min_val ? Number(type.min_val) : int ? -(2 ** 31) : -Infinity;
  const max = type.max_val ? Number(type.max_val) : int ? 2 ** 31 - 1 : Infinity;
  return Number.isFinite(n) && n >= min && n <= max;
}

/** `text` (a file's value, unquoted) as SHOW prints it for a parameter of type `type`; undefined: not sure. */
export function showValue(text: string, type: SettingType): string | undefined {
  switch (type.vartype) {
    case "bool": {
      const b = parseBool(text);
      return b === undefined ? undefined : b ? "on" : "off";
    }
    case "integer": {
      const n = parseNumber(text, type.unit, true);
      return n === undefined || !inRange(rint(n), type) ? undefined : showInt(rint(n), type.unit);
    }
    case "real": {
      const n = parseNumber(text, type.unit, false);
      return n === undefined || !inRange(n, type) ? undefined : showReal(n, type.unit);
    }
    case "enum":
      return type.enumvals?.find((v) => v.toLowerCase() === text.toLowerCase());
    case "string":
      return text;
    default:
      return undefined;
  }
}
