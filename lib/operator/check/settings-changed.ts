// Which installers' settings changed in cdktf.json since the last deploy: the event each job was deployed
// with (the state's: a local job's triggers_replace.event, a sless_job's event_json) against the one cdktf.json
// gives now. A changed event reruns its job on a plain deploy; drift without one is put back only by a rerun,
// so the check's closing line names the command by this. Secret fields are left out of the comparison.
import type { VmInstallConfig } from "../../construct/config/types";
import { type CatalogEntry, INSTALLERS } from "../../construct/installers/catalog";
import { installerEvent, secretVariableNames } from "../../construct/installers/installer-event";
import { installerJobId } from "../../construct/resource-names";

/** `terraform show -json`'s resources, as far as this reads them. */
interface ShownState {
  values?: { root_module?: { resources?: { address?: string; values?: Record<string, unknown> }[] } };
}

/** A JSON value with its object keys sorted at every depth, for a comparison that ignores key order. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === "object")
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  return value;
}

/** terraform_data's triggers_replace: a dynamic value, plain in `terraform show -json`, {value, type} in a file. */
function triggers(value: unknown): Record<string, unknown> | undefined {
  if (!value || typeof value !== "object") return undefined;
  const v = value as Record<string, unknown>;
  return "value" in v && "type" in v ? (v.value as Record<string, unknown>) : v;
}

function withoutSecrets(event: Record<string, unknown>, secrets: readonly string[]): string {
  const copy = { ...event };
  for (const field of secrets) delete copy[field];
  return JSON.stringify(canonical(copy));
}

/**
 * The "<vm> <installer>" pairs whose deployed event is not cdktf.json's now; undefined when the state could
 * not be read (the check then names both commands).
 */
export function settingsChanged(
  config: VmInstallConfig,
  shown: unknown,
  catalog: readonly CatalogEntry[] = INSTALLERS,
): Set<string> | undefined {
  const resources = (shown as ShownState | undefined)?.values?.root_module?.resources;
  if (!resources) return undefined;
  const byAddress = new Map(resources.map((r) => [r.address, r.values ?? {}]));
  const changed = new Set<string>();
  for (const vm of config.vms) {
    const enabled = catalog.filter((def) => vm.installers[def.key].enabled);
    enabled.forEach((def, i) => {
      const id = installerJobId(vm.name, def.key);
      const deployed =
        config.jobTarget === "sless"
          ? byAddress.get(`sless_job.${id}`)?.event_json
          : triggers(byAddress.get(`terraform_data.${id}`)?.triggers_replace)?.event;
      if (typeof deployed !== "string") return;
      const secrets = Object.keys(secretVariableNames(vm, def));
      let before: string;
      try {
        before = withoutSecrets(JSON.parse(deployed), secrets);
      } catch {
        return;
      }
      if (before !== withoutSecrets(installerEvent(vm, def, i > 0), secrets)) changed.add(`${vm.name} ${def.handler}`);
    });
  }
  return changed;
}
