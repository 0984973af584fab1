// What `cdktf deploy` of the unchanged production stack needs to run against the twin: the twin's CLI
// configuration, placeholder API tokens (the stack declares them as required sensitive variables; the
// twin reads none), and --skip-provider-lock: after init cdktf runs `terraform providers lock`, which
// asks the providers' origin registries for checksums whatever provider_installation says, and they are
// unreachable (and the sless one is not public). `terraform init` still writes the lock file from the mirror.
import type { TwinInstallation } from "./install";

export const TWIN_CDKTF_FLAGS = ["--skip-provider-lock"] as const;

export function twinDeployEnv(twin: TwinInstallation): Record<string, string> {
  return {
    TF_CLI_CONFIG_FILE: twin.cliConfig,
    TF_VAR_nubes_api_token: process.env.TF_VAR_nubes_api_token ?? "twin-accepts-any-token",
    TF_VAR_sless_token: process.env.TF_VAR_sless_token ?? "twin-accepts-any-token",
  };
}
