// What an installer is, as both sides see it: its cdktf.json key, its handler folder, its settings
// (lib/shared/settings.ts) and what the stack needs beyond them (secrets, checks across settings). Each
// installer declares one of these in handlers/<handler>/definition.ts; lib/construct/installers/catalog.ts lists
// them in run order.
import { type Settings, setting } from "./settings";
import { boolean, integer } from "./validate";

export interface InstallerDefinition<S extends Settings = Settings> {
  /** Key under `installers` in cdktf.json, e.g. "packages". */
  readonly key: string;
  /** Folder under handlers/ holding handler.ts; jobs are named "<vm>-<handler>". */
  readonly handler: string;
  /** One line: what it does on the VM (docs/<installer>.md). */
  readonly doc: string;
  /** Whether it runs when cdktf.json does not say. */
  readonly enabledByDefault: boolean;
  /** The job's wait_timeout_sec when cdktf.json does not say. */
  readonly waitTimeoutSec: number;
  /** Its own settings (`enabled` and `waitTimeoutSec` are added for every installer). */
  readonly settings: S;
  /** Secret event fields, each set from the Terraform variable a setting names: event field -> setting key. */
  readonly secrets?: Readonly<Record<string, keyof S & string>>;
  /**
   * Secret event fields the settings call for beyond `secrets` (a given certificate's key): event field ->
   * the Terraform variable that holds it, as `secrets` resolves to.
   */
  readonly conditionalSecrets?: (config: Record<string, unknown>) => Record<string, string>;
  /**
   * Secret event fields the stack's CA file holds (made by the app at synth, lib/construct/postgres-ca.ts), which
   * the settings call for: event field -> its property in the file. Read from the file, never a variable.
   */
  readonly stackCaSecrets?: (config: Record<string, unknown>) => Record<string, "cert" | "key">;
  /** Checks across settings at synth, for an enabled installer: each problem as "<key>: what to do". */
  readonly check?: (config: Record<string, unknown>) => string[];
  /** Allowed but risky settings, warned about at synth for an enabled installer: "<key>: what to set instead". */
  readonly warnings?: (config: Record<string, unknown>) => string[];
  /** Its own result fields: name -> one line (docs/<installer>.md). */
  readonly result: Readonly<Record<string, string>>;
}

/** Identity helper that keeps `definition`'s literal types (the event type derives from them). */
export function defineInstallerDefinition<const S extends Settings>(
  definition: InstallerDefinition<S>,
): InstallerDefinition<S> {
  return definition;
}

/** The settings every installer has, with its own defaults. */
export function commonSettings(
  definition: Pick<InstallerDefinition, "handler" | "enabledByDefault" | "waitTimeoutSec">,
) {
  return {
    enabled: setting(boolean(), { doc: `Run ${definition.handler}.`, default: definition.enabledByDefault }),
    waitTimeoutSec: setting(integer(30, 86400), {
      doc: "The job's wait_timeout_sec: how long Terraform waits for it.",
      default: definition.waitTimeoutSec,
    }),
  };
}

/** Every cdktf.json setting of an installer: the common ones, then its own. */
export function allSettings(definition: InstallerDefinition): Settings {
  return { ...commonSettings(definition), ...definition.settings };
}

/** The most a `cache_valid_sec` may say: beyond a month, lists are not "fresh" in any useful sense. */
const MAX_CACHE_VALID_SEC = 30 * 24 * 3600;

/** How apt's package lists are refreshed: every installer that runs apt-get takes these. */
export const APT_LIST_SETTINGS = {
  update: setting(boolean(), {
    event: "update",
    default: true,
    doc: "Run apt-get update before installing (only when something is missing).",
  }),
  cacheValidSec: setting(integer(0, MAX_CACHE_VALID_SEC), {
    event: "cache_valid_sec",
    defaultDoc: "none: always update (900 for an installer after the first on a VM: the one before just updated)",
    doc: "Skip that update when apt's lists are younger than this many seconds.",
  }),
} as const;
