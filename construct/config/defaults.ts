// The stack's own defaults in one place; types.ts documents them and parse.ts fills them in. Installer
// defaults are declared with their settings (handlers/<handler>/definition.ts).

export const DEFAULT_STACK_NAME = "vm-install";

export const NUBES_DEFAULTS = {
  providerSource: "terra.k8c.ru/nubes/nubes",
  providerVersion: "2.0.0",
  vappName: "vm-install",
  deleteMode: "delete",
  resumeIfExists: true,
} as const;

export const SLESS_DEFAULTS = {
  endpoint: "https://sless.kube5s.ru",
  providerSource: "sless.kube5s.ru/sless/sless",
  providerVersion: "",
  runtime: "nodejs20",
} as const;

export const DEFAULT_JOB_TARGET = "sless";
/** Terraform's own default -parallelism: the same fleet behaviour as a bare terraform apply. */
export const DEFAULT_PARALLELISM = 10;
/** Far beyond what a platform's job quota takes: a bigger value is likelier a typo than a plan. */
export const MAX_PARALLELISM = 256;

export const VM_DEFAULTS = {
  kind: "nubes",
  cpu: 2,
  ram: 2,
  disk: 20,
  image: "Ubuntu_22-20G",
  user: "ubuntu",
  publicKeyPath: "vm_key.pub",
  privateKeyPath: "vm_key",
  accessPorts: ["22"],
  sshPort: 22,
  addressKey: "externalConnect",
  zabbix: false,
  strictHostKeys: false,
} as const;
