// The settings vm-install reads from cdktf.json `context.vmInstall`, with their defaults. Each field's
// doc comment is the configuration reference (the README's table follows it).

export type DeleteMode = "delete" | "suspend" | "state_only";
export type AddressKey = "externalConnect" | "internalConnect";
export type DockerChannel = "official" | "distro";
export type DockerVerify = "hello-world" | "daemon";
export type VmKind = "nubes" | "existing";
export type JobTarget = "sless" | "local";

export interface VmInstallConfig {
  /** Terraform stack name (folder under cdktf.out/stacks). @default "vm-install" */
  readonly stackName: string;
  /** Raise to rerun every installer job (sless_job run_id). @default 1 */
  readonly runId: number;
  /** Where the jobs run: "sless" (sless_job on the platform) or "local" (terraform_data + local-exec running the same bundle through the job runner on the deploying machine). @default "sless" */
  readonly jobTarget: JobTarget;
  /** The Nubes provider and where VMs go. Required when any VM is of kind "nubes". */
  readonly nubes?: NubesConfig;
  /** The sless provider and job runtime. */
  readonly sless: SlessConfig;
  /** The VMs, each with its own installers. At least one. */
  readonly vms: VmConfig[];
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
  /** sless API endpoint. @default "https://sless.kube5s.ru" (the plan's) */
  readonly endpoint: string;
  /** Provider source address (unverified: the provider is not public). @default "sless.kube5s.ru/sless/sless" */
  readonly providerSource: string;
  /** Provider version constraint; empty means any. @default "" */
  readonly providerVersion: string;
  /** Job runtime name on the platform. @default "nodejs20" */
  readonly runtime: string;
}

export interface VmConfig {
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
  /** Pin the VM's SSH host key ("SHA256:..." as ssh-keygen -l prints it); a mismatch fails the job. @default none (any key accepted and reported) */
  readonly hostKeySha256?: string;
  /** How the jobs retry an SSH connection that can heal (refused, unreachable, timeout): the event's `ssh`. @default 3 attempts, 10 s first wait (doubling), 120 s budget, 20 s per attempt */
  readonly sshRetry?: SshRetryConfig;
  /** need_add_zabbix_template. @default false */
  readonly zabbix: boolean;
  /** Installers for this VM: the top-level `installers` merged with this VM's own, key by key. */
  readonly installers: InstallersConfig;
}

export interface SshRetryConfig {
  /** Connection attempts in all. */
  readonly attempts?: number;
  /** Wait before the second attempt, in seconds; it doubles after each (at most 60 s). */
  readonly delaySec?: number;
  /** Give up once this many seconds have passed since the first attempt. */
  readonly budgetSec?: number;
  /** Each attempt's own time limit (TCP + handshake), in seconds. */
  readonly timeoutSec?: number;
}

export interface InstallersConfig {
  readonly packages: PackagesConfig;
  readonly docker: DockerConfig;
  readonly postgres: PostgresConfig;
}

interface InstallerCommon {
  /** Run this installer. */
  readonly enabled: boolean;
  /** sless_job wait_timeout_sec. */
  readonly waitTimeoutSec: number;
}

export interface PackagesConfig extends InstallerCommon {
  /** Debian package names, each optionally "=version". @default ["git","curl","htop","jq","unzip"] */
  readonly packages: string[];
  /** Run apt-get update first. @default true */
  readonly update: boolean;
  /** Skip apt-get update when the package lists are younger than this many seconds. @default none (always update) */
  readonly cacheValidSec?: number;
}

export interface DockerConfig extends InstallerCommon {
  /** Install the compose plugin. @default true */
  readonly compose: boolean;
  /** "official": Docker's apt repository; "distro": the OS's docker.io. @default "official" */
  readonly channel: DockerChannel;
  /** Docker repository base (a mirror of download.docker.com/linux). @default "https://download.docker.com/linux" */
  readonly repoUrl: string;
  /** Users added to the docker group. @default [the VM's login user] */
  readonly users?: string[];
  /** "hello-world" runs the plan's container; "daemon" checks docker info only (no registry needed). @default "hello-world" */
  readonly verify: DockerVerify;
}

export interface PostgresConfig extends InstallerCommon {
  /** PostgreSQL major; other than the distribution's own, it comes from PGDG. @default the distribution's (14 on Ubuntu 22.04, 15 on Debian 12) */
  readonly version?: string;
  /** Database to create. @default "myapp" */
  readonly dbName: string;
  /** Role to create, owner of the database. @default "app_user" */
  readonly dbUser: string;
  /** Terraform variable holding the role's password, set as TF_VAR_<name>. Required when enabled. */
  readonly passwordVariable?: string;
  /** postgresql.conf listen_addresses. @default "localhost" */
  readonly listenAddresses: string;
  /** Add a pg_hba entry for remote clients of this database and role. @default false */
  readonly allowRemote: boolean;
  /** Networks the pg_hba entry admits (scram-sha-256). @default ["0.0.0.0/0"] */
  readonly allowedCidrs: string[];
  /** PGDG repository base (a mirror of apt.postgresql.org). @default "https://apt.postgresql.org/pub/repos/apt" */
  readonly repoUrl: string;
}

export type InstallerKey = keyof InstallersConfig;
