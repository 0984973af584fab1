// The settings vm-install reads from cdktf.json `context.vmInstall`, with their defaults. The stack's own
// settings are documented here; each installer's settings are declared once in its
// handlers/<handler>/definition.ts and their types derive from that.
import type { dockerDefinition } from "../../handlers/install-docker/definition";
import type { packagesDefinition } from "../../handlers/install-packages/definition";
import type { postgresDefinition } from "../../handlers/install-postgres/definition";
import type { InstallerDefinition } from "../../shared/installer-definition";
import type { ConfigOf, Settings } from "../../shared/settings";
import type { SSH_RETRY_SETTINGS } from "../../shared/ssh-retry";
import type { BackendConfig } from "./backend";
import type { RolloutConfig, VmRolloutConfig } from "./rollout";

export type DeleteMode = "delete" | "suspend" | "state_only";
export type AddressKey = "externalConnect" | "internalConnect";
export type VmKind = "nubes" | "existing";
export type JobTarget = "sless" | "local";
/** How the jobs come to know a VM's SSH host key (see README, Host keys). */
export type HostKeysMode = "delivered" | "first-contact";

export interface VmInstallConfig {
  /** Terraform stack name (folder under cdktf.out/stacks). @default "vm-install" */
  readonly stackName: string;
  /** Raise to rerun every installer job (sless_job run_id). @default 1 */
  readonly runId: number;
  /**
   * At most this many jobs (and other resources) at once across the whole stack: Terraform's -parallelism,
   * passed as cdktf's --terraform-parallelism to every deploy, destroy and diff the project runs. A VM's
   * own jobs are a chain, so one VM never runs two at once whatever the value. @default 10
   */
  readonly parallelism: number;
  /** Where the jobs run: "sless" (sless_job on the platform) or "local" (terraform_data + local-exec running the same bundle through the job runner on the deploying machine). @default "sless" */
  readonly jobTarget: JobTarget;
  /** Where the Terraform state lives: local (default), or pg / s3 to share it. @default { type: "local" } */
  readonly backend: BackendConfig;
  /** The Nubes provider and where VMs go. Required when any VM is of kind "nubes". */
  readonly nubes?: NubesConfig;
  /** The sless provider and job runtime. */
  readonly sless: SlessConfig;
  /** The VMs, each with its own installers. At least one. */
  readonly vms: VmConfig[];
  /** Waves and failure budget (./rollout.ts). @default one wave, maxFailures 0 */
  readonly rollout?: RolloutConfig;
}

export interface NubesConfig {
  /** Nubes API endpoint. @default the provider's own default (unset) */
  readonly endpoint?: string;
  /** Provider source address. @default "terra.k8c.ru/nubes/nubes" */
  readonly providerSource: string;
  /** Provider version constraint. @default "2.0.0" */
  readonly providerVersion: string;
  /** VDC the vApps go into (nubes_vapp.vdc_uid). Required. */
  readonly vdcUid: string;
  /** NSX-T edge/network (nubes_vapp.nsxt_uid). Required. */
  readonly nsxtUid: string;
  /** vApp name prefix: each VM gets vApp "<prefix>-<vm name>" unless it names its own. @default "vm-install" */
  readonly vappName: string;
  /** What destroy does to vApps and VMs: "delete" removes them; "suspend" stops them; "state_only" (the provider's own default) forgets them and leaves them running. @default "delete" */
  readonly deleteMode: DeleteMode;
  /** Adopt an existing vApp/VM of the same name instead of failing. @default true */
  readonly resumeIfExists: boolean;
}

export interface SlessConfig {
  /** sless API endpoint. @default "https://sless.kube5s.ru" (the platform's public API) */
  readonly endpoint: string;
  /** Provider source address (unverified: the provider is not public). @default "sless.kube5s.ru/sless/sless" */
  readonly providerSource: string;
  /** Provider version constraint; empty means any. @default "" */
  readonly providerVersion: string;
  /** Job runtime name on the platform. @default "nodejs20" */
  readonly runtime: string;
}

