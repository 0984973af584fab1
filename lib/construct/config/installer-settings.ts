// `installers`, at the top level and in each VM: every installer's settings checked as written at both
// levels, then merged key by key (VM over top level over defaults), so a mistake is reported where it
// was written; the merged settings are what the VM's jobs get.

import { allSettings, type commonSettings, type InstallerDefinition } from "../../shared/installer-definition";
import { type ConfigOf, configDefaults, configFields, type Settings } from "../../shared/settings";
import { type Field, type FieldsOf, object, optional, type Validator } from "../../shared/validate";
import type { BUILT_IN_INSTALLERS, CatalogEntry } from "../installers/catalog";

/** What every installer's settings hold besides its own (`enabled`, `waitTimeoutSec`). */
export type InstallerCommonConfig = ConfigOf<ReturnType<typeof commonSettings>>;
/** An installer's resolved settings: the common ones and its own. */
export type InstallerConfig<S extends Settings = Settings> = InstallerCommonConfig & ConfigOf<S>;
type ConfigOfDefinition<D> = D extends InstallerDefinition<infer S> ? InstallerConfig<S> : never;
type BuiltIn = typeof BUILT_IN_INSTALLERS;

/** Each installer's settings by its key: the built-in ones typed, any other (a plugged-in installer) generic. */
export type InstallersConfig = { readonly [K in keyof BuiltIn]: ConfigOfDefinition<BuiltIn[K]> } & {
  readonly [key: string]: InstallerCommonConfig & Record<string, unknown>;
};

/** `installers` as written: each installer's settings, none required. */
export type WrittenInstallers = Record<string, Record<string, unknown> | undefined>;

/** The rule of an `installers` object: one optional group per installer of the catalog. */
export function installersRule(catalog: readonly CatalogEntry[]): Validator<WrittenInstallers> {
  const fields: Record<string, Field<unknown>> = {};
  for (const def of catalog) fields[def.key] = optional(object(configFields(allSettings(def))), undefined, def.doc);
  return object<WrittenInstallers>(fields as FieldsOf<WrittenInstallers>);
}

/** One installer's settings for a VM: its defaults, the top level's, the VM's own. */
function merged(def: CatalogEntry, top: WrittenInstallers = {}, own: WrittenInstallers = {}): Record<string, unknown> {
  return { ...configDefaults(allSettings(def)), ...top[def.key], ...own[def.key] };
}

/** A VM's installers resolved: every installer of the catalog, merged. */
export function mergeInstallers(
  catalog: readonly CatalogEntry[],
  top: WrittenInstallers | undefined,
  own: WrittenInstallers | undefined,
): InstallersConfig {
  return Object.fromEntries(catalog.map((def) => [def.key, merged(def, top, own)])) as InstallersConfig;
}

/** Each enabled installer's own checks across its settings, on the merged settings, as "installers.<key>...". */
export function installerProblems(
  catalog: readonly CatalogEntry[],
  top: WrittenInstallers | undefined,
  own: WrittenInstallers | undefined,
): string[] {
  return catalog.flatMap((def) => {
    const settings = merged(def, top, own);
    if (!settings.enabled) return [];
    return (def.check?.(settings) ?? []).map((problem) => `installers.${def.key}.${problem}`);
  });
}
