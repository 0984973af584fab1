// `cdktf synth --hcl`: the stack's Terraform JSON configuration written in HCL's native syntax. cdktf's own
// HCL renderer guesses blocks from attribute shapes and leaves quotes unescaped in strings with `${`, and its
// output fails `terraform validate` for this stack (lifecycle preconditions, replace_triggered_by, a command
// with quotes). The JSON is what Terraform deploys: translated by Terraform's own JSON-syntax rules, the HCL
// means the same. The providers this stack uses have no nested blocks: only meta-arguments are blocks here.

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const INDENT = "  ";

/** End (exclusive) of the `${...}` or `%{...}` sequence starting at `start` in a template. */
function sequenceEnd(text: string, start: number): number {
  let depth = 0;
  for (let i = start + 2 - 1; i < text.length; i++) {
    const c = text[i];
    if (c === '"') i = quotedEnd(text, i + 1) - 1;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i + 1;
  }
  throw new Error(`unterminated template sequence at ${start} in ${JSON.stringify(text.slice(0, 200))}`);
}

/** End (exclusive, past the closing quote) of a quoted string inside an expression, its own sequences skipped. */
function quotedEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (c === "\\") i++;
    else if (c === '"') return i + 1;
    else if ((c === "$" || c === "%") && text[i + 1] === "{" && text[i - 1] !== c) i = sequenceEnd(text, i) - 1;
  }
  throw new Error(`unterminated string in ${JSON.stringify(text.slice(0, 200))}`);
}

/** A JSON-syntax string (a template) as an HCL expression: a lone `${expr}` bare, else a quoted template. */
function templateAsHcl(text: string): string {
  if (text.startsWith("${") && sequenceEnd(text, 0) === text.length) return `(${text.slice(2, -1)})`;
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if ((c === "$" || c === "%") && text[i + 1] === "{" && text[i - 1] !== c) {
      const end = sequenceEnd(text, i);
      out += text.slice(i, end);
      i = end - 1;
    } else if (c === "\\") out += "\\\\";
    else if (c === '"') out += '\\"';
    else if (c === "\n") out += "\\n";
    else if (c === "\r") out += "\\r";
    else if (c === "\t") out += "\\t";
    else out += c;
  }
  return `"${out}"`;
}

/** A keyword or reference JSON syntax writes as a string (depends_on, when, ignore_changes): bare. */
function bare(value: Json): string {
  const text = String(value);
  return text.startsWith("${") && text.endsWith("}") ? text.slice(2, -1) : text;
}

function bareList(value: Json): string {
  return `[${(Array.isArray(value) ? value : [value]).map(bare).join(", ")}]`;
}

/** A JSON value as an HCL expression, nested lines indented by `pad`. */
function valueAsHcl(value: Json, pad = ""): string {
  if (typeof value === "string") return templateAsHcl(value);
  if (value === null || typeof value !== "object") return String(value);
  const inner = pad + INDENT;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    return `[\n${value.map((v) => `${inner}${valueAsHcl(v, inner)},`).join("\n")}\n${pad}]`;
  }
  const entries = Object.entries(value).filter(([k]) => k !== "//");
  if (entries.length === 0) return "{}";
  const key = (k: string) => (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(k) ? k : templateAsHcl(k));
  return `{\n${entries.map(([k, v]) => `${inner}${key(k)} = ${valueAsHcl(v, inner)}`).join("\n")}\n${pad}}`;
}

/** How a block's keys are written: nested blocks, bare keywords and references, or plain attributes. */
type BlockRules = Record<string, "block" | "blocks" | "bare" | "bare-list" | "type" | Rule>;
interface Rule {
  labelled?: boolean;
  rules: BlockRules;
}

const CONDITION: BlockRules = {};
const LIFECYCLE: BlockRules = {
  precondition: "blocks",
  postcondition: "blocks",
  ignore_changes: "bare-list",
  replace_triggered_by: "bare-list",
};
const PROVISIONER: BlockRules = { when: "bare", on_failure: "bare", connection: "block" };
const RESOURCE: BlockRules = {
  depends_on: "bare-list",
  provider: "bare",
  lifecycle: { rules: LIFECYCLE },
  connection: "block",
  provisioner: { labelled: true, rules: PROVISIONER },
};

