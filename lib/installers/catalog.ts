// The installers, in the order they run on one VM (packages -> docker -> postgres: two apt runs on one
// host only fight over the dpkg lock). Each entry maps its settings to the handler's event; the event
// keys are the handler's contract (snake_case, as in the plan).
import type { DockerConfig, InstallerKey, InstallersConfig, PackagesConfig, PostgresConfig, VmConfig } from "../config/types";

export interface InstallerSpec<K extends InstallerKey = InstallerKey> {
  /** Key in the installers config. */
  readonly key: K;
  /** Folder under handlers/. */
  readonly handler: string;
  /** The event for the handler, without secrets (those are added by the stack as Terraform references). */
  readonly event: (settings: InstallersConfig[K], vm: VmConfig) => Record<string, unknown>;
}

const packages: InstallerSpec<"packages"> = {
  key: "packages",
  handler: "install-packages",
  event: (s: PackagesConfig) => ({
    packages: s.packages,
    update: s.update,
    ...(s.cacheValidSec !== undefined ? { cache_valid_sec: s.cacheValidSec } : {}),
  }),
};

const docker: InstallerSpec<"docker"> = {
  key: "docker",
  handler: "install-docker",
  event: (s: DockerConfig, vm) => ({
    compose: s.compose,
    channel: s.channel,
    repo_url: s.repoUrl,
    users: s.users ?? [vm.user],
    verify: s.verify,
  }),
};

const postgres: InstallerSpec<"postgres"> = {
  key: "postgres",
  handler: "install-postgres",
  event: (s: PostgresConfig) => ({
    ...(s.version !== undefined ? { pg_version: s.version } : {}),
    db_name: s.dbName,
    db_user: s.dbUser,
    listen_addresses: s.listenAddresses,
    allow_remote: s.allowRemote,
    allowed_cidrs: s.allowedCidrs,
    repo_url: s.repoUrl,
  }),
};

/** Catalog order is run order on a VM. */
export const INSTALLERS: readonly InstallerSpec[] = [packages, docker, postgres] as InstallerSpec[];
