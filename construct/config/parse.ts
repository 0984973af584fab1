// cdktf.json context -> a complete, validated VmInstallConfig. Every problem is reported at once, each
// naming its key path (e.g. "vms[1].installers.postgres.dbName") and what is allowed.
import { allSettings } from "../../shared/installer-definition";
import { hostAddress, hostKeySha256, unixUser } from "../../shared/names";
import { configDefaults, configFields } from "../../shared/settings";
import { SSH_RETRY_SETTINGS } from "../../shared/ssh-retry";
import {
  boolean,
  type Field,
  type FieldsOf,
  integer,
  list,
  object,
  oneOf,
  optional,
  required,
  string,
  ValidationError,
  type Validator,
  validate,
} from "../../shared/validate";
import { type CatalogEntry, INSTALLERS } from "../installers/catalog";
import { type BackendConfig, backendSetting, DEFAULT_BACKEND } from "./backend";
import {
  DEFAULT_JOB_TARGET,
  DEFAULT_PARALLELISM,
  DEFAULT_STACK_NAME,
  MAX_PARALLELISM,
  NUBES_DEFAULTS,
  SLESS_DEFAULTS,
  VM_DEFAULTS,
} from "./defaults";
import { type RolloutConfig, resolveRollout, rolloutSetting, vmRolloutFields } from "./rollout";
import type {
  HostKeysMode,
  InstallersConfig,
  NubesConfig,
  SlessConfig,
  SshRetryConfig,
  VmConfig,
  VmInstallConfig,
} from "./types";

/** The cdktf.json context key that holds the whole configuration. */
export const CONTEXT_KEY = "vmInstall";

