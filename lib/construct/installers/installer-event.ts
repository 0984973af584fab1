// What one installer's job is asked to do on one VM: its event (without secrets) and which event fields
// are secrets, from which variable. Written once for the stack that deploys the jobs (vm-installation.ts)
// and for `npm run check`, which sends the same event with `check: true` from this machine.
import { toEvent } from "../../shared/settings";
import { SSH_RETRY_SETTINGS } from "../../shared/ssh-retry";
import type { VmConfig } from "../config/types";
import type { CatalogEntry } from "./catalog";

/**
 * The installer before this one on the VM has just refreshed apt's lists (when it had anything to
 * install): a later installer takes lists younger than this as fresh instead of updating them again
 * (2-3 s each). A repository an installer adds is read regardless (the handlers force that update).
 */
const FRESH_LISTS_SEC = 900;

/**
 * What a job's wait_timeout_sec keeps back from the handler's own budget (time_budget_sec): starting the
 * job, loading the bundle, reporting the result. Every inner limit of the handler is cut to the rest.
 */
export const JOB_MARGIN_SEC = 15;

/** The VM's SSH retry settings as the handlers' `ssh` event key, when it has any. */
export function sshEvent(vm: VmConfig): { ssh?: Record<string, unknown> } {
  return vm.sshRetry ? { ssh: toEvent(SSH_RETRY_SETTINGS, vm.sshRetry) } : {};
}

/** The event of `def`'s job on `vm`; `afterAnother`: an enabled installer runs before it on the VM. */
export function installerEvent(vm: VmConfig, def: CatalogEntry, afterAnother: boolean): Record<string, unknown> {
  const settings = vm.installers[def.key];
  return {
    ...(afterAnother ? { cache_valid_sec: FRESH_LISTS_SEC } : {}),
    ...toEvent(def.settings, settings),
    ...sshEvent(vm),
    ...(vm.aptProxy ? { apt_proxy: vm.aptProxy } : {}),
    time_budget_sec: settings.waitTimeoutSec - JOB_MARGIN_SEC,
  };
}

/** The event's secret fields, each with the name of the variable that holds it (set as TF_VAR_<name>). */
export function secretVariableNames(vm: VmConfig, def: CatalogEntry): Record<string, string> {
  const settings = vm.installers[def.key] as unknown as Record<string, unknown>;
  const named = Object.entries(def.secrets ?? {}).map(([field, key]) => [field, String(settings[key])]);
  return { ...Object.fromEntries(named), ...(settings.enabled ? def.conditionalSecrets?.(settings) : {}) };
}

/** The event's secret fields read from the stack's CA file, each with its property there (none when disabled). */
export function stackCaFields(vm: VmConfig, def: CatalogEntry): Record<string, "cert" | "key"> {
  const settings = vm.installers[def.key] as unknown as Record<string, unknown>;
  return settings.enabled ? (def.stackCaSecrets?.(settings) ?? {}) : {};
}
