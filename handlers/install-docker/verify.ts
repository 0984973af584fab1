// The proof Docker works, run on every install: the daemon answers, and (verify "hello-world") a
// container runs from the registry.
import { type Remote, runLong, tail } from "../common/exec";
import type { Progress } from "../common/progress";
import type { DockerVerify } from "./definition";

/** Both verification modes run as root: the users' new group only applies to new sessions. */
export async function verifyDocker(remote: Remote, mode: DockerVerify): Promise<{ server: string; detail: string }> {
  const info = await remote.run("docker info --format '{{.ServerVersion}}'", {
    sudo: true,
    check: false,
    label: "docker info",
    timeoutMs: 60_000,
  });
  const server = info.stdout.trim().split("\n").pop() ?? "";
  if (info.code !== 0 || !/^[0-9]/.test(server)) {
    throw new Error(
      `Docker was installed but the daemon does not answer: \`docker info\` exited ${info.code}: ${tail(info.stderr || info.stdout, 5) || "(no output)"}. ` +
        "See `systemctl status docker` and `journalctl -u docker` on the VM.",
    );
  }
  if (mode === "daemon") return { server, detail: `docker info: server version ${server}` };
  const run = await remote.run("docker run --rm hello-world", {
    sudo: true,
    check: false,
    label: "docker run --rm hello-world",
    timeoutMs: 300_000,
    mutates: true,
  });
  if (run.code !== 0 || !/Hello from Docker!/.test(run.stdout)) {
    throw new Error(
      `Docker is installed and its daemon runs (server ${server}), but \`docker run --rm hello-world\` failed (exit ${run.code}): ` +
        `${tail(run.stderr || run.stdout, 6) || "(no output)"}. The VM must reach Docker Hub (or a registry mirror set in /etc/docker/daemon.json); ` +
        `where it cannot, set verify to "daemon".`,
    );
  }
  return { server, detail: "docker run --rm hello-world: Hello from Docker!" };
}

/**
 * The verification of a Docker found installed: when it fails, the daemon is restarted once (detached,
 * as any long step) and verified again; what that changed is returned for the result. A second failure
 * fails the job with the verification's own words.
 */
export async function verifyOrRestart(
  remote: Remote,
  mode: DockerVerify,
  progress: Progress,
): Promise<{ server: string; detail: string; changes: string[] }> {
  try {
    return { ...(await verifyDocker(remote, mode)), changes: [] };
  } catch (err) {
    const why = failureOf(err);
    progress.info(`the installed Docker fails its verification; restarting docker.service once (${why})`);
    await runLong(remote, "systemctl restart docker.service", {
      label: "systemctl restart docker.service",
      timeoutMs: 180_000,
    });
    const again = await verifyDocker(remote, mode);
    return { ...again, changes: [restartLine(why, true)] };
  }
}

/** Why the installed Docker fails its verification: the first line of verifyDocker's error. */
export function failureOf(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split("\n")[0];
}

/**
 * The change line of verifyOrRestart's restart. A check foresees the restart but cannot know whether
 * Docker then passes (`passes` false): the line stops before saying so.
 */
export function restartLine(why: string, passes: boolean): string {
  return `restarted docker.service: the installed Docker failed its verification (${why.slice(0, 200)})${passes ? " and passes it now" : ""}`;
}
