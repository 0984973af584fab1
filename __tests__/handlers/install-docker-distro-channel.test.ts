// install-docker's distro channel: the distribution's docker.io, and of the compose packages the one apt offers,
// v2 preferred (docker-compose-v2 on Ubuntu 22.04 and 24.04), else v1's docker-compose with a note; no repository
// of Docker's, and where docker.io lives when apt offers none.
import { info, install, look, os, policy, run, update, usermod } from "./support/docker-steps";
import { DEBIAN_12, policyBlock, UBUNTU_2204, UBUNTU_2404 } from "./support/fixtures";
import { grantsRead, grantsWrite } from "./support/grants-steps";

describe("install-docker: distro channel", () => {
  it("Debian 12: docker.io and, of the compose packages, the one apt offers (docker-compose v1), noted", async () => {
    const { result, remote, error } = await run({ channel: "distro", verify: "daemon" }, [
      os(DEBIAN_12),
      look({}),
      update,
      policy(
        "docker.io docker-compose-v2 docker-compose-plugin docker-compose",
        policyBlock("docker.io", "20.10.24+dfsg1-1+b3") + policyBlock("docker-compose", "1.29.2-3"),
      ),
      install("docker.io docker-compose"),
      look({
        cli: "20.10.24+dfsg1",
        composeV1: "1.29.2",
        active: "active",
        enabled: "enabled",
        packages: { "docker.io": "20.10.24+dfsg1-1+b3", "docker-compose": "1.29.2-3" },
        group: [],
      }),
      grantsRead(),
      usermod(["ubuntu"]),
      grantsWrite((w) => expect(w.docker).toEqual({ group_members: ["ubuntu"] })),
      info("20.10.24+dfsg1"),
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({
      status: "ok",
      channel: "distro",
      docker_version: "20.10.24+dfsg1",
      compose_command: "docker-compose",
      compose_version: "1.29.2",
      changed: true,
      changes: ["installed docker.io docker-compose", "added ubuntu to group docker"],
      warnings: [
        "the distribution's compose is docker-compose 1.29.2-3: compose v1 (Python), called as docker-compose; " +
          'channel "official" has v2',
      ],
    });
    expect(result!.repository).toBeUndefined();
  });

  it("Ubuntu: prefers docker-compose-v2 when apt offers it", async () => {
    const { result, error } = await run({ channel: "distro", verify: "daemon", users: [] }, [
      os(UBUNTU_2204),
      look({}),
      update,
      policy(
        "docker.io docker-compose-v2",
        policyBlock("docker.io", "24.0.7-0ubuntu2~22.04.1") +
          policyBlock("docker-compose-v2", "2.24.6+ds1-0ubuntu1~22.04.1") +
          policyBlock("docker-compose", "1.29.2-1"),
      ),
      install("docker.io docker-compose-v2"),
      look({
        cli: "24.0.7",
        compose: "2.24.6+ds1-0ubuntu1~22.04.1",
        active: "active",
        enabled: "enabled",
        packages: { "docker.io": "24.0.7-0ubuntu2~22.04.1" },
        group: [],
      }),
      info("24.0.7"),
    ]);
    expect(error).toBeUndefined();
    expect(result).toMatchObject({ compose_command: "docker compose", warnings: [] });
  });

  it(
    "Ubuntu 24.04 (noble): noble's docker.io and docker-compose-v2 (noble-updates), " + "not v1's docker-compose",
    async () => {
      const { result, remote, error } = await run({ channel: "distro", verify: "daemon", users: [] }, [
        os(UBUNTU_2404),
        look({}),
        update,
        policy(
          "docker.io docker-compose-v2",
          policyBlock("docker.io", "28.2.2-0ubuntu1~24.04.1") +
            policyBlock("docker-compose-v2", "2.37.1+ds1-0ubuntu2~24.04.1") +
            policyBlock("docker-compose", "1.29.2-6ubuntu1"),
        ),
        install("docker.io docker-compose-v2"),
        look({
          cli: "28.2.2",
          compose: "2.37.1+ds1-0ubuntu2~24.04.1",
          active: "active",
          enabled: "enabled",
          packages: { "docker.io": "28.2.2-0ubuntu1~24.04.1", "docker-compose-v2": "2.37.1+ds1-0ubuntu2~24.04.1" },
          group: [],
        }),
        info("28.2.2"),
      ]);
      expect(error).toBeUndefined();
      expect(remote.done).toBe(true);
      expect(result).toMatchObject({
        status: "ok",
        channel: "distro",
        docker_version: "28.2.2",
        compose_command: "docker compose",
        changes: ["installed docker.io docker-compose-v2"],
        warnings: [],
        os: { id: "ubuntu", codename: "noble" },
      });
      expect(result!.repository).toBeUndefined();
    },
  );

  it("no docker.io candidate: says where it lives on Ubuntu", async () => {
    const { error } = await run({ channel: "distro", compose: false }, [
      os(UBUNTU_2204),
      look({}),
      update,
      policy("docker.io", ""),
    ]);
    expect(error?.message).toMatch(
      /the distribution's repositories offer no docker\.io on the VM; on Ubuntu it is in "universe"/,
    );
  });
});
