// docs/configuration.md's table, generated from the stack's declaration (lib/construct/config/
// stack-settings.ts): every key with its type, default and doc, then the rules across settings.
import { STACK_RULES, stackSettings } from "../../construct/config/stack-settings";
import { type CatalogEntry, INSTALLERS } from "../../construct/installers/catalog";
import type { Setting, Settings, SettingsRule } from "../../shared/settings";
import { cell, defaultWords, row, typeWords } from "./settings-reference";

/** Every key path of `settings` as docs/configuration.md names it: "vms[].sshRetry.attempts". */
export function keyPaths(settings: Settings, prefix = ""): [string, Setting][] {
  return Object.entries(settings).flatMap(([key, s]): [string, Setting][] => {
    const path = `${prefix}${key}${s.list ? "[]" : ""}`;
    return [[path, s], ...(s.settings ? keyPaths(s.settings, `${path}.`) : [])];
  });
}

function groupWords(s: Setting): string {
  if (s.list) return `list${s.rule.schema.minItems ? ` (at least ${s.rule.schema.minItems})` : ""} of objects`;
  if (s.settings) return "object";
  if (s.mergedInto || s.rule.schema.type === "object") return `object: installer key -> ${valueWords(s)}`;
  return typeWords(s.rule.schema);
}

/** What an object keyed by installer holds: one kind of value (vms[].runIds), or each its settings. */
function valueWords(s: Setting): string {
  // Each key's own description names its key, so the kind of value is compared without it.
  const values = Object.values(s.rule.schema.properties ?? {}).map(({ description, ...kind }) => kind);
  const one = values[0];
  const alike = one && values.every((v) => JSON.stringify(v) === JSON.stringify(one));
  return !s.mergedInto && alike && one.type !== "object" ? typeWords(one) : "its settings";
}

/** Every rule across settings, each with the key path of the group it belongs to. */
function rulesOf(settings: Settings, rules: readonly SettingsRule[], where: string): string[] {
  const own = rules.map((rule) => `- ${where}: ${rule.doc}.`);
  const inner = keyPaths(settings).flatMap(([path, s]) => (s.rules ?? []).map((rule) => `- \`${path}\`: ${rule.doc}.`));
  return [...own, ...inner];
}

/** docs/configuration.md's section between the configuration markers. */
export function configurationReference(catalog: readonly CatalogEntry[] = INSTALLERS): string {
  const settings = stackSettings(catalog);
  const rows = keyPaths(settings).map(([path, s]) => {
    const dflt = s.required ? "**required**" : defaultWords(s);
    return row(`\`${path}\``, cell(groupWords(s)), cell(dflt), cell(s.doc));
  });
  return [
    "| key | type | default | what it does |",
    "| --- | --- | --- | --- |",
    ...rows,
    "",
    "Rules across settings, checked at synth once every value passed its own rule:",
    "",
    ...rulesOf(settings, STACK_RULES, "the top level"),
  ].join("\n");
}
