// The configuration's types, derived from its one declaration (stack-settings.ts and the installers'
// definitions): nothing here is written twice.
import type { ConfigOf } from "../../shared/settings";
import type { stackSettings } from "./stack-settings";

export type { BackendConfig } from "./backend";
export type {
  InstallerCommonConfig,
  InstallerConfig,
  InstallersConfig,
} from "./installer-settings";

/** `context.vmInstall` once checked and resolved: every default filled in. */
export type VmInstallConfig = ConfigOf<ReturnType<typeof stackSettings>>;
export type NubesConfig = NonNullable<VmInstallConfig["nubes"]>;
export type SlessConfig = VmInstallConfig["sless"];
export type VmConfig = VmInstallConfig["vms"][number];
/** How the jobs come to know a VM's SSH host key (docs/host-keys.md). */
export type HostKeysMode = VmConfig["hostKeys"];
/** `vms[].sshRetry`: only what is given goes into the event's `ssh`; the handler defaults the rest. */
export type SshRetryConfig = NonNullable<VmConfig["sshRetry"]>;
