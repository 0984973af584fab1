// cdktf.json context -> a complete, validated VmInstallConfig, by the one declaration (stack-settings.ts):
// every value checked as written, then the rules across settings, then the defaults. Every problem is
// reported at once, each naming its key path (e.g. "vms[1].installers.postgres.dbName").
import { configFields, resolveSettings, ruleProblems } from "../../shared/settings";
import { object, ValidationError, validate } from "../../shared/validate";
import { type CatalogEntry, INSTALLERS } from "../installers/catalog";
import { STACK_RULES, stackSettings } from "./stack-settings";
import type { VmInstallConfig } from "./types";

/** The cdktf.json context key that holds the whole configuration. */
export const CONTEXT_KEY = "vmInstall";

/**
 * Every string of the configuration that holds `${` or `%{`, by key path. Whatever lands in the
 * synthesized configuration (names, image, URLs, an event's text) is read by Terraform as a template,
 * so such a string would run as an expression at plan time (file("/etc/shadow"), a variable's value).
 * No setting needs either sequence: they are refused everywhere, whatever a setting's own rule allows.
 */
function templateSyntaxProblems(value: unknown, path = ""): string[] {
  if (typeof value === "string") {
    const found = /[$%]\{/.exec(value);
    if (!found) return [];
    return [
      `${path}: contains "${found[0]}", which Terraform reads as template syntax in the synthesized ` +
        "configuration; remove it (no setting needs it)",
    ];
  }
  if (Array.isArray(value)) return value.flatMap((item, i) => templateSyntaxProblems(item, `${path}[${i}]`));
  if (value && typeof value === "object") {
    return Object.entries(value).flatMap(([key, item]) => [
      ...templateSyntaxProblems(key, path ? `${path} key` : "key"),
      ...templateSyntaxProblems(item, path ? `${path}.${key}` : key),
    ]);
  }
  return [];
}

/** The JSON Schema of `context.vmInstall` (what an editor checks cdktf.json against). */
export function configSchema(catalog: readonly CatalogEntry[] = INSTALLERS) {
  return object(configFields(stackSettings(catalog))).schema;
}

/** Parses the `vmInstall` context object; throws ValidationError listing every problem. */
export function parseConfig(raw: unknown, catalog: readonly CatalogEntry[] = INSTALLERS): VmInstallConfig {
  const where = `cdktf.json context.${CONTEXT_KEY}`;
  if (raw === undefined) {
    throw new ValidationError(where, [
      `${CONTEXT_KEY}: missing; add a "${CONTEXT_KEY}" object under "context" in cdktf.json ` +
        "(see docs/configuration.md)",
    ]);
  }
  const settings = stackSettings(catalog);
  const templates = templateSyntaxProblems(raw);
  let given: Record<string, unknown>;
  try {
    given = validate(object<Record<string, unknown>>(configFields(settings)), raw, where);
  } catch (err) {
    if (err instanceof ValidationError && templates.length > 0)
      throw new ValidationError(where, [...templates, ...err.problems]);
    throw err;
  }
  const problems = [...templates, ...ruleProblems(settings, STACK_RULES, given)];
  if (problems.length > 0) throw new ValidationError(where, problems);
  return resolveSettings(settings, given) as unknown as VmInstallConfig;
}
