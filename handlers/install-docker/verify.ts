// The proof Docker works, run on every install: the daemon answers, and (verify "hello-world") a
// container runs from the registry. A look asks the daemon only; a restart is the one repair.
import { type Remote, runLong, tail } from "../common/exec";
import type { Progress } from "../common/progress";
import type { DockerVerify } from "./definition";
import type { DockerState } from "./docker-state";
import { failingMirrors } from "./mirror-probe";

/** What `docker info` said: the server's version, in the words the result reports. */
export interface DaemonAnswer {
  server: string;
  detail: string;
}

/** Both verification modes run as root: the users' new group only applies to new sessions. */
export async function verifyDocker(remote: Remote, mode: DockerVerify): Promise<DaemonAnswer> {
  const daemon = await daemonAnswers(remote);
  return mode === "daemon" ? daemon : helloWorld(remote, daemon.server);
}

/** `docker info` (read-only): the daemon answers, or an error saying where to look. */
export async function daemonAnswers(remote: Remote): Promise<DaemonAnswer> {
  const info = await remote.run("docker info --format '{{.ServerVersion}}'", {
    sudo: true,
    check: false,
    label: "docker info",
    timeoutMs: 60_000,
  });
  const server = info.stdout.trim().split("\n").pop() ?? "";
  if (info.code !== 0 || !/^[0-9]/.test(server)) {
    throw new Error(
      `Docker was installed but the daemon does not answer: \`docker info\` exited ${info.code}: ` +
        `${tail(info.stderr || info.stdout, 5) || "(no output)"}. ` +
        "See `systemctl status docker` and `journalctl -u docker` on the VM.",
    );
  }
  return { server, detail: `docker info: server version ${server}` };
}

/** A container from the registry runs (it pulls an image and creates a container: never in a check). */
export async function helloWorld(remote: Remote, server: string): Promise<DaemonAnswer> {
  const run = await remote.run("docker run --rm hello-world", {
    sudo: true,
    check: false,
    label: "docker run --rm hello-world",
    timeoutMs: 300_000,
    mutates: true,
  });
  if (run.code !== 0 || !/Hello from Docker!/.test(run.stdout)) {
    const mirrors = await failingMirrors(remote);
    if (mirrors.length)
      throw new Error(
        `\`docker run --rm hello-world\` failed (exit ${run.code}) and ${mirrors.join("; ")}: start it or fix ` +
          `registryMirrors (registry-mirrors in /etc/docker/daemon.json), then run the job again. dockerd said: ` +
          `${tail(run.stderr || run.stdout, 3) || "(no output)"}`,
      );
    throw new Error(
      `Docker is installed and its daemon runs (server ${server}), but \`docker run --rm hello-world\` failed (exit ` +
        `${run.code}): ` +
        `${tail(run.stderr || run.stdout, 6) || "(no output)"}. The VM must reach Docker Hub (or a registry mirror ` +
        `set in /etc/docker/daemon.json); ` +
        `where it cannot, set verify to "daemon".`,
    );
  }
  return { server, detail: "docker run --rm hello-world: Hello from Docker!" };
}

/**
 * The daemon as a look sees it: asked only when docker.service is active (with the service stopped,
 * docker.socket would start the daemon on the first call, a change). `failure`: why it did not answer.
 */
export interface DaemonLook {
  answer?: DaemonAnswer;
  failure?: string;
}

export async function lookAtDaemon(remote: Remote, state: DockerState): Promise<DaemonLook | undefined> {
  if (!state.cli || state.active !== "active") return undefined;
  try {
    return { answer: await daemonAnswers(remote) };
  } catch (err) {
    return { failure: failureOf(err) };
  }
}

/**
 * The restart of an installed Docker whose daemon does not answer: once, detached as any long step,
 * then asked again. A second silence fails the job with the verification's own words.
 */
export async function restartDocker(remote: Remote, why: string, progress: Progress): Promise<DaemonAnswer> {
  progress.info(`the installed Docker fails its verification; restarting docker.service once (${why})`);
  await runLong(remote, "systemctl restart docker.service", {
    label: "systemctl restart docker.service",
    timeoutMs: 180_000,
  });
  return daemonAnswers(remote);
}

/** Why the installed Docker fails its verification: the first line of verifyDocker's error. */
function failureOf(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split("\n")[0];
}

/**
 * The change line of the planned restart (restartDocker) of a Docker that fails its verification: the same
 * for a check and a run (a restart after which Docker still fails fails the run, so passing goes unsaid).
 */
export function restartLine(why: string): string {
  return `restarted docker.service: the installed Docker failed its verification (${why.slice(0, 200)})`;
}
