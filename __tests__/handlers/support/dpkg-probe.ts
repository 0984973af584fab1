// What DPKG_HEALTH_PROBE prints on a VM, section by section, for the repair's unit tests.

/** The probe's output: dpkg's journal, --audit, packages in between, running maintainer scripts, cached .debs. */
export function probeOutput(parts: {
  updates?: string;
  audit?: string;
  packages?: string[];
  scripts?: string[];
  cache?: string[];
}): string {
  return [
    parts.updates ?? "",
    "--- audit",
    parts.audit ?? "",
    "--- packages",
    ...(parts.packages ?? []),
    "--- scripts",
    ...(parts.scripts ?? []),
    "--- cache",
    ...(parts.cache ?? []),
    "",
  ].join("\n");
}
