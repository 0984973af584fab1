// install-packages as both sides see it: its cdktf.json settings, their event keys, defaults and rules.
import { APT_LIST_SETTINGS, defineInstallerDefinition } from "../../lib/shared/installer-definition";
import { packageList } from "../../lib/shared/names";
import { ABSENT_RESULT, REMOVAL_SETTINGS } from "../../lib/shared/removal-settings";
import { type EventOf, setting } from "../../lib/shared/settings";

export const packagesDefinition = defineInstallerDefinition({
  key: "packages",
  handler: "install-packages",
  doc:
    "`apt-get update` (skippable), installs the listed packages, reports per package installed / already " +
    "installed / failed with a reason",
  enabledByDefault: true,
  waitTimeoutSec: 600,
  settings: {
    packages: setting(packageList, {
      event: "packages",
      eventRequired: true,
      default: ["git", "curl", "htop", "jq", "unzip"],
      doc:
        "Debian package names (lowercase, digits, + - .), each optionally pinned as name=version; each package " +
        "once.",
    }),
    ...APT_LIST_SETTINGS,
    ...REMOVAL_SETTINGS,
  },
  result: {
    installed: "packages this run installed",
    already_installed: "packages that were there already",
    failed:
      "[{name, reason}] for packages that could not be installed (status partial); when all fail, the job fails " +
      "naming each reason",
    versions: "installed version of every listed package",
    apt_update: "{ran, reason}: whether apt-get update ran and why (not)",
    ...ABSENT_RESULT,
  },
});

/** The event install-packages is given, defaults filled in. */
export type PackagesEvent = EventOf<typeof packagesDefinition.settings>;
