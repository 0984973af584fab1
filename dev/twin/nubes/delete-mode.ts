// delete_mode and resume_if_exists as the real provider reads them, shared by nubes_vapp and nubes_vc_vm_v3.
import { type CtyObject, UNKNOWN } from "../protocol/cty-value";
import { type Diagnostic, errorDiagnostic } from "../protocol/diagnostics";

const DELETE_MODES = ["state_only", "suspend", "delete"] as const;
export type DeleteMode = (typeof DELETE_MODES)[number];

/** The real provider's defaults: destroy forgets (state_only), create adopts (resume_if_exists). */
export const LIFECYCLE_DEFAULTS = { delete_mode: "state_only", resume_if_exists: true } as const;

export function deleteModeProblems(typeName: string, config: CtyObject): Diagnostic[] {
  const mode = config.delete_mode;
  if (mode === null || mode === UNKNOWN || (DELETE_MODES as readonly unknown[]).includes(mode)) return [];
  return [
    errorDiagnostic(
      `${typeName}: delete_mode ${JSON.stringify(mode)} is not one of ${DELETE_MODES.join(", ")}`,
      "Set nubes.deleteMode in cdktf.json to one of them.",
      "delete_mode",
    ),
  ];
}

export function deleteModeOf(state: CtyObject): DeleteMode {
  return (state.delete_mode as DeleteMode | null) ?? LIFECYCLE_DEFAULTS.delete_mode;
}
