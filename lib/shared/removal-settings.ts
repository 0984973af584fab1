// `state`, declared once for every installer that can take its software back off: "absent" removes what
// vm-install's inventory on the VM says that installer put there, and nothing else.
import { setting } from "./settings";
import { oneOf } from "./validate";

const INSTALLER_STATES = ["present", "absent"] as const;
export type InstallerState = (typeof INSTALLER_STATES)[number];

export const REMOVAL_SETTINGS = {
  state: setting(oneOf(INSTALLER_STATES), {
    event: "state",
    default: "present",
    doc:
      '"present" installs; "absent" removes what vm-install recorded (/var/lib/vm-install) it installed and ' +
      "granted for this installer, and nothing else: packages already there before it ran stay.",
  }),
} as const;

/** The result fields of a run with state absent (an installer's own fields of the same name say both). */
export const ABSENT_RESULT = {
  state: '"absent" when the run took software back off (its other fields are then these, not the install\'s)',
  removed: "state absent: packages this run removed (purged); none in check mode, where would_change says them",
  revoked: 'state absent: grants this run took back, e.g. "group docker: deploy"',
  kept:
    "state absent: packages vm-install installed but kept, since something it did not install depends on them " +
    "(each in warnings with what)",
} as const;
