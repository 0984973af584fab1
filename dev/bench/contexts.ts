// The cdktf.json contexts the benches synthesize: kept apart from the bench scripts, which run when imported.

/** `count` existing VMs (10.0.0.1...) with all three installers, jobs on the local target. */
export function allInstallersContext(count: number) {
  return {
    stackName: `bench-synth-${count}`,
    jobTarget: "local",
    installers: {
      packages: { enabled: true, packages: ["git", "curl", "jq", "htop", "unzip"] },
      docker: { enabled: true, channel: "distro", verify: "daemon", compose: false },
      postgres: { enabled: true, passwordVariable: "pg_password" },
    },
    vms: Array.from({ length: count }, (_, i) => ({
      name: `vm${i + 1}`,
      kind: "existing",
      address: `10.0.0.${i + 1}`,
    })),
  };
}
