// Everything under cdktf.json `context.vmInstall`, declared once: the top level, then its groups. The
// types (types.ts), the defaults and the check (parse.ts), docs/configuration.md's table and the
// JSON Schema (lib/operator/reference) all come from this declaration and the rules beside it.
import { group, type SettingsRule, setting } from "../../shared/settings";
import { integer, oneOf } from "../../shared/validate";
import { type CatalogEntry, INSTALLERS } from "../installers/catalog";
import { backendSetting } from "./backend";
import { installersRule } from "./installer-settings";
import { nubesSetting, slessSetting } from "./provider-settings";
import { ROLLOUT_RULES, rolloutSetting } from "./rollout";
import { name } from "./value-rules";
import { vmRules, vmSettings } from "./vm-settings";

/** Far beyond what a platform's job quota takes: a bigger value is likelier a typo than a plan. */
const MAX_PARALLELISM = 256;

/** The stack's settings, the VMs' installers from `catalog`. */
export function stackSettings(catalog: readonly CatalogEntry[] = INSTALLERS) {
  return {
    stackName: setting(name, { default: "vm-install", doc: "Terraform stack name (folder under cdktf.out/stacks)." }),
    runId: setting(integer(1, 1_000_000_000), {
      default: 1,
      doc: "run_id of every job: raise it to rerun every installer.",
    }),
    parallelism: setting(integer(1, MAX_PARALLELISM), {
      default: 10,
      doc:
        "At most this many jobs (and other resources) at once across the stack: Terraform's -parallelism " +
        "(its default), passed to every deploy, destroy and diff bin/cdktf runs (docs/parallelism.md).",
    }),
    jobTarget: setting(oneOf(["sless", "local"] as const), {
      default: "sless",
      doc:
        'Where the jobs run: "sless" (sless_job on the platform) or "local" (terraform_data + local-exec running ' +
        "the same bundle through the job runner on the deploying machine; docs/local-target.md).",
    }),
    backend: backendSetting,
    nubes: nubesSetting,
    sless: slessSetting,
    installers: setting(installersRule(catalog), {
      mergedInto: "vms[].installers",
      defaultDoc: "none",
      doc: "Installers for every VM, each VM's own `installers` merged over them key by key (the installers' tables).",
    }),
    vms: group(vmSettings(catalog), {
      list: true,
      minItems: 1,
      required: true,
      rules: vmRules(catalog),
      doc: "The VMs, each with its own installers. At least one.",
    }),
    rollout: rolloutSetting,
  };
}

type WrittenVm = { name: string; kind?: string };

/** The rules across the top level's settings, in the order their problems are reported. */
export const STACK_RULES: readonly SettingsRule[] = [
  {
    doc: 'a VM of kind "nubes" (the default) needs `nubes`',
    check: (given: { nubes?: unknown; vms: WrittenVm[] }) =>
      !given.nubes && given.vms.some((vm) => (vm.kind ?? "nubes") === "nubes")
        ? [
            'nubes: required when a VM is of kind "nubes" (the default); give nubes.vdcUid and nubes.nsxtUid, ' +
              'or make every VM kind "existing"',
          ]
        : [],
  },
  {
    doc: "VM names are unique",
    check: (given: { vms: WrittenVm[] }) => {
      const first = new Map<string, number>();
      return given.vms.flatMap((vm, i) => {
        const seen = first.get(vm.name);
        if (seen === undefined) first.set(vm.name, i);
        return seen === undefined
          ? []
          : [`vms[${i}].name: "${vm.name}" is already used by vms[${seen}]; VM names must be unique`];
      });
    },
  },
  ...ROLLOUT_RULES,
];
