// The configuration's types, derived from its one declaration (stack-settings.ts and the installers'
// definitions): nothing here is written twice.
import type { ConfigOf } from "../../shared/settings";
import type { stackSettings } from "./stack-settings";

/** `context.vmInstall` once checked and resolved: every default filled in. */
export type VmInstallConfig = ConfigOf<ReturnType<typeof stackSettings>>;
export type NubesConfig = NonNullable<VmInstallConfig["nubes"]>;
export type VmConfig = VmInstallConfig["vms"][number];
