// The proof Docker works, run on every install: the daemon answers, and (verify "hello-world") a
// container runs from the registry.
import { type Remote, tail } from "../common/exec";
import type { DockerVerify } from "./definition";

/** Both verification modes run as root: the users' new group only applies to new sessions. */
export async function verifyDocker(remote: Remote, mode: DockerVerify): Promise<{ server: string; detail: string }> {
  const info = await remote.run("docker info --format '{{.ServerVersion}}'", { sudo: true, check: false, label: "docker info", timeoutMs: 60_000 });
  const server = info.stdout.trim().split("\n").pop() ?? "";
  if (info.code !== 0 || !/^[0-9]/.test(server)) {
    throw new Error(
      `Docker was installed but the daemon does not answer: \`docker info\` exited ${info.code}: ${tail(info.stderr || info.stdout, 5) || "(no output)"}. ` +
        "See `systemctl status docker` and `journalctl -u docker` on the VM.",
    );
  }
  if (mode === "daemon") return { server, detail: `docker info: server version ${server}` };
  const run = await remote.run("docker run --rm hello-world", { sudo: true, check: false, label: "docker run --rm hello-world", timeoutMs: 300_000 });
  if (run.code !== 0 || !/Hello from Docker!/.test(run.stdout)) {
    throw new Error(
      `Docker is installed and its daemon runs (server ${server}), but \`docker run --rm hello-world\` failed (exit ${run.code}): ` +
        `${tail(run.stderr || run.stdout, 6) || "(no output)"}. The VM must reach Docker Hub (or a registry mirror set in /etc/docker/daemon.json); ` +
        `where it cannot, set verify to "daemon".`,
    );
  }
  return { server, detail: "docker run --rm hello-world: Hello from Docker!" };
}