function bodyAsHcl(body: JsonObject, rules: BlockRules, pad: string): string[] {
  const lines: string[] = [];
  for (const [key, value] of Object.entries(body)) {
    if (key === "//" || value === undefined) continue;
    const rule = rules[key];
    if (rule === "bare") lines.push(`${pad}${key} = ${bare(value)}`);
    else if (rule === "bare-list") lines.push(`${pad}${key} = ${bareList(value)}`);
    else if (rule === "type") lines.push(`${pad}${key} = ${value}`);
    else if (rule === "block" || rule === "blocks")
      for (const b of Array.isArray(value) ? value : [value])
        lines.push(...block(key, [], b as JsonObject, CONDITION, pad));
    else if (rule && typeof rule === "object" && rule.labelled)
      // [{ "local-exec": {...} }, ...]: one block per entry, labelled by its key.
      for (const entry of Array.isArray(value) ? value : [value])
        for (const [label, b] of Object.entries(entry as JsonObject))
          lines.push(...block(key, [label], b as JsonObject, rule.rules, pad));
    else if (rule && typeof rule === "object")
      for (const b of Array.isArray(value) ? value : [value])
        lines.push(...block(key, [], b as JsonObject, rule.rules, pad));
    else lines.push(`${pad}${key} = ${valueAsHcl(value, pad)}`);
  }
  return lines;
}

function block(type: string, labels: string[], body: JsonObject, rules: BlockRules, pad = ""): string[] {
  const head = [type, ...labels.map((l) => JSON.stringify(l))].join(" ");
  return [`${pad}${head} {`, ...bodyAsHcl(body, rules, pad + INDENT), `${pad}}`];
}

/** Blocks given by type, then name: `{ "aws_x": { "a": {...} } }` as `resource "aws_x" "a" {...}`. */
function twoLabelled(kind: string, byType: JsonObject, rules: BlockRules): string[][] {
  return Object.entries(byType).flatMap(([type, byName]) =>
    Object.entries(byName as JsonObject).flatMap(([name, body]) =>
      (Array.isArray(body) ? body : [body]).map((b) => block(kind, [type, name], b as JsonObject, rules)),
    ),
  );
}

function oneLabelled(kind: string, byName: JsonObject, rules: BlockRules): string[][] {
  return Object.entries(byName).flatMap(([name, body]) =>
    (Array.isArray(body) ? body : [body]).map((b) => block(kind, [name], b as JsonObject, rules)),
  );
}

function terraformBlock(body: JsonObject): string[] {
  const inner: string[] = [];
  for (const [key, value] of Object.entries(body)) {
    if (key === "//") continue;
    if (key === "backend")
      for (const [type, b] of Object.entries(value as JsonObject))
        inner.push(...block("backend", [type], b as JsonObject, {}, INDENT));
    else if (key === "required_providers")
      inner.push(...block("required_providers", [], value as JsonObject, {}, INDENT));
    else inner.push(`${INDENT}${key} = ${valueAsHcl(value, INDENT)}`);
  }
  return ["terraform {", ...inner, "}"];
}

/** A whole Terraform JSON configuration (cdk.tf.json) as HCL (cdk.tf). */
export function configAsHcl(config: JsonObject): string {
  const blocks: string[][] = [];
  for (const [key, value] of Object.entries(config)) {
    const body = value as JsonObject;
    if (key === "terraform") blocks.push(terraformBlock(body));
    else if (key === "provider") blocks.push(...oneLabelled("provider", body, {}));
    else if (key === "variable") blocks.push(...oneLabelled("variable", body, { type: "type", validation: "blocks" }));
    else if (key === "locals") blocks.push(block("locals", [], body, {}));
    else if (key === "output")
      blocks.push(...oneLabelled("output", body, { depends_on: "bare-list", precondition: "blocks" }));
    else if (key === "resource") blocks.push(...twoLabelled("resource", body, RESOURCE));
    else if (key === "data") blocks.push(...twoLabelled("data", body, RESOURCE));
    else if (key !== "//")
      throw new Error(`cdktf synth --hcl: no HCL rendering for the top-level "${key}" of the stack`);
  }
  return `${blocks.map((b) => b.join("\n")).join("\n\n")}\n`;
}
