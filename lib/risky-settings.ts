// Settings that are allowed but weaken what the project guarantees, named at synth as warnings (cdktf's
// Annotations, as AWS CDK's constructs do): the deploy goes on, and whoever reads the synth output
// learns what they accepted. Each warning says what to set instead.
import type { Construct } from "constructs";
import { Annotations } from "./cdktf";
import type { NubesConfig, VmConfig } from "./config/types";

/** Networks that admit every address. */
const EVERYWHERE = ["0.0.0.0/0", "::/0"];

/** The warnings for one VM's settings; `nubes` for a VM this stack creates. */
export function riskySettings(vm: VmConfig, nubes?: NubesConfig): string[] {
  const warnings: string[] = [];
  const at = `vms[${vm.name}]`;
  if (vm.hostKeySha256 === undefined && !vm.strictHostKeys) {
    warnings.push(
      `${at}: no host key pin (hostKeySha256) and strictHostKeys off: the first contact's key is trusted as it comes (then recorded and required); pin the key when the network to the VM is not trusted`,
    );
  }
  const pg = vm.installers.postgres;
  if (pg?.enabled && pg.allowRemote) {
    const open = pg.allowedCidrs.filter((c) => EVERYWHERE.includes(c));
    if (open.length > 0) {
      warnings.push(
        `${at}.installers.postgres.allowedCidrs: ${open.join(", ")} admits every address to database ${pg.dbName} as ${pg.dbUser} (password only); list the networks your clients use`,
      );
    }
  }
  for (const [key, settings] of Object.entries(vm.installers)) {
    if (!settings.enabled) continue;
    for (const [name, value] of Object.entries(settings)) {
      if (typeof value === "string" && /^http:\/\//i.test(value)) {
        warnings.push(
          `${at}.installers.${key}.${name}: ${value} is plain http: accepted only because the repository key's fingerprint is checked before apt trusts it; prefer https`,
        );
      }
    }
  }
  if (vm.kind === "nubes" && nubes?.deleteMode === "state_only") {
    warnings.push(`nubes.deleteMode: "state_only": cdktf destroy forgets ${vm.name} and leaves it running (and billed); use "delete" or "suspend"`);
  }
  return warnings;
}

/** Adds each of `vm`'s warnings to `scope`; cdktf prints them when the app is synthesized. */
export function warnRiskySettings(scope: Construct, vm: VmConfig, nubes?: NubesConfig): void {
  for (const warning of riskySettings(vm, nubes)) Annotations.of(scope).addWarning(warning);
}
