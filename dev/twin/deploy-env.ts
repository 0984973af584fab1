// What `cdktf deploy` of the unchanged production stack needs to run against the twin: the twin's CLI
// configuration, placeholder API tokens (the stack declares them as required sensitive variables; the
// twin reads none), and --skip-provider-lock: after init cdktf runs `terraform providers lock`, which
// asks the providers' origin registries for checksums whatever provider_installation says, and they are
// unreachable (and the sless one is not public). `terraform init` still writes the lock file from the mirror.
// No plugin cache (see below).

export const TWIN_CDKTF_FLAGS = ["--skip-provider-lock"] as const;

/** Takes only the CLI configuration's path, so any installation (installTwin's, a test's) fits. */
export function twinDeployEnv(twin: { cliConfig: string }): Record<string, string> {
  return {
    TF_CLI_CONFIG_FILE: twin.cliConfig,
    // No plugin cache: cdktf turns on a machine-wide one (~/.terraform.d/plugin-cache) unless told not to,
    // and the twin of every checkout on the machine has the same address and version but its own launcher,
    // so each init from another checkout re-points the shared entry under this stack's feet (its next
    // command fails the lock file's checksum, or starts that checkout's provider). Empty: Terraform ignores it.
    CDKTF_DISABLE_PLUGIN_CACHE_ENV: "true",
    TF_PLUGIN_CACHE_DIR: "",
    TF_VAR_nubes_api_token: process.env.TF_VAR_nubes_api_token ?? "twin-accepts-any-token",
    TF_VAR_sless_token: process.env.TF_VAR_sless_token ?? "twin-accepts-any-token",
  };
}
