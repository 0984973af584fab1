// nubes_vapp in the twin: a record (there is nothing to boot); adopted by name when resume_if_exists.
import { randomUUID } from "node:crypto";
import { TwinError } from "../protocol/diagnostics";
import type { ResourceImplementation } from "../protocol/resource";
import { deleteModeOf, deleteModeProblems, LIFECYCLE_DEFAULTS } from "./delete-mode";
import { readVapp, removeVapp, writeVapp } from "./records";

export function nubesVapp(log: (line: string) => void): ResourceImplementation {
  return {
    replaceOn: ["resource_name", "vapp_name", "vdc_uid", "nsxt_uid"],
    defaults: LIFECYCLE_DEFAULTS,
    validate: (config) => deleteModeProblems("nubes_vapp", config),
    async create(planned) {
      const name = String(planned.vapp_name);
      const existing = readVapp(name);
      if (existing && planned.resume_if_exists === false) {
        throw new TwinError(
          `nubes_vapp: a vApp named ${name} already exists (${existing.id})`,
          "Set resume_if_exists = true to adopt it, or choose another vapp_name.",
          "vapp_name",
        );
      }
      const id = existing?.id ?? `vapp-${randomUUID()}`;
      writeVapp({
        id,
        vapp_name: name,
        vdc_uid: String(planned.vdc_uid),
        nsxt_uid: String(planned.nsxt_uid),
        status: "running",
      });
      log(existing ? `vApp ${name}: adopted ${id}` : `vApp ${name}: created ${id}`);
      return { ...planned, id };
    },
    async delete(prior) {
      const name = String(prior.vapp_name);
      const mode = deleteModeOf(prior);
      if (mode === "delete") removeVapp(name);
      else if (mode === "suspend") {
        const record = readVapp(name);
        if (record) writeVapp({ ...record, status: "suspended" });
      }
      log(`vApp ${name}: destroy with delete_mode ${mode}`);
    },
  };
}