const NAME = /^[a-z][a-z0-9-]{0,30}$/;
const nonEmpty = string({ pattern: /\S/, allowed: "a non-empty string" });
const url = string({ pattern: /^https?:\/\/[^\s"'`$\\]+$/, allowed: "an http(s) URL" });
const port = string({
  pattern: /^[0-9]{1,5}$/,
  allowed: 'a port number as a string, e.g. "22"',
  check: (v) => (Number(v) >= 1 && Number(v) <= 65535 ? undefined : "is not a port from 1 to 65535"),
});
// `${` and `%{` are refused in every string (templateSyntaxProblems), paths included.
const filePath = string({ pattern: /^[^\0\n"]+$/, allowed: "a file path (no quotes or newlines)" });

// Installer settings are validated as given (no defaults) at both levels, then merged key by key:
// VM over top level over defaults. That way a mistake is reported where it was written.
type RawInstallers = Record<string, Record<string, unknown> | undefined>;
function installersFields(catalog: readonly CatalogEntry[]): Validator<RawInstallers> {
  const fields: Record<string, Field<unknown>> = {};
  for (const def of catalog) fields[def.key] = optional(object(configFields(allSettings(def))), undefined, def.doc);
  return object<RawInstallers>(fields as FieldsOf<RawInstallers>);
}

type RawVm = Omit<Partial<VmConfig>, "installers" | "name"> & { name: string; installers?: RawInstallers };
const vmFields = (installers: Validator<RawInstallers>, catalog: readonly CatalogEntry[]) =>
  object<RawVm>({
    name: required(
      string({ pattern: NAME, allowed: "a lowercase letter, then lowercase letters, digits or -, at most 31" }),
    ),
    kind: optional(oneOf(["nubes", "existing"] as const)),
    vappName: optional(nonEmpty),
    cpu: optional(integer(1, 64)),
    ram: optional(integer(1, 512)),
    disk: optional(integer(10, 4096)),
    image: optional(nonEmpty),
    user: optional(unixUser),
    publicKeyPath: optional(filePath),
    privateKeyPath: optional(filePath),
    accessPorts: optional(list(port, { unique: true })),
    sshPort: optional(integer(1, 65535)),
    addressKey: optional(oneOf(["externalConnect", "internalConnect"] as const)),
    address: optional(hostAddress),
    hostKeySha256: optional(hostKeySha256),
    strictHostKeys: optional(boolean()),
    hostKeys: optional(oneOf(["delivered", "first-contact"] as const)),
    cloudInit: optional(filePath),
    zabbix: optional(boolean()),
    sshRetry: optional(object<SshRetryConfig>(configFields(SSH_RETRY_SETTINGS) as never)),
    installers: optional(installers),
    ...vmRolloutFields(catalog.map((def) => def.key)),
  });

type RawConfig = {
  stackName?: string;
  runId?: number;
  parallelism?: number;
  jobTarget?: "sless" | "local";
  backend?: BackendConfig;
  nubes?: Partial<NubesConfig>;
  sless?: Partial<SlessConfig>;
  installers?: RawInstallers;
  vms: RawVm[];
  rollout?: Partial<RolloutConfig>;
};
const contextFields = (catalog: readonly CatalogEntry[]): Validator<RawConfig> => {
  const installers = installersFields(catalog);
  return object<RawConfig>({
    stackName: optional(string({ pattern: NAME, allowed: "a lowercase letter, then lowercase letters, digits or -" })),
    runId: optional(integer(1, 1_000_000_000)),
    parallelism: optional(integer(1, MAX_PARALLELISM)),
    jobTarget: optional(oneOf(["sless", "local"] as const)),
    backend: optional(backendSetting as Validator<BackendConfig>),
    nubes: optional(
      object<Partial<NubesConfig>>({
        endpoint: optional(url),
        providerSource: optional(nonEmpty),
        providerVersion: optional(nonEmpty),
        vdcUid: required(nonEmpty),
        nsxtUid: required(nonEmpty),
        vappName: optional(
          string({ pattern: NAME, allowed: "a lowercase letter, then lowercase letters, digits or -" }),
        ),
        deleteMode: optional(oneOf(["delete", "suspend", "state_only"] as const)),
        resumeIfExists: optional(boolean()),
      }),
    ),
    sless: optional(
      object<Partial<SlessConfig>>({
        endpoint: optional(url),
        providerSource: optional(nonEmpty),
        providerVersion: optional(string()),
        runtime: optional(string({ pattern: /^[a-z][a-z0-9.]*$/, allowed: 'a runtime name such as "nodejs20"' })),
      }),
    ),
    installers: optional(installers),
    vms: required(list(vmFields(installers, catalog), { minItems: 1 })),
    rollout: optional(rolloutSetting),
  });
};

/**
 * Every string of the configuration that holds `${` or `%{`, by key path. Whatever lands in the
 * synthesized configuration (names, image, URLs, an event's text) is read by Terraform as a template,
 * so such a string would run as an expression at plan time (file("/etc/shadow"), a variable's value).
 * No setting needs either sequence: they are refused everywhere, whatever a setting's own rule allows.
 */
export function templateSyntaxProblems(value: unknown, path = ""): string[] {
  if (typeof value === "string") {
    const found = /[$%]\{/.exec(value);
    return found
      ? [
          `${path}: contains "${found[0]}", which Terraform reads as template syntax in the synthesized configuration; remove it (no setting needs it)`,
        ]
      : [];
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
  return contextFields(catalog).schema;
}

/** Parses the `vmInstall` context object; throws ValidationError listing every problem. */
export function parseConfig(raw: unknown, catalog: readonly CatalogEntry[] = INSTALLERS): VmInstallConfig {
  if (raw === undefined) {
    throw new ValidationError(`cdktf.json context.${CONTEXT_KEY}`, [
      `${CONTEXT_KEY}: missing; add a "${CONTEXT_KEY}" object under "context" in cdktf.json (see README, Configuration)`,
    ]);
  }
  const where = `cdktf.json context.${CONTEXT_KEY}`;
  const templates = templateSyntaxProblems(raw);
  let given: RawConfig;
  try {
    given = validate(contextFields(catalog), raw, where);
  } catch (err) {
    if (err instanceof ValidationError && templates.length > 0)
      throw new ValidationError(where, [...templates, ...err.problems]);
    throw err;
  }
  const problems: string[] = [...templates];

  const nubes = given.nubes ? ({ ...NUBES_DEFAULTS, ...given.nubes } as NubesConfig) : undefined;
  const sless: SlessConfig = { ...SLESS_DEFAULTS, ...given.sless };
  const vms = given.vms.map((vm, i) => resolveVm(vm, given.installers ?? {}, nubes, catalog, `vms[${i}]`, problems));
  if (!nubes && vms.some((vm) => vm.kind === "nubes")) {
    problems.push(
      `nubes: required when a VM is of kind "nubes" (the default); give nubes.vdcUid and nubes.nsxtUid, or make every VM kind "existing"`,
    );
  }

  const seen = new Map<string, number>();
  vms.forEach((vm, i) => {
    if (seen.has(vm.name))
      problems.push(
        `vms[${i}].name: "${vm.name}" is already used by vms[${seen.get(vm.name)}]; VM names must be unique`,
      );
    seen.set(vm.name, i);
  });
  const rollout = resolveRollout(given.rollout, vms, problems);
  if (problems.length > 0) throw new ValidationError(where, problems);

  return {
    stackName: given.stackName ?? DEFAULT_STACK_NAME,
    runId: given.runId ?? 1,
    parallelism: given.parallelism ?? DEFAULT_PARALLELISM,
    jobTarget: given.jobTarget ?? DEFAULT_JOB_TARGET,
    backend: given.backend ?? DEFAULT_BACKEND,
    nubes,
    sless,
    vms,
    rollout,
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

function resolveVm(
  raw: RawVm,
  top: RawInstallers,
  nubes: NubesConfig | undefined,
  catalog: readonly CatalogEntry[],
  path: string,
  problems: string[],
): VmConfig {
  if (raw.kind === "existing") {
    if (raw.address === undefined)
      problems.push(`${path}.address: required for kind "existing": the host's IP address or name`);
    for (const key of NUBES_ONLY_KEYS) {
      if (raw[key] !== undefined)
        problems.push(
          `${path}.${key}: only for kind "nubes" (a VM this stack creates); remove it from an existing host`,
        );
    }
  }
  // A pinned VM keeps its pin: the image's own key, which it presents from the first contact on.
  const hostKeys =
    raw.hostKeys ?? (raw.kind === "existing" || raw.hostKeySha256 !== undefined ? "first-contact" : "delivered");
  problems.push(...hostKeysProblems(raw, hostKeys, path));
  if (raw.strictHostKeys && raw.hostKeySha256 === undefined && hostKeys === "first-contact") {
    problems.push(
      `${path}.strictHostKeys: true refuses a first contact without a pin; set ${path}.hostKeySha256 to the VM's key (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub on its console), or leave strictHostKeys off to record the key seen at first contact`,
    );
  }
  const own = raw.installers ?? {};
  const installers: Record<string, Record<string, unknown>> = {};
  for (const def of catalog) {
    const settings = { ...configDefaults(allSettings(def)), ...top[def.key], ...own[def.key] };
    if (settings.enabled)
      problems.push(...(def.check?.(settings) ?? []).map((p) => `${path}.installers.${def.key}.${p}`));
    installers[def.key] = settings;
  }
  const { installers: _ignored, ...fields } = raw;
  return {
    ...VM_DEFAULTS,
    accessPorts: [...VM_DEFAULTS.accessPorts],
    vappName: `${nubes?.vappName ?? NUBES_DEFAULTS.vappName}-${raw.name}`,
    ...fields,
    hostKeys,
    installers: installers as InstallersConfig,
  } as VmConfig;
}

/** A delivered key is the stack's own, for a VM it creates: no host that exists already, no pin beside it. */
function hostKeysProblems(raw: RawVm, hostKeys: HostKeysMode, path: string): string[] {
  if (hostKeys !== "delivered") return [];
  if (raw.kind === "existing") {
    return [
      `${path}.hostKeys: "delivered" is only for kind "nubes": the stack delivers a host key through cloud-init to a VM it creates; an existing host keeps its own key ("first-contact", the default, or pin it with hostKeySha256)`,
    ];
  }
  if (raw.hostKeySha256 !== undefined) {
    return [
      `${path}.hostKeySha256: with hostKeys "delivered" the VM presents the host key the stack generates and delivers, so no other key can be pinned; remove hostKeySha256, or hostKeys (a pinned VM keeps the image's own key)`,
    ];
  }
  return [];
}
