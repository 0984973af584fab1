// install-docker with check: true foresees in a real run's words and changes nothing: no apt-get (the lists
// as they are, with a warning when they may be stale), no service, group or file change (Docker's key fetched
// and compared, never written), no container run. From Docker in place, a stopped service with group changes, a daemon that does not answer,
// and the distro and official channels from docker.io or nothing.
import {
  info,
  keyCompare,
  keyFetch,
  look,
  OFFICIAL_ALL,
  officialLine,
  officialOffer,
  os,
  policy,
  run,
  running,
  staleLook,
} from "./support/docker-steps";
import { DEBIAN_12, policyBlock } from "./support/fixtures";
import { grantsRead } from "./support/grants-steps";

describe("install-docker: check mode (check: true) foresees, changes nothing", () => {
  /**
   * The double saw nothing that changes a VM: no marked command, no apt-get, no systemctl change, no group change,
   * no write.
   */
  const expectNothingChanged = (remote: { calls: { command: string; opts: { mutates?: boolean } }[] }) => {
    expect(remote.calls.filter((c) => c.opts.mutates).map((c) => c.command)).toEqual([]);
    const changing = new RegExp(
      /apt-get|systemctl (start|restart|enable|unmask)|usermod|gpasswd|groupadd|mktemp \/var\/lib\/vm-install|/.source +
        // The key fetch's curl writes its own temporary file and removes it: no other removal.
        /cat > "\$t"|head -c \d+ > |mv -fT|docker run|rm -f (?!"\$t"' EXIT)/.source,
    );
    expect(remote.calls.map((c) => c.command).filter((c) => changing.test(c))).toEqual([]);
  };

  it("all in place: would_change [], docker info is the only command as root (hello-world is not run)", async () => {
    const { result, remote, error } = await run({ check: true }, [os(), look(running()), info()]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expectNothingChanged(remote);
    expect(remote.calls.filter((c) => c.opts.sudo).map((c) => c.command)).toEqual([
      "docker info --format '{{.ServerVersion}}'",
    ]);
    expect(result).toMatchObject({
      status: "ok",
      changed: false,
      changes: [],
      would_change: [],
      summary: "check: nothing would change; Docker 27.0.3 already installed; nothing changed",
      docker_version: "27.0.3",
      server_version: "27.0.3",
      verify: {
        mode: "hello-world",
        detail: "docker info: server version 27.0.3 (hello-world runs in a real run only)",
      },
      apt_update: { ran: false, reason: "nothing to install" },
    });
  });

  it(
    "service stopped, a user missing from the group, a recorded user to revoke: " + "the three lines, none of it done",
    async () => {
      const inventory = { version: 1, docker: { group_members: ["ubuntu", "deploy"] } };
      const state = running({ active: "inactive", users: { ubuntu: ["ubuntu", "docker"], ops: ["ops"] } });
      const { result, remote, error } = await run({ check: true, users: ["ops"] }, [
        os(),
        look(state),
        grantsRead(inventory),
      ]);
      expect(error).toBeUndefined();
      expect(remote.done).toBe(true); // no systemctl start, no usermod/gpasswd, no grants write, no docker info
      expectNothingChanged(remote);
      expect(result).toMatchObject({
        changed: false,
        changes: [],
        would_change: [
          "forgot: deploy in group docker (not a member now: removed since vm-install added them; a later grant is " +
            "the admin's, never revoked)",
          "started docker.service",
          "added ops to group docker",
          "revoked: removed ubuntu from group docker (added by vm-install, no longer in users)",
        ],
        users_added: [],
        revoked: [],
        docker_version: "27.0.3",
        verify: { mode: "hello-world", detail: "not verified (a real run verifies): docker.service is inactive" },
      });
      expect(result!.server_version).toBeUndefined();
    },
  );

  it("a daemon that does not answer: the restart is foreseen, not made", async () => {
    const down = {
      ...info(),
      code: 1,
      stdout: "",
      stderr: "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?\n",
    };
    const { result, remote, error } = await run({ check: true, verify: "daemon" }, [os(), look(running()), down]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expectNothingChanged(remote);
    // The real run's words, up to what only the restart would tell ("and passes it now").
    expect(result!.would_change).toEqual([
      expect.stringMatching(
        new RegExp(
          /^restarted docker\.service: the installed Docker failed its verification \(Docker was installed but /
            .source +
            /the daemon does not answer: `docker info` exited 1: Cannot connect to the Docker daemon .*\)$/.source,
        ),
      ),
    ]);
    expect(result!.would_change![0]).not.toContain("passes it now");
    expect(result!.server_version).toBeUndefined();
  });

  it(
    "distro channel without docker.io: the install apt would make, from the lists as they are; " + "no apt-get at all",
    async () => {
      const { result, remote, error } = await run({ check: true, channel: "distro" }, [
        os(DEBIAN_12),
        look({}),
        grantsRead(),
        policy(
          "docker.io docker-compose-v2 docker-compose-plugin docker-compose",
          policyBlock("docker.io", "20.10.24+dfsg1-1+b3") + policyBlock("docker-compose", "1.29.2-3"),
        ),
      ]);
      expect(error).toBeUndefined();
      expect(remote.done).toBe(true);
      expectNothingChanged(remote);
      expect(remote.implicit).toHaveLength(1); // dpkg's health looked at, as before any apt work
      expect(result).toMatchObject({
        changed: false,
        would_change: ["installed docker.io docker-compose", "added ubuntu to group docker"],
        warnings: [
          "the distribution's compose is docker-compose 1.29.2-3: compose v1 (Python), called as docker-compose; " +
            'channel "official" has v2',
        ],
        apt_update: { ran: false, reason: "nothing was installed, so the package lists were not refreshed" },
        packages: {},
        verify: { detail: "not verified (a real run verifies): Docker is not installed" },
      });
      expect(result!.docker_version).toBeUndefined();
    },
  );

  it(
    "distro channel, lists offering nothing: the install is still foreseen, with a warning that the lists may be " +
      "stale",
    async () => {
      const { result, error } = await run({ check: true, channel: "distro", compose: false, users: [] }, [
        os(),
        look({}),
        policy("docker.io", ""),
      ]);
      expect(error).toBeUndefined();
      expect(result!.would_change).toEqual(["installed docker.io"]);
      expect(result!.warnings).toEqual([
        "the VM's current package lists offer no docker.io: a real run refreshes them first, which may change that",
      ]);
    },
  );

  it(
    "official channel over docker.io: the repository's files, the removal and the install foreseen in the run's " +
      "lines; the key fetched and compared, nothing written",
    async () => {
      const dockerIo = {
        cli: "20.10.24+dfsg1",
        active: "active",
        enabled: "enabled",
        packages: { "docker.io": "20.10.24+dfsg1-1+b3", containerd: "1.6.20~ds1-1+b1", runc: "1.1.5+ds1-1+deb12u1" },
        group: ["ubuntu"],
        users: { ubuntu: ["docker"] },
      };
      const { result, remote, error } = await run({ check: true, compose: false }, [
        os(DEBIAN_12),
        look(dockerIo),
        keyFetch("debian"),
        keyCompare(officialLine("bookworm", "https://download.docker.com/linux/debian")),
        staleLook(),
        policy("docker-ce docker-ce-cli containerd.io docker-buildx-plugin", ""),
      ]);
      expect(error).toBeUndefined();
      expect(remote.done).toBe(true);
      expectNothingChanged(remote);
      // The boot look (apt's proxy file) and Docker's (docker.asc), the key fetch (the login user's), the compare
      // and the look at older sources (root's): none of them a change.
      const touching = remote.calls.filter((c) => /curl -f|\/etc\/apt\//.test(c.command));
      expect(touching.map((c) => [c.opts.label, !!c.opts.sudo, !!c.opts.mutates])).toEqual([
        ["reading /etc/os-release, cloud-init's state and the apt proxy file", false, false],
        ["checking Docker on the VM", false, false],
        ["fetching https://download.docker.com/linux/debian/gpg", false, false],
        ["comparing /etc/apt/keyrings/docker.gpg and /etc/apt/sources.list.d/docker.list", true, false],
        ["reading apt sources", true, false],
      ]);
      expect(result).toMatchObject({
        changed: false,
        would_change: [
          "wrote /etc/apt/keyrings/docker.gpg (new key)",
          "wrote /etc/apt/sources.list.d/docker.list (new source)",
          "removed docker.io containerd runc",
          "installed docker-ce docker-ce-cli containerd.io docker-buildx-plugin",
        ],
        docker_version: "20.10.24+dfsg1",
        removed: [],
        packages: { "docker.io": "20.10.24+dfsg1-1+b3", containerd: "1.6.20~ds1-1+b1", runc: "1.1.5+ds1-1+deb12u1" },
      });
      expect(result!.warnings).toEqual([
        expect.stringMatching(/^the VM's current package lists offer no docker-ce, docker-ce-cli, containerd\.io: /),
      ]);
      expect(result!.repository).toBeUndefined();
    },
  );

  it(
    "official channel from nothing: the prerequisites first; the key not fetched without curl, the new files " +
      "foreseen all the same; with the repository in the lists, what it lacks is skipped as a real run does",
    async () => {
      const withoutBuildx = officialOffer().replace(/docker-buildx-plugin:[\s\S]*?(?=docker-compose-plugin:)/, "");
      const { result, remote, error } = await run({ check: true, users: [] }, [
        os(),
        look({ curl: false, packages: { curl: "" } }),
        { match: "dpkg --print-architecture", sudo: false, stdout: "amd64\n" },
        keyCompare(officialLine()),
        staleLook(),
        policy(OFFICIAL_ALL, withoutBuildx),
      ]);
      expectNothingChanged(remote);
      expect(error).toBeUndefined();
      expect(result!.would_change).toEqual([
        "installed curl",
        "wrote /etc/apt/keyrings/docker.gpg (new key)",
        "wrote /etc/apt/sources.list.d/docker.list (new source)",
        "installed docker-ce docker-ce-cli containerd.io docker-compose-plugin",
      ]);
      expect(result!.warnings).toEqual([
        "docker-buildx-plugin is not offered by https://download.docker.com/linux/ubuntu; skipped",
      ]);
    },
  );
});
