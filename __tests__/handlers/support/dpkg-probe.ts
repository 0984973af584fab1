// What DPKG_HEALTH_LOOK prints on a VM, probe by probe, for the repair's unit tests.
import { DPKG_HEALTH_LOOK } from "../../../handlers/common/dpkg-health";
import { answerLook } from "./look-answers";

const lines = (items: string[] = []) => items.map((l) => `${l}\n`).join("");

/** The look's output: dpkg's journal, --audit, packages in between, running maintainer scripts, cached .debs. */
export function probeOutput(parts: {
  updates?: string;
  audit?: string;
  packages?: string[];
  scripts?: string[];
  cache?: string[];
}): string {
  return answerLook(DPKG_HEALTH_LOOK, {
    "dpkg.updates": parts.updates ? `${parts.updates}\n` : "",
    "dpkg.audit": parts.audit ? `${parts.audit}\n` : "",
    "dpkg.unsettled": lines(parts.packages),
    "dpkg.scripts": lines(parts.scripts),
    "dpkg.cache": lines(parts.cache),
  });
}
