// cdktf.json context -> a complete, validated VmInstallConfig. Every problem is reported at once, each
// naming its key path (e.g. "vms[1].installers.postgres.dbName") and what is allowed.
import {
  boolean, integer, list, object, oneOf, optional, required, string, validate, ValidationError, Validator,
} from "../../shared/validate";
import {
  cidr, hostAddress, hostKeySha256, listenAddresses, packageList, pgDatabaseName, pgMajor, pgRoleName, repoUrl, unixUser,
} from "../../shared/names";
import { DEFAULT_JOB_TARGET, DEFAULT_STACK_NAME, DOCKER_DEFAULTS, NUBES_DEFAULTS, PACKAGES_DEFAULTS, POSTGRES_DEFAULTS, SLESS_DEFAULTS, VM_DEFAULTS } from "./defaults";
import type { DockerConfig, InstallersConfig, NubesConfig, PackagesConfig, PostgresConfig, SlessConfig, SshRetryConfig, VmConfig, VmInstallConfig } from "./types";

/** The cdktf.json context key that holds the whole configuration. */
export const CONTEXT_KEY = "vmInstall";

const NAME = /^[a-z][a-z0-9-]{0,30}$/;
const TF_IDENTIFIER = /^[a-z][a-z0-9_]{0,63}$/;
const nonEmpty = string({ pattern: /\S/, allowed: "a non-empty string" });
const url = string({ pattern: /^https?:\/\/[^\s"'`$\\]+$/, allowed: "an http(s) URL" });
const port = string({ pattern: /^[0-9]{1,5}$/, allowed: 'a port number as a string, e.g. "22"', check: (v) => (Number(v) >= 1 && Number(v) <= 65535 ? undefined : "is not a port from 1 to 65535") });
const filePath = string({ pattern: /^[^\0\n"]+$/, allowed: "a file path" });
const timeout = integer(30, 86400);

type Partial_<T> = { [K in keyof T]?: T[K] };

// Installer settings are validated as given (no defaults) at both levels, then merged key by key:
// VM over top level over defaults. That way a mistake is reported where it was written.
const packagesFields = object<Partial_<PackagesConfig>>({
  enabled: optional(boolean()),
  waitTimeoutSec: optional(timeout),
  packages: optional(packageList),
  update: optional(boolean()),
  cacheValidSec: optional(integer(0, 7 * 86400)),
});

const dockerFields = object<Partial_<DockerConfig>>({
  enabled: optional(boolean()),
  waitTimeoutSec: optional(timeout),
  compose: optional(boolean()),
  channel: optional(oneOf(["official", "distro"] as const)),
  repoUrl: optional(repoUrl),
  users: optional(list(unixUser, { unique: true })),
  verify: optional(oneOf(["hello-world", "daemon"] as const)),
});

const postgresFields = object<Partial_<PostgresConfig>>({
  enabled: optional(boolean()),
  waitTimeoutSec: optional(timeout),
  version: optional(pgMajor),
  dbName: optional(pgDatabaseName),
  dbUser: optional(pgRoleName),
  passwordVariable: optional(string({ pattern: TF_IDENTIFIER, allowed: 'a Terraform variable name (lowercase, digits, _), e.g. "pg_password", set as TF_VAR_pg_password' })),
  listenAddresses: optional(listenAddresses),
  allowRemote: optional(boolean()),
  allowedCidrs: optional(list(cidr, { minItems: 1, unique: true })),
  repoUrl: optional(repoUrl),
});

type RawInstallers = { packages?: Partial_<PackagesConfig>; docker?: Partial_<DockerConfig>; postgres?: Partial_<PostgresConfig> };
const installersFields = object<RawInstallers>({
  packages: optional(packagesFields),
  docker: optional(dockerFields),
  postgres: optional(postgresFields),
});

type RawVm = Omit<Partial_<VmConfig>, "installers" | "name"> & { name: string; installers?: RawInstallers };
const vmFields = object<RawVm>({
  name: required(string({ pattern: NAME, allowed: "a lowercase letter, then lowercase letters, digits or -, at most 31" })),
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
  zabbix: optional(boolean()),
  // The same ranges as the handlers' own `ssh` event check (handlers/common/ssh.ts).
  sshRetry: optional(object<SshRetryConfig>({
    attempts: optional(integer(1, 20)),
    delaySec: optional(integer(0, 300)),
    budgetSec: optional(integer(1, 3600)),
    timeoutSec: optional(integer(1, 300)),
  })),
  installers: optional(installersFields),
});

type RawConfig = {
  stackName?: string;
  runId?: number;
  jobTarget?: "sless" | "local";
  nubes?: Partial_<NubesConfig>;
  sless?: Partial_<SlessConfig>;
  installers?: RawInstallers;
  vms: RawVm[];
};
const configFields: Validator<RawConfig> = object<RawConfig>({
  stackName: optional(string({ pattern: NAME, allowed: "a lowercase letter, then lowercase letters, digits or -" })),
  runId: optional(integer(1, 1_000_000_000)),
  jobTarget: optional(oneOf(["sless", "local"] as const)),
  nubes: optional(object<Partial_<NubesConfig>>({
    endpoint: optional(url),
    providerSource: optional(nonEmpty),
    providerVersion: optional(nonEmpty),
    vdcUid: required(nonEmpty),
    nsxtUid: required(nonEmpty),
    vappName: optional(string({ pattern: NAME, allowed: "a lowercase letter, then lowercase letters, digits or -" })),
    deleteMode: optional(oneOf(["delete", "suspend", "state_only"] as const)),
    resumeIfExists: optional(boolean()),
  })),
  sless: optional(object<Partial_<SlessConfig>>({
    endpoint: optional(url),
    providerSource: optional(nonEmpty),
    providerVersion: optional(string()),
    runtime: optional(string({ pattern: /^[a-z][a-z0-9.]*$/, allowed: 'a runtime name such as "nodejs20"' })),
  })),
  installers: optional(installersFields),
  vms: required(list(vmFields, { minItems: 1 })),
});

/** Parses the `vmInstall` context object; throws ValidationError listing every problem. */
export function parseConfig(raw: unknown): VmInstallConfig {
  if (raw === undefined) {
    throw new ValidationError(`cdktf.json context.${CONTEXT_KEY}`, [`${CONTEXT_KEY}: missing; add a "${CONTEXT_KEY}" object under "context" in cdktf.json (see README, Configuration)`]);
  }
  const where = `cdktf.json context.${CONTEXT_KEY}`;
  const given = validate(configFields, raw, where);
  const problems: string[] = [];

  const nubes = given.nubes ? ({ ...NUBES_DEFAULTS, ...given.nubes } as NubesConfig) : undefined;
  const sless: SlessConfig = { ...SLESS_DEFAULTS, ...given.sless };
  const vms = given.vms.map((vm, i) => resolveVm(vm, given.installers ?? {}, nubes, `vms[${i}]`, problems));
  if (!nubes && vms.some((vm) => vm.kind === "nubes")) {
    problems.push(`nubes: required when a VM is of kind "nubes" (the default); give nubes.vdcUid and nubes.nsxtUid, or make every VM kind "existing"`);
  }

  const seen = new Map<string, number>();
  vms.forEach((vm, i) => {
    if (seen.has(vm.name)) problems.push(`vms[${i}].name: "${vm.name}" is already used by vms[${seen.get(vm.name)}]; VM names must be unique`);
    seen.set(vm.name, i);
  });
  if (problems.length > 0) throw new ValidationError(where, problems);

  return { stackName: given.stackName ?? DEFAULT_STACK_NAME, runId: given.runId ?? 1, jobTarget: given.jobTarget ?? DEFAULT_JOB_TARGET, nubes, sless, vms };
}

/** Keys that describe a Nubes VM to create; meaningless for a host that already exists. */
const NUBES_ONLY_KEYS = ["vappName", "cpu", "ram", "disk", "image", "publicKeyPath", "accessPorts", "addressKey", "zabbix"] as const;

function resolveVm(raw: RawVm, top: RawInstallers, nubes: NubesConfig | undefined, path: string, problems: string[]): VmConfig {
  if (raw.kind === "existing") {
    if (raw.address === undefined) problems.push(`${path}.address: required for kind "existing": the host's IP address or name`);
    for (const key of NUBES_ONLY_KEYS) {
      if (raw[key] !== undefined) problems.push(`${path}.${key}: only for kind "nubes" (a VM this stack creates); remove it from an existing host`);
    }
  }
  const own = raw.installers ?? {};
  const installers: InstallersConfig = {
    packages: { ...PACKAGES_DEFAULTS, ...top.packages, ...own.packages },
    docker: { ...DOCKER_DEFAULTS, ...top.docker, ...own.docker },
    postgres: { ...POSTGRES_DEFAULTS, ...top.postgres, ...own.postgres },
  };
  const pg = installers.postgres;
  if (pg.enabled && !pg.passwordVariable) {
    problems.push(`${path}.installers.postgres.passwordVariable: required when postgres is enabled; name a Terraform variable (e.g. "pg_password") and set TF_VAR_pg_password`);
  }
  if (pg.enabled && pg.allowRemote && pg.listenAddresses === "localhost") {
    problems.push(`${path}.installers.postgres.listenAddresses: "localhost" with allowRemote true admits no remote client; set listenAddresses to "*" or the VM's address`);
  }
  const { installers: _ignored, ...fields } = raw;
  return {
    ...VM_DEFAULTS,
    accessPorts: [...VM_DEFAULTS.accessPorts],
    vappName: `${nubes?.vappName ?? NUBES_DEFAULTS.vappName}-${raw.name}`,
    ...fields,
    installers,
  } as VmConfig;
}
