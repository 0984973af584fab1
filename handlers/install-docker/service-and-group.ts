// The daemon's unit and the docker group: put right whatever channel installed Docker, and on a rerun
// that found the packages already there.

import { command } from "../../shared/shell-quote";
import { CommandError, type Remote, tail } from "../common/exec";
import type { Progress } from "../common/progress";
import type { DockerState } from "./docker-state";

/** Makes docker.service enabled and running; returns what it changed. Names the journal on failure. */
export async function ensureService(remote: Remote, state: DockerState, progress: Progress): Promise<string[]> {
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
  if (cmds.length === 0) return changes;
  try {
    await progress.step(cmds.join(" && "), () => remote.run(cmds.join(" && "), { sudo: true, label: cmds.join(" && "), timeoutMs: 180_000 }), "service");
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    const journal = await remote
      .run("journalctl -u docker.service -n 15 --no-pager -o cat", { sudo: true, check: false, label: "journalctl -u docker.service", timeoutMs: 30_000 })
      .then(
        (r) => tail(r.stdout, 15),
        () => "",
      );
    throw new Error(
      `docker.service did not start (${cmds.join(" && ")}): ${tail(err.stderr || err.stdout, 5)}` +
        (journal ? `\nlast lines of \`journalctl -u docker.service\` on the VM:\n${journal}` : "") +
        `\nFix the cause on the VM (often a broken /etc/docker/daemon.json, or a kernel without overlay/iptables support), then run the job again.`,
    );
  }
  return changes;
}

/** Creates the docker group if the packages did not, and adds the users not in it yet. */
export async function ensureGroup(remote: Remote, state: DockerState, users: string[], progress: Progress): Promise<{ changes: string[]; added: string[] }> {
  const added = users.filter((u) => !(state.users.get(u) ?? []).includes("docker"));
  const cmds: string[] = [];
  const changes: string[] = [];
  if (!state.group) {
    cmds.push("getent group docker >/dev/null || groupadd --system docker");
    changes.push("created group docker");
  }
  for (const u of added) cmds.push(command("usermod", "-aG", "docker", u));
  if (cmds.length === 0) return { changes, added };
  const label = added.length ? `adding ${added.join(", ")} to group docker` : "creating group docker";
  await progress.step(label, () => remote.run(cmds.join(" && "), { sudo: true, label, timeoutMs: 60_000 }), "users");
  for (const u of added) changes.push(`added ${u} to group docker`);
  return { changes, added };
}
