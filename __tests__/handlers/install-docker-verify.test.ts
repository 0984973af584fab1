// install-docker's verification after an install: hello-world runs a container (and a pull that fails names the
// registry and the way out, verify "daemon"), daemon mode asks the daemon only; a daemon that does not answer or
// a service that does not start fails the job with where to look (journalctl, daemon.json's own error).
import { info, install, look, os, policy, run, running, update } from "./support/docker-steps";
import { policyBlock } from "./support/fixtures";
import type { Step } from "./support/scripted-remote";

describe("install-docker: verify modes and failures", () => {
  const toInstall = (verifyMode: string, tailSteps: Step[]) =>
    run({ verify: verifyMode, channel: "distro", compose: false }, [
      os(),
      look({}),
      update,
      policy("docker.io", policyBlock("docker.io", "24.0.7-0ubuntu2~22.04.1")),
      install("docker.io"),
      look(running()),
      ...tailSteps,
    ]);

  it("hello-world that cannot pull names the registry and the daemon mode", async () => {
    const { error } = await toInstall("hello-world", [
      info(),
      {
        match: "docker run --rm hello-world",
        code: 125,
        stderr:
          'docker: Error response from daemon: Get "https://registry-1.docker.io/v2/": dial tcp: lookup ' +
          "registry-1.docker.io: no such host.\n",
      },
      { match: "docker info --format '{{json .RegistryConfig.Mirrors}}'", sudo: true, stdout: "[]\n" },
    ]);
    expect(error?.message).toMatch(
      new RegExp(
        /Docker is installed and its daemon runs \(server 27\.0\.3\), /.source +
          /but `docker run --rm hello-world` failed \(exit 125\): /.source +
          /docker: Error response from daemon: .*no such host\.\. /.source +
          /The VM must reach Docker Hub .* set verify to "daemon"\./.source,
        "s",
      ),
    );
  });

  it("daemon mode does not run a container", async () => {
    const { result, remote } = await toInstall("daemon", [info()]);
    expect(remote.calls.some((c) => c.command.includes("docker run"))).toBe(false);
    expect(result!.verify).toEqual({ mode: "daemon", detail: "docker info: server version 27.0.3" });
  });

  it("a daemon that does not answer fails the job with where to look", async () => {
    const { error } = await toInstall("daemon", [
      {
        match: "docker info",
        code: 1,
        stderr: "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n",
      },
    ]);
    expect(error?.message).toMatch(
      /the daemon does not answer: `docker info` exited 1: Cannot connect to the Docker daemon.*journalctl -u docker/s,
    );
  });

  it("a service that does not start shows the journal", async () => {
    const { error } = await run({ channel: "distro", compose: false, verify: "daemon" }, [
      os(),
      look({}),
      update,
      policy("docker.io", policyBlock("docker.io", "24.0.7-0ubuntu2~22.04.1")),
      install("docker.io"),
      look(running({ active: "failed" })),
      {
        match: "systemctl start docker.service",
        sudo: true,
        code: 1,
        stderr: "Job for docker.service failed because the control process exited with error code.\n",
      },
      {
        match: "journalctl -u docker.service",
        sudo: true,
        stdout: "unable to configure the Docker daemon with file /etc/docker/daemon.json: invalid character\n",
      },
    ]);
    expect(error?.message).toMatch(
      new RegExp(
        /docker\.service did not start \(systemctl start docker\.service\): Job for docker\.service failed/.source +
          /[\s\S]*journalctl -u docker\.service[\s\S]*daemon\.json: invalid character[\s\S]*run the job again/.source,
      ),
    );
  });
});
