// The daemon's unit and the docker group: put right whatever channel installed Docker, and on a rerun
// that found the packages already there.

import { command } from "../../lib/shared/shell-quote";
import { CommandError, type Remote, runLong, tail } from "../common/exec";
import { GRANTS_FILE, type Inventory, sameSet, withSection, writeGrants } from "../common/grants";
import type { Progress } from "../common/progress";
import type { DockerState } from "./docker-state";
import { groupMembersOf } from "./record-check";

/** What docker.service needs to be enabled and running: the systemctl commands and their change lines. Pure. */
export function planService(state: Pick<DockerState, "active" | "enabled">): { cmds: string[]; changes: string[] } {
  const changes: string[] = [];
  const cmds: string[] = [];
  if (state.enabled === "masked") {
    // Typically left by removing docker.io (debhelper masks the unit of a removed, not purged, package).
    cmds.push("systemctl unmask docker.service");
    changes.push("unmasked docker.service");
  }
  const enable = !/^(enabled|enabled-runtime|static|indirect|generated|alias)$/.test(state.enabled);
  const start = state.active !== "active";
  if (enable && start) cmds.push("systemctl enable --now docker.service");
  else if (enable) cmds.push("systemctl enable docker.service");
  else if (start) cmds.push("systemctl start docker.service");
  if (enable) changes.push("enabled docker.service");
  if (start) changes.push("started docker.service");
  return { cmds, changes };
}

/** Makes docker.service enabled and running; returns what it changed. Names the journal on failure. */
export async function ensureService(remote: Remote, state: DockerState, progress: Progress): Promise<string[]> {
  const { cmds, changes } = planService(state);
  if (cmds.length === 0) return changes;
  try {
    await progress.step(
      cmds.join(" && "),
      () => runLong(remote, cmds.join(" && "), { label: cmds.join(" && "), timeoutMs: 180_000 }),
      "service",
    );
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    const journal = await remote
      .run("journalctl -u docker.service -u docker.socket -n 20 --no-pager -o cat", {
        sudo: true,
        check: false,
        label: "journalctl -u docker.service",
        timeoutMs: 30_000,
      })
      .then(
        (r) => tail(r.stdout, 20),
        () => "",
      );
    // systemd's own lines on the two units (why a start "failed because of unavailable resources") come last.
    throw new Error(
      `docker.service did not start (${cmds.join(" && ")}): ${tail(err.stderr || err.stdout, 5)}` +
        (journal ? `\nlast lines of \`journalctl -u docker.service -u docker.socket\` on the VM:\n${journal}` : "") +
        `\nFix the cause on the VM (often a broken /etc/docker/daemon.json, or a kernel without overlay/iptables ` +
        `support), then run the job again.`,
    );
  }
  return changes;
}

/** What the group step does: who joins, who leaves, and who the inventory lists afterwards. */
export interface GroupPlan {
  add: string[];
  /** Members this project added earlier that `users` no longer lists. */
  revoke: string[];
  /** The inventory's docker.group_members after the step. */
  record: string[];
}

/**
 * Pure. Only a current member missing from `users` can need revoking, and only when the inventory
 * says this project added them; a member who was there before (never recorded) stays whatever `users`
 * says. Users already in the group when first listed are not recorded either: the project did not
 * grant that membership, so it will not take it away.
 */
export function planGroup(
  state: Pick<DockerState, "groupMembers" | "users">,
  users: string[],
  recorded: string[],
): GroupPlan {
  const add = users.filter((u) => !(state.users.get(u) ?? []).includes("docker"));
  const revoke = state.groupMembers.filter((m) => !users.includes(m) && recorded.includes(m));
  const record = [...recorded.filter((u) => users.includes(u)), ...add.filter((u) => !recorded.includes(u))];
  return { add, revoke, record };
}

/** The inventory's docker section as it is (daemon_json beside group_members is kept when either is written). */
function dockerSection(inventory: Inventory): Record<string, unknown> {
  const d = inventory.docker;
  return typeof d === "object" && d !== null && !Array.isArray(d) ? (d as Record<string, unknown>) : {};
}

/** The group step decided: its plan, the commands and change lines, and the inventory it was decided from. */
export interface GroupStep {
  plan: GroupPlan;
  cmds: string[];
  changes: string[];
  /** As read and re-checked (record-check.ts): what the step's record is written into. */
  inventory: Inventory;
  recorded: string[];
}

/** Pure. Decides the group step from the inventory as re-checked; changes nothing (check mode stops here). */
export function planGroupStep(state: DockerState, users: string[], inventory: Inventory): GroupStep {
  const recorded = groupMembersOf(inventory);
  const plan = planGroup(state, users, recorded);
  const cmds: string[] = [];
  const changes: string[] = [];
  if (!state.group) {
    cmds.push("getent group docker >/dev/null || groupadd --system docker");
    changes.push("created group docker");
  }
  for (const u of plan.add) cmds.push(command("usermod", "-aG", "docker", u));
  for (const u of plan.revoke) cmds.push(command("gpasswd", "-d", u, "docker"));
  for (const u of plan.add) changes.push(`added ${u} to group docker`);
  for (const u of plan.revoke)
    changes.push(`revoked: removed ${u} from group docker (added by vm-install, no longer in users)`);
  return { plan, cmds, changes, inventory, recorded };
}

/** The group step as decided by planGroupStep: nothing to do, or commands to run and a record to write. */
export function groupStepIsEmpty(step: GroupStep): boolean {
  return step.cmds.length === 0 && sameSet(step.plan.record, step.recorded);
}

/**
 * Makes the decided group step: creates the docker group if the packages did not, adds the users not in
 * it yet and removes those this project added earlier that `users` no longer lists; the inventory
 * records who it added.
 */
export async function applyGroupStep(
  remote: Remote,
  step: GroupStep,
  progress: Progress,
): Promise<{ added: string[]; revoked: string[] }> {
  const { plan, cmds, inventory, recorded } = step;
  if (cmds.length) {
    const label = [
      plan.add.length ? `adding ${plan.add.join(", ")} to` : "",
      plan.revoke.length ? `removing ${plan.revoke.join(", ")} from` : "",
    ]
      .filter(Boolean)
      .join(" and ");
    const what = label ? `${label} group docker` : "creating group docker";
    await progress.step(
      what,
      () => remote.run(cmds.join(" && "), { sudo: true, label: what, timeoutMs: 60_000, mutates: true }),
      "users",
    );
  }
  if (!sameSet(plan.record, recorded)) {
    await progress.step(
      `recording in ${GRANTS_FILE}`,
      () =>
        writeGrants(
          remote,
          withSection(inventory, "docker", { ...dockerSection(inventory), group_members: plan.record }),
        ),
      "grants",
    );
  }
  return { added: plan.add, revoked: plan.revoke.map((u) => `group docker: ${u}`) };
}
