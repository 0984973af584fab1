// install-docker with `state: "absent"`: first the docker group memberships vm-install granted
// (grants.json) are taken back, then the generic removal (common/absent-model.ts) purges the packages
// its installs brought, the docker group they created once no one else is in it, and the apt source and
// keyring it wrote (recorded by package-work.ts), then the daemon.json keys it wrote (daemon-absent.ts).
// Members it did not add, and Docker that was there before vm-install, are never touched.
import { command } from "../../lib/shared/shell-quote";
import { type AbsentExtra, absentModel } from "../common/absent-model";
import { GRANTS_FILE, type Inventory, readGrants, stringList, withSection, writeGrants } from "../common/grants";
import type { Change } from "../common/installer-model";
import { type DaemonTakeBack, daemonTakeBack, daemonTakeBackChange } from "./daemon-absent";
import { readDaemonFileAsIs } from "./daemon-config-apply";
import { recordOf } from "./daemon-record";
import type { DockerEvent } from "./package-work";

/** What vm-install granted in the docker group, against who is in it now. */
export interface DockerGrantsSeen {
  inventory: Inventory;
  /** Members vm-install added (grants.json) that are members now: to revoke. */
  revoke: string[];
  /** Whether grants.json lists anyone (then it is cleared). */
  recorded: boolean;
  /** The daemon.json keys vm-install wrote, taken back after the packages (undefined: none recorded). */
  daemon?: DaemonTakeBack;
}

/** The members of group docker now ([] when there is no such group). */
async function members(remote: Parameters<AbsentExtra<DockerEvent, DockerGrantsSeen>["inspect"]>[0]["remote"]) {
  const r = await remote.run("getent group docker || true", { label: "getent group docker", timeoutMs: 30_000 });
  const line = r.stdout.trim();
  return line ? (line.split(":")[3] ?? "").split(",").filter(Boolean) : [];
}

function revokeChange(seen: DockerGrantsSeen): Change<DockerEvent> {
  return {
    kind: "revoke",
    what: seen.revoke.map((u) => `revoked: removed ${u} from group docker (added by vm-install)`),
    why: `${GRANTS_FILE} says vm-install added them to group docker`,
    async apply({ remote }) {
      if (seen.revoke.length)
        await remote.run(seen.revoke.map((u) => command("gpasswd", "-d", u, "docker")).join(" && "), {
          sudo: true,
          mutates: true,
          label: "removing members vm-install added from group docker",
          timeoutMs: 60_000,
        });
      const docker = seen.inventory.docker;
      const rest = typeof docker === "object" && docker !== null && !Array.isArray(docker) ? docker : {};
      await writeGrants(remote, withSection(seen.inventory, "docker", { ...rest, group_members: [] }));
      return undefined;
    },
  };
}

const dockerGrantsBack: AbsentExtra<DockerEvent, DockerGrantsSeen> = {
  async inspect({ remote }) {
    const inventory = await readGrants(remote);
    const recorded = stringList((inventory.docker as { group_members?: unknown } | undefined)?.group_members);
    const now = await members(remote);
    const record = recordOf(inventory);
    const daemon = Object.keys(record.written).length
      ? daemonTakeBack(await readDaemonFileAsIs(remote), record)
      : undefined;
    return { inventory, revoke: recorded.filter((u) => now.includes(u)), recorded: recorded.length > 0, daemon };
  },
  plan: (seen) => (seen.recorded ? [revokeChange(seen)] : []),
  after: (seen) => (seen.daemon ? [daemonTakeBackChange(seen.daemon)] : []),
  revokedMembers: (seen) => seen.revoke,
  revoked: (seen) => seen.revoke.map((u) => `group docker: ${u}`),
};

/** The absent side of install-docker (handler.ts puts it beside the install model). */
export const dockerAbsentModel = absentModel<DockerEvent, DockerGrantsSeen>("docker", dockerGrantsBack);
