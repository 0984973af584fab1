// `vms[]`: one VM's settings and the rules across them, declared once; types, defaults, the check at
// synth, docs/configuration.md's table and the JSON Schema all come from here.
import { APT_PROXY_SETTING } from "../../shared/apt-proxy";
import { hostAddress, hostKeySha256, unixUser } from "../../shared/names";
import { group, type SettingsRule, setting } from "../../shared/settings";
import { SSH_RETRY_SETTINGS } from "../../shared/ssh-retry";
import { boolean, integer, list, oneOf, string } from "../../shared/validate";
import type { CatalogEntry } from "../installers/catalog";
import { installerProblems, installersRule, mergeInstallers, type WrittenInstallers } from "./installer-settings";
import { DEFAULT_VAPP_PREFIX } from "./provider-settings";
import { vmRolloutSettings } from "./rollout";
import { NAME, nonEmpty } from "./value-rules";

const port = string({
  pattern: /^[0-9]{1,5}$/,
  allowed: 'a port number as a string, e.g. "22"',
  check: (v) => (Number(v) >= 1 && Number(v) <= 65535 ? undefined : "is not a port from 1 to 65535"),
});
// `${` and `%{` are refused in every string (templateSyntaxProblems), paths included.
const filePath = string({ pattern: /^[^\0\n"]+$/, allowed: "a file path (no quotes or newlines)" });
const vmName = string({
  pattern: NAME,
  allowed: "a lowercase letter, then lowercase letters, digits or -, at most 31",
});

type HostKeysMode = "delivered" | "first-contact";
type Written = Record<string, unknown> & { kind?: string; hostKeySha256?: string };

/** A pinned VM keeps its pin: the image's own key, which it presents from the first contact on. */
function defaultHostKeys(vm: Written): HostKeysMode {
  return vm.kind === "existing" || vm.hostKeySha256 !== undefined ? "first-contact" : "delivered";
}

/** One VM's own settings; `vmSettings` adds its installers. */
const VM_SETTINGS = {
  name: setting(vmName, {
    required: true,
    doc: "VM name: resource, job and output names derive from it.",
  }),
  kind: setting(oneOf(["nubes", "existing"] as const), {
    default: "nubes",
    doc:
      '"nubes": a vApp and VM are created; "existing": a host that is already there, reached at `address` ' +
      "(no Nubes resources; the sizing keys do not apply).",
  }),
  vappName: setting(nonEmpty, {
    defaultDoc: '"<nubes.vappName>-<name>"',
    doc: "This VM's vApp name.",
    resolve: (value: string | undefined, vm, root): string => {
      const prefix = (root.nubes as { vappName?: string } | undefined)?.vappName ?? DEFAULT_VAPP_PREFIX;
      return value ?? `${prefix}-${vm.name}`;
    },
  }),
  cpu: setting(integer(1, 64), { default: 2, doc: "vCPUs." }),
  ram: setting(integer(1, 512), { default: 2, doc: "RAM in GB." }),
  disk: setting(integer(10, 4096), { default: 20, doc: "Disk in GB." }),
  image: setting(nonEmpty, { default: "Ubuntu_22-20G", doc: "Nubes image name." }),
  user: setting(unixUser, { default: "ubuntu", doc: "Login user created on the VM and used by the jobs over SSH." }),
  publicKeyPath: setting(filePath, {
    default: "vm_key.pub",
    doc:
      "Public key file, relative to the project, read by Terraform at apply time; checked at synth (the pair " +
      "of privateKeyPath).",
  }),
  privateKeyPath: setting(filePath, {
    default: "vm_key",
    doc:
      "Private key file, relative to the project, read by Terraform's file() at apply time (never inlined); checked " +
      "at synth (exists, owner-only, an unencrypted key) when the VM runs a job.",
  }),
  accessPorts: setting(list(port, { unique: true }), {
    default: ["22"],
    doc: "Ports opened on the VM (access_port_list).",
  }),
  sshPort: setting(integer(1, 65535), { default: 22, doc: "SSH port the jobs connect to." }),
  addressKey: setting(oneOf(["externalConnect", "internalConnect"] as const), {
    default: "externalConnect",
    doc:
      "Key of state_out_flat holding the address the jobs reach: externalConnect (public IP) or " +
      "internalConnect (once the cluster and the VDC are peered).",
  }),
  address: setting(hostAddress, {
    defaultDoc: 'none; required for kind "existing"',
    doc: "A fixed address (IP or host name) for the jobs instead of state_out_flat.",
  }),
  hostKeySha256: setting(hostKeySha256, {
    defaultDoc: "none",
    doc:
      'Pin the VM\'s SSH host key ("SHA256:..." as ssh-keygen -lf prints it) with hostKeys "first-contact": ' +
      "every job requires it from the first contact on; a mismatch fails every job.",
  }),
  strictHostKeys: setting(boolean(), {
    default: false,
    doc: 'Refuse a "first-contact" VM without hostKeySha256 instead of trusting its first contact.',
  }),
  hostKeys: setting(oneOf(["delivered", "first-contact"] as const), {
    defaultDoc: '"delivered" for kind "nubes" without hostKeySha256; "first-contact" for a pinned VM and "existing"',
    doc:
      '"delivered": the stack generates the VM\'s ed25519 host key, delivers it through cloud_init, and every job ' +
      'requires it from the first byte; "first-contact": the key the VM presents at first contact is recorded ' +
      "(or hostKeySha256 pins it), for images without cloud-init (docs/host-keys.md).",
    resolve: (value: HostKeysMode | undefined, vm: Written): HostKeysMode => value ?? defaultHostKeys(vm),
  }),
  cloudInit: setting(filePath, {
    defaultDoc: "none",
    doc:
      "A #cloud-config file (relative to the project) merged with the stack's part into the VM's cloud_init; " +
      "checked at synth (docs/cloud-init.md).",
  }),
  zabbix: setting(boolean(), { default: false, doc: "need_add_zabbix_template." }),
  aptProxy: APT_PROXY_SETTING,
  onDestroy: setting(oneOf(["keep", "uninstall"] as const), {
    default: "keep",
    doc:
      '"uninstall": `cdktf destroy` runs each installer with state "absent" on this host first, taking back what ' +
      'vm-install installed (kind "existing", jobTarget "local", installers with `state` only; with postgres, ' +
      "the destroy needs TF_VAR_<passwordVariable> set, as a deploy does; docs/absent.md); " +
      '"keep" leaves it all on a host that lives on.',
  }),
  sshRetry: group(SSH_RETRY_SETTINGS, {
    asGiven: true,
    defaultDoc: "the handler's, key by key",
    doc: "How the jobs retry an SSH connection that can heal (refused, unreachable, timeout): the event's `ssh`.",
  }),
} as const;

/** The settings of one VM, its installers from `catalog`. */
export function vmSettings(catalog: readonly CatalogEntry[]) {
  return {
    ...VM_SETTINGS,
    ...vmRolloutSettings(catalog.map((def) => def.key)),
    installers: setting(installersRule(catalog), {
      default: {},
      doc: "This VM's installers: the top-level `installers` merged with these, key by key.",
      resolve: (value: WrittenInstallers | undefined, _vm, root) =>
        mergeInstallers(catalog, root.installers as WrittenInstallers | undefined, value),
    }),
  };
}

/** Keys that describe a Nubes VM to create; meaningless for a host that already exists. */
const NUBES_ONLY_KEYS = [
  "vappName",
  "cpu",
  "ram",
  "disk",
  "image",
  "publicKeyPath",
  "accessPorts",
  "addressKey",
  "zabbix",
  "cloudInit",
] as const;

/** The rules across one VM's settings, in the order their problems are reported. */
export function vmRules(catalog: readonly CatalogEntry[]): readonly SettingsRule[] {
  return [
    {
      doc: 'kind "existing" needs `address`',
      check: (vm: Written) =>
        vm.kind === "existing" && vm.address === undefined
          ? ['address: required for kind "existing": the host\'s IP address or name']
          : [],
    },
    {
      doc: `kind "existing" refuses the keys of a VM this stack creates: ${NUBES_ONLY_KEYS.join(", ")}`,
      check: (vm: Written) =>
        vm.kind !== "existing"
          ? []
          : NUBES_ONLY_KEYS.filter((key) => vm[key] !== undefined).map(
              (key) => `${key}: only for kind "nubes" (a VM this stack creates); remove it from an existing host`,
            ),
    },
    {
      doc: 'hostKeys "delivered" is for kind "nubes" only, and takes no hostKeySha256',
      check: (vm: Written) => deliveredProblems(vm),
    },
    {
      doc: 'strictHostKeys needs hostKeySha256 on a "first-contact" VM',
      check: (vm: Written, _root: unknown, path: string) =>
        vm.strictHostKeys && vm.hostKeySha256 === undefined && (vm.hostKeys ?? defaultHostKeys(vm)) === "first-contact"
          ? [
              `strictHostKeys: true refuses a first contact without a pin; set ${path}.hostKeySha256 to the VM's key ` +
                "(ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub on its console), or leave strictHostKeys off " +
                "to record the key seen at first contact",
            ]
          : [],
    },
    {
      doc: 'onDestroy "uninstall" is for kind "existing" on jobTarget "local", with installers that have `state`',
      check: (vm: Written, root: Written) => uninstallProblems(catalog, vm, root),
    },
    {
      doc: "each enabled installer's own checks across its settings (the installers' tables)",
      check: (vm: Written, root: Written) =>
        installerProblems(
          catalog,
          root.installers as WrittenInstallers | undefined,
          vm.installers as WrittenInstallers | undefined,
        ),
    },
  ];
}

/** A delivered key is the stack's own, for a VM it creates: no host that exists already, no pin beside it. */
function deliveredProblems(vm: Written): string[] {
  if ((vm.hostKeys ?? defaultHostKeys(vm)) !== "delivered") return [];
  if (vm.kind === "existing") {
    return [
      'hostKeys: "delivered" is only for kind "nubes": the stack delivers a host key through cloud-init to a VM ' +
        'it creates; an existing host keeps its own key ("first-contact", the default, or pin it with hostKeySha256)',
    ];
  }
  if (vm.hostKeySha256 !== undefined) {
    return [
      'hostKeySha256: with hostKeys "delivered" the VM presents the host key the stack generates and delivers, ' +
        "so no other key can be pinned; remove hostKeySha256, or hostKeys (a pinned VM keeps the image's own key)",
    ];
  }
  return [];
}

/**
 * onDestroy "uninstall": a Nubes VM goes with the stack (nothing to take back), the sless target runs jobs
 * only when created (a destroy-time step would run here, without the VM's key, which is a sless secret
 * there), and an installer without `state` has no way back. A secret is no reason to refuse: the absent
 * run names its TF_VAR_ variable (--secret-env), read from the destroying shell, as the install's does.
 */
function uninstallProblems(catalog: readonly CatalogEntry[], vm: Written, root: Written): string[] {
  if (vm.onDestroy !== "uninstall") return [];
  if (vm.kind !== "existing")
    return ['onDestroy: "uninstall" is for kind "existing": a VM this stack creates is destroyed with it'];
  if ((root.jobTarget ?? "sless") !== "local")
    return [
      'onDestroy: "uninstall" needs jobTarget "local": sless jobs run only when created, so a destroy cannot ' +
        'run one; uninstall with state "absent" on a deploy instead',
    ];
  const merged = mergeInstallers(catalog, root.installers as WrittenInstallers, vm.installers as WrittenInstallers);
  return catalog
    .filter((def) => merged[def.key]?.enabled && !("state" in def.settings))
    .map(
      (def) =>
        `onDestroy: "uninstall": ${def.handler} cannot be uninstalled by a destroy (it has no state setting); ` +
        `disable it on this VM or keep onDestroy "keep"`,
    );
}
