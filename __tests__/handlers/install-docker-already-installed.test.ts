// install-docker on a VM where Docker is already installed: a run checks and verifies and changes nothing else
// (no apt, only the verification as root), puts right only what is off (a group member, a stopped service, a
// daemon that fails its verification: restarted once), and fails before any change for a user that does not
// exist. Which installed Docker counts is the channel's call: docker.io only for "distro".
import { dockerLook, dockerNeeds, needWords, parseDockerState } from "../../handlers/install-docker/docker-state";
import { inspectOut } from "./support/docker-look";
import { hello, info, look, os, run, running, usermod } from "./support/docker-steps";
import { DEBIAN_12 } from "./support/fixtures";
import { grantsRead, grantsWrite } from "./support/grants-steps";
import { answerLook } from "./support/look-answers";

/** The needs as typed data, and their words for progress lines. */
const unmetNeeds = (...args: Parameters<typeof dockerNeeds>) => dockerNeeds(...args).map(needWords);

describe("install-docker: already installed", () => {
  it("runs the checks and the verification, nothing else: no apt; only the verification as root", async () => {
    const { result, remote, lines } = await run({}, [
      os(),
      look(running({ users: { ubuntu: ["ubuntu", "sudo", "docker"] } })),
      info(),
      hello,
    ]);
    expect(remote.done).toBe(true);
    expect(remote.calls.map((c) => !!c.opts.sudo)).toEqual([false, false, true, true]);
    expect(result).toMatchObject({
      status: "ok",
      changed: false,
      changes: [],
      docker_version: "27.0.3",
      compose: true,
      compose_version: "2.29.1",
      users_added: [],
      apt_update: { ran: false, reason: "nothing to install" },
      server_version: "27.0.3",
      verify: { mode: "hello-world", detail: "docker run --rm hello-world: Hello from Docker!" },
    });
    expect(lines).toContain("[install-docker] Docker 27.0.3 already installed; nothing changed");
  });

  it("puts a missing group membership right without touching packages", async () => {
    const { result, remote } = await run({ users: ["ubuntu", "deploy"] }, [
      os(),
      look(running({ users: { ubuntu: ["docker"], deploy: ["deploy"] } })),
      grantsRead(),
      info(), // the daemon is asked in the look, before any change
      usermod(["deploy"]),
      grantsWrite((w) => expect(w.docker).toEqual({ group_members: ["deploy"] })),
      hello,
    ]);
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({
      status: "ok",
      changed: true,
      changes: ["added deploy to group docker"],
      users_added: ["deploy"],
    });
  });

  it("distro channel: docker.io with compose v1 counts; official channel does not accept docker.io", async () => {
    const v1 = {
      cli: "20.10.24+dfsg1",
      composeV1: "1.29.2",
      active: "active",
      enabled: "enabled",
      packages: { "docker.io": "20.10.24+dfsg1-1+b3", "docker-compose": "1.29.2-3" },
      group: ["ubuntu"],
      users: { ubuntu: ["docker"] },
    };
    const distro = await run({ channel: "distro" }, [os(DEBIAN_12), look(v1), info("20.10.24+dfsg1"), hello]);
    expect(distro.result).toMatchObject({
      status: "ok",
      compose: true,
      compose_version: "1.29.2",
      compose_command: "docker-compose",
      channel: "distro",
    });
    const needs = dockerNeeds(parseDockerState(answerLook(dockerLook(["ubuntu"]), inspectOut(v1)), ["ubuntu"]), {
      channel: "official",
      compose: true,
    });
    expect(needs).toEqual([
      { kind: "docker-ce", replacesDockerIo: true },
      { kind: "compose", channel: "official" },
    ]);
    expect(needs.map(needWords)).toEqual([
      "docker-ce from Docker's repository is not installed (docker.io from the distribution is, and is replaced)",
      "the compose plugin (docker compose) is not installed",
    ]);
  });

  it(
    "a docker.asc an earlier version wrote (the served bytes) is a need of the official channel even with Docker " +
      "complete; not of the distro one",
    () => {
      const complete = running();
      const official = { channel: "official" as const, compose: true };
      expect(
        unmetNeeds(parseDockerState(answerLook(dockerLook(["ubuntu"]), inspectOut(complete)), ["ubuntu"]), official),
      ).toEqual([]);
      const legacy = parseDockerState(
        answerLook(dockerLook(["ubuntu"]), inspectOut({ ...complete, legacyKeyring: true })),
        ["ubuntu"],
      );
      expect(unmetNeeds(legacy, official)).toEqual([
        "/etc/apt/keyrings/docker.asc is the key file an earlier version wrote as served (apt trusts every key in " +
          "it): rebuilt from the verified key",
      ]);
      expect(unmetNeeds(legacy, { channel: "distro", compose: true })).toEqual([]);
    },
  );

  it(
    "an installed Docker that fails its verification is restarted once and verified again; " + "the result says so",
    async () => {
      const state = running();
      const { result, remote, error } = await run({ verify: "daemon" }, [
        os(),
        look(state),
        {
          ...info(),
          code: 1,
          stdout: "",
          stderr: "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n",
        },
        { match: /^systemctl restart docker\.service$/, sudo: true },
        info(),
        // The look after the restart: daemon.json is planned on a daemon that answers.
        look(state),
      ]);
      expect(error).toBeUndefined();
      expect(remote.done).toBe(true);
      expect(result!.changed).toBe(true);
      expect(result!.changes).toEqual([
        expect.stringMatching(
          new RegExp(
            /^restarted docker\.service: the installed Docker failed its verification /.source +
              /\(Docker was installed but the daemon does not answer/.source,
          ),
        ),
      ]);
      expect(result!.verify).toEqual({ mode: "daemon", detail: "docker info: server version 27.0.3" });
    },
  );

  it("an installed Docker still failing after the restart fails the job with the verification's words", async () => {
    const state = running();
    const down = { ...info(), code: 1, stdout: "", stderr: "Cannot connect to the Docker daemon\n" };
    const { remote, error } = await run({ verify: "daemon" }, [
      os(),
      look(state),
      down,
      { match: /^systemctl restart docker\.service$/, sudo: true },
      down,
    ]);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      /the daemon does not answer: `docker info` exited 1: Cannot connect to the Docker daemon/,
    );
  });

  it("only the service down: started again, no apt and no network (the repository is not asked)", async () => {
    const { result, remote, error } = await run({ verify: "daemon" }, [
      os(),
      look(running({ active: "inactive", enabled: "disabled" })),
      { match: "systemctl enable --now docker.service", sudo: true },
      info(),
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({
      status: "ok",
      changed: true,
      changes: ["enabled docker.service", "started docker.service"],
      apt_update: { ran: false },
    });
    expect(result!.summary).toBe(
      "Docker 27.0.3 (server 27.0.3) was installed; its service was not running and now is, compose 2.29.1",
    );
  });

  it("a user that does not exist fails before anything changes", async () => {
    const { error, remote } = await run({ users: ["ubuntu", "ghost"] }, [
      os(),
      look({ users: { ubuntu: ["ubuntu"], ghost: null } }),
    ]);
    expect(remote.done).toBe(true);
    expect(error?.message).toBe(
      "install-docker failed while installing: user ghost does not exist on the VM, so it cannot join the docker " +
        "group: create them first or remove them from users. Nothing was changed.",
    );
  });
});
