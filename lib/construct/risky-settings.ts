// Settings that are allowed but weaken what the project guarantees, named at synth as warnings (cdktf's
// Annotations, as AWS CDK's constructs do): the deploy goes on, and whoever reads the synth output
// learns what they accepted. Each warning says what to set instead.
import type { Construct } from "constructs";
import { Annotations } from "./cdktf";
import type { NubesConfig, VmConfig, VmInstallConfig } from "./config/types";
import { type CatalogEntry, INSTALLERS } from "./installers/catalog";
import { secretVariableNames } from "./installers/installer-event";

/** The warnings for one VM's settings; `nubes` for a VM this stack creates. */
export function riskySettings(
  vm: VmConfig,
  nubes?: NubesConfig,
  installers: readonly CatalogEntry[] = INSTALLERS,
): string[] {
  const warnings: string[] = [];
  const at = `vms[${vm.name}]`;
  if (vm.hostKeySha256 === undefined && !vm.strictHostKeys && vm.hostKeys !== "delivered") {
    warnings.push(
      `${at}: no host key pin (hostKeySha256) and strictHostKeys off: the first contact's key is trusted as it ` +
        "comes (then recorded and required); pin the key when the network to the VM is not trusted",
    );
  }
  for (const def of installers) {
    const settings = vm.installers[def.key];
    if (settings?.enabled)
      warnings.push(...(def.warnings?.(settings) ?? []).map((w) => `${at}.installers.${def.key}.${w}`));
  }
  for (const [key, settings] of Object.entries(vm.installers)) {
    if (!settings.enabled) continue;
    for (const [name, value] of Object.entries(settings)) {
      if (typeof value === "string" && /^http:\/\//i.test(value)) {
        warnings.push(
          `${at}.installers.${key}.${name}: ${value} is plain http: accepted only because the repository key's ` +
            "fingerprint is checked before apt trusts it; prefer https",
        );
      }
    }
  }
  if (vm.kind === "nubes" && nubes?.deleteMode === "state_only") {
    warnings.push(
      `nubes.deleteMode: "state_only": cdktf destroy forgets ${vm.name} and leaves it running (and billed); ` +
        'use "delete" or "suspend"',
    );
  }
  return warnings;
}

/** Adds each of `vm`'s warnings to `scope`; cdktf prints them when the app is synthesized. */
export function warnRiskySettings(scope: Construct, vm: VmConfig, nubes?: NubesConfig): void {
  for (const warning of riskySettings(vm, nubes)) Annotations.of(scope).addWarning(warning);
}

/**
 * What a sless stack's state holds in clear text, by VM: a sless_job keeps its inputs in state, the SSH
 * private key (env_vars.SSH_KEY, every job but the host-key probe) and each secret event field of its
 * installer (event_json), as the definitions declare them, and a Nubes VM's delivered host key (which any
 * target's state holds: docs/secrets.md). Provider tokens are provider configuration, never state. Empty
 * with the local target, which keeps the SSH key and the passwords out of state.
 */
export function secretsInState(config: VmInstallConfig, installers: readonly CatalogEntry[] = INSTALLERS): string[] {
  if (config.jobTarget !== "sless") return [];
  return config.vms.flatMap((vm) => {
    const enabled = installers.filter((def) => vm.installers[def.key]?.enabled);
    const fields = enabled.flatMap((def) =>
      Object.entries(secretVariableNames(vm, def)).map(
        ([field, variable]) => `${def.handler}'s ${field} (TF_VAR_${variable})`,
      ),
    );
    const held = [
      ...(enabled.length > 0 ? [`the SSH private key ${vm.privateKeyPath}`] : []),
      ...(vm.kind === "nubes" && vm.hostKeys === "delivered" ? ["the host private key delivered to it"] : []),
      ...fields,
    ];
    return held.length > 0 ? [`vms[${vm.name}]: ${held.join(", ")}`] : [];
  });
}

/** The warning for secrets in clear text in a state file beside the project (sless target, local backend). */
export function localStateSecretsWarning(
  config: VmInstallConfig,
  installers?: readonly CatalogEntry[],
): string | undefined {
  if (config.backend.type !== "local") return undefined;
  const held = secretsInState(config, installers);
  if (held.length === 0) return undefined;
  return (
    `backend "local" with jobTarget "sless": terraform.${config.stackName}.tfstate and its .backup, ` +
    `beside cdktf.json, will hold in clear text ${held.join("; ")}. ` +
    "bin/cdktf keeps them owner-only (0600), but whoever reads the file or a copy of it " +
    "(a backup, a shared folder, git) has those secrets; " +
    'keep the state in an encrypted, access-controlled backend: "backend": {"type": "s3", ...} (encrypted at rest) ' +
    'or {"type": "pg"} over TLS, or use "jobTarget": "local", which keeps the SSH key and the passwords out of state ' +
    "(docs/secrets.md)"
  );
}

/** Adds the stack's warning about secrets in a local state file, if any, to `scope`. */
export function warnLocalStateSecrets(
  scope: Construct,
  config: VmInstallConfig,
  installers?: readonly CatalogEntry[],
): void {
  const warning = localStateSecretsWarning(config, installers);
  if (warning) Annotations.of(scope).addWarning(warning);
}

/**
 * cdktf (after every synth) and Terraform report to HashiCorp's checkpoint service unless CHECKPOINT_DISABLE
 * is in cdktf's own environment, which the app can read but not change: bin/cdktf sets it, a plain
 * `npx cdktf` run has it only when the person exported it. No cdktf.json key turns either call off.
 */
export function warnCheckpoint(scope: Construct, env: NodeJS.ProcessEnv): void {
  if (env.CHECKPOINT_DISABLE) return;
  Annotations.of(scope).addWarning(
    "CHECKPOINT_DISABLE is not set: cdktf and Terraform report this run to HashiCorp's checkpoint service; " +
      "export CHECKPOINT_DISABLE=1 before running cdktf directly (npm run deploy and the other npm scripts set it)",
  );
}