export interface VmConfig extends VmRolloutConfig {
  /** VM name: resource names, job names and output names derive from it. Lowercase, digits, "-". Required. */
  readonly name: string;
  /** "nubes": a vApp and VM are created; "existing": a host that is already there, reached at `address` (no Nubes resources; the sizing keys do not apply). @default "nubes" */
  readonly kind: VmKind;
  /** vApp name for this VM. @default "<nubes.vappName>-<name>" */
  readonly vappName: string;
  /** vCPUs. @default 2 */
  readonly cpu: number;
  /** RAM in GB. @default 2 */
  readonly ram: number;
  /** Disk in GB. @default 20 */
  readonly disk: number;
  /** Nubes image name. @default "Ubuntu_22-20G" */
  readonly image: string;
  /** Login user created on the VM and used for SSH. @default "ubuntu" */
  readonly user: string;
  /** Public key file (read by Terraform at apply time), relative to the project. @default "vm_key.pub" */
  readonly publicKeyPath: string;
  /** Private key file (read by Terraform at apply time, never inlined), relative to the project. @default "vm_key" */
  readonly privateKeyPath: string;
  /** Ports opened on the VM (access_port_list). @default ["22"] */
  readonly accessPorts: string[];
  /** SSH port the jobs connect to. @default 22 */
  readonly sshPort: number;
  /** Key of state_out_flat holding the address the jobs reach: "externalConnect" (public IP) or "internalConnect" (once the cluster and the VDC are peered). @default "externalConnect" */
  readonly addressKey: AddressKey;
  /** A fixed address for the jobs instead of state_out_flat. Required for kind "existing". @default none */
  readonly address?: string;
  /** Pin the VM's SSH host key ("SHA256:..." as ssh-keygen -l prints it); every job requires it from the first contact on. @default none: the key the VM presents at first contact is recorded in Terraform state and required from then on */
  readonly hostKeySha256?: string;
  /** "delivered": the stack generates the VM's ed25519 host key and delivers it through cloud_init (cloud-init's ssh_keys), and every job requires it from the first byte; "first-contact": the key the VM presents at first contact is recorded (or hostKeySha256 pins it), for images without cloud-init. @default "delivered" for kind "nubes" without hostKeySha256; "first-contact" for a pinned VM and for kind "existing" (its only one) */
  readonly hostKeys: HostKeysMode;
  /** A #cloud-config file (relative to the project) merged with what the stack needs (the delivered host key) into the VM's cloud_init; checked at synth. Kind "nubes" only. @default none */
  readonly cloudInit?: string;
  /** Refuse a first contact without a pin: hostKeySha256 is then required. @default false */
  readonly strictHostKeys: boolean;
  /** How the jobs retry an SSH connection that can heal (refused, unreachable, timeout): the event's `ssh`. @default 3 attempts, 10 s first wait (doubling), 120 s budget, 20 s per attempt */
  readonly sshRetry?: SshRetryConfig;
  /** need_add_zabbix_template. @default false */
  readonly zabbix: boolean;
  /** Installers for this VM: the top-level `installers` merged with this VM's own, key by key. */
  readonly installers: InstallersConfig;
}

/** `vms[].sshRetry`: only what is given goes into the event's `ssh`; the handler defaults the rest. */
export type SshRetryConfig = Partial<ConfigOf<typeof SSH_RETRY_SETTINGS>>;

/** What every installer's settings hold besides its own. */
export interface InstallerCommonConfig {
  /** Run this installer. */
  readonly enabled: boolean;
  /** The job's wait_timeout_sec. */
  readonly waitTimeoutSec: number;
}

/** An installer's resolved settings: the common ones and its own. */
export type InstallerConfig<S extends Settings = Settings> = InstallerCommonConfig & ConfigOf<S>;
type ConfigOfDefinition<D> = D extends InstallerDefinition<infer S> ? InstallerConfig<S> : never;

export type PackagesConfig = ConfigOfDefinition<typeof packagesDefinition>;
export type DockerConfig = ConfigOfDefinition<typeof dockerDefinition>;
export type PostgresConfig = ConfigOfDefinition<typeof postgresDefinition>;

/** Each installer's settings by its key: the built-in ones typed, any other (a plugged-in installer) generic. */
export type InstallersConfig = {
  readonly packages: PackagesConfig;
  readonly docker: DockerConfig;
  readonly postgres: PostgresConfig;
} & {
  readonly [key: string]: InstallerCommonConfig & Record<string, unknown>;
};
