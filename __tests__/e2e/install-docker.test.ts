// End-to-end: install-docker as a job runs it (bundled, started by the job runner) against sandbox VMs,
// a fresh one per test. What the job promises is checked on the target itself (systemctl, dpkg, apt,
// files, a new SSH session as the user), never only by reading the handler's result.
//
//   distro channel:   Debian's real docker.io and compose (the release's own: support/release.ts); a container runs from an image the test builds
//                     on the target from its own files and imports from a tarball (no registry reachable).
//   official channel: a signed apt repository laid out like download.docker.com, served by this process
//                     on the host's end of the sandbox's veth (fixtures/docker-repo.ts: tiny test-double
//                     packages with Docker's names), so the key, the signed-by source, the stale-source
//                     clean-up and the conflict removal run for real against apt. Its key is a throwaway
//                     one, so its fingerprint is given as repo_key_fingerprint; left at Docker's default,
//                     the job must refuse the key and leave the VM as it was.
//   a smuggled key:   the same repository signed by its own key, serving Docker's real key with its own
//                     hidden beside it (another armour block): apt must never get to trust it, so no
//                     package of that repository runs its maintainer script.
// Under CI=true a missing prerequisite fails the suite (describeE2E).

import type { Sandbox } from "../../dev/sandbox/index";
import { DOCKER_KEY_FINGERPRINT } from "../../handlers/install-docker/definition";
import { armour, pgpKey } from "../handlers/support/pgp-fixtures";
import { FAKE_COMPOSE_VERSION, FAKE_DOCKER_VERSION } from "./fixtures/docker-repo";
import {
  describeE2E,
  dpkgStatus,
  expectSucceeded,
  perTest,
  root,
  runInstaller,
  sshUser,
  vmFingerprint,
} from "./support/e2e";
import { FACTS, RELEASE } from "./support/release";
import { dockerIoByApt } from "./support/snapshots";

const T = 900_000;

/** Size, mtime and hash of what any apt/dpkg run would touch: unchanged means no package work happened. */
async function packageState(sb: Sandbox): Promise<string> {
  return root(
    sb,
    "for f in /var/lib/dpkg/status /var/log/dpkg.log /var/log/apt/history.log /var/lib/apt/periodic/update-success-stamp /etc/apt/sources.list.d/docker.list /etc/apt/keyrings/docker.gpg /etc/apt/keyrings/docker.asc; do " +
      'if [ -e "$f" ]; then echo "$f $(stat -c "%s %Y" "$f") $(sha256sum < "$f" | cut -c1-16)"; else echo "$f -"; fi; done',
  );
}

describeE2E("install-docker on sandbox VMs, through the bundle and the job runner", () => {
  let sb: Sandbox | undefined;
  const started = perTest(T);

  test(
    "distro channel: docker.io runs, an imported image runs a container, the user has docker in a new session; rerun changes nothing",
    async () => {
      sb = await started.sandbox();
      const run = await runInstaller(sb, "install-docker", { channel: "distro", verify: "daemon" });
      expectSucceeded(run);
      const r = run.result;
      expect(r).toMatchObject({
        status: "ok",
        channel: "distro",
        users_added: [sb.user],
        compose: true,
        verify: { mode: "daemon" },
      });
      expect(r.docker_version).toMatch(FACTS.dockerIo); // the release's docker.io
      // Debian 12 offers only compose v1 (Python): picked by candidate, called as docker-compose, noted.
      // Debian 13's docker-compose is v2: called as the plugin, no warning.
      expect(r.compose_command).toBe(FACTS.compose.command);
      expect(r.compose_version).toMatch(FACTS.compose.version);
      if (FACTS.compose.v1) expect(r.warnings.join("\n")).toMatch(/compose v1/);
      else expect(r.warnings).toEqual([]);
      expect(r.changes).toEqual(
        expect.arrayContaining([`installed docker.io ${FACTS.compose.package}`, `added ${sb.user} to group docker`]),
      );

      const status = await dpkgStatus(sb, ["docker.io", FACTS.compose.package]);
      expect(status).toEqual({ "docker.io": "install ok installed", [FACTS.compose.package]: "install ok installed" });
      expect((await root(sb, "systemctl is-active docker")).trim()).toBe("active");
      expect((await root(sb, "systemctl is-enabled docker")).trim()).toBe("enabled");
      expect((await root(sb, "docker info --format '{{.ServerVersion}}'")).trim()).toBe(r.server_version);

      // A NEW session as the user: the group applies, no sudo. The image is the target's own dash and the
      // libraries ldd names, tarred and imported: nothing comes from a registry.
      const ps = await sshUser(sb, "id -nG; docker ps");
      expect(ps.code).toBe(0);
      expect(ps.stdout.split("\n")[0].split(" ")).toContain("docker");
      expect(ps.stdout).toMatch(/CONTAINER ID\s+IMAGE/);
      const container = await sshUser(
        sb,
        "set -e; cd /tmp; files=$(ldd /usr/bin/dash | grep -o '/[^ ]*' | sed 's#^/##'); " +
          "tar -C / -chf mini.tar usr/bin/dash $files; docker import mini.tar vm-install/mini:e2e >/dev/null; " +
          "docker run --rm vm-install/mini:e2e /usr/bin/dash -c 'echo hello from an imported image'",
        180_000,
      );
      expect({ code: container.code, stderr: container.code ? container.stderr : "" }).toEqual({ code: 0, stderr: "" });
      expect(container.stdout.trim()).toBe("hello from an imported image");
      expect((await sshUser(sb, "docker-compose --version")).stdout).toMatch(FACTS.compose.standalone);
      // The command the result names works for the user and reports the version the result gave.
      const composeCmd = await sshUser(sb, `${r.compose_command} version`);
      expect({ code: composeCmd.code, stderr: composeCmd.stderr }).toEqual({ code: 0, stderr: "" });
      expect(composeCmd.stdout).toContain(r.compose_version);

      // Rerun: already installed, no package work at all, nothing changed on the target.
      const before = await packageState(sb);
      const again = await runInstaller(sb, "install-docker", { channel: "distro", verify: "daemon" });
      expectSucceeded(again);
      expect(again.result).toMatchObject({
        status: "ok",
        changed: false,
        changes: [],
        users_added: [],
        docker_version: r.docker_version,
        compose: true,
      });
      expect(again.lines.filter((l) => /apt-get|apt-cache/.test(l))).toEqual([]);
      expect(await packageState(sb)).toBe(before);

      // Check mode: the service stopped and the user taken out of the group by hand. The check names both
      // and changes nothing on the VM; a real run then puts both right, and a second check finds nothing.
      await root(sb, `systemctl stop docker.service docker.socket && gpasswd -d ${sb.user} docker`);
      const unchecked = await vmFingerprint(sb);
      // docker.service, then docker.socket (systemctl show prints one block per unit, in the order asked).
      expect(
        unchecked.started
          .split("\n\n")
          .slice(0, 2)
          .map((unit) => /ActiveState=(\S+)/.exec(unit)?.[1]),
      ).toEqual(["inactive", "inactive"]);
      const check = await runInstaller(sb, "install-docker", { channel: "distro", verify: "daemon", check: true });
      expectSucceeded(check);
      expect(check.result).toMatchObject({
        status: "ok",
        changed: false,
        changes: [],
        would_change: ["started docker.service", `added ${sb.user} to group docker`],
        users_added: [],
        docker_version: r.docker_version,
      });
      expect(check.result.summary).toMatch(/^check: 2 changes would be made: started docker\.service; added /);
      expect(await vmFingerprint(sb)).toEqual(unchecked);
      const fixed = await runInstaller(sb, "install-docker", { channel: "distro", verify: "daemon" });
      expectSucceeded(fixed);
      expect(fixed.result.changes).toEqual(["started docker.service", `added ${sb.user} to group docker`]);
      const clean = await runInstaller(sb, "install-docker", { channel: "distro", verify: "daemon", check: true });
      expectSucceeded(clean);
      expect(clean.result).toMatchObject({ changed: false, would_change: [], server_version: r.server_version });

      // What it granted, it takes back; what it did not grant, it leaves. "byhand" joins the group before
      // any run lists it; the first run added the login user (the default users), so a run listing only
      // u1 and u2 takes that back; then u2 is dropped from users.
      await root(sb, "for u in u1 u2 byhand; do useradd -m $u; done; usermod -aG docker byhand");
      const vm = sb;
      const members = async () =>
        (await root(vm, "getent group docker")).trim().split(":")[3].split(",").filter(Boolean).sort();
      const both = await runInstaller(sb, "install-docker", {
        channel: "distro",
        verify: "daemon",
        users: ["u1", "u2"],
      });
      expectSucceeded(both);
      expect(both.result).toMatchObject({ users_added: ["u1", "u2"], revoked: [`group docker: ${sb.user}`] });
      expect(await members()).toEqual(["byhand", "u1", "u2"]);

      const one = await runInstaller(sb, "install-docker", { channel: "distro", verify: "daemon", users: ["u1"] });
      expectSucceeded(one);
      expect(one.result).toMatchObject({ changed: true, users_added: [], revoked: ["group docker: u2"] });
      expect(one.result.changes).toContain(
        "revoked: removed u2 from group docker (added by vm-install, no longer in users)",
      );
      expect(await members()).toEqual(["byhand", "u1"]); // byhand was never the project's to take away
      expect(
        (await root(sb, "stat -c '%U:%G %a' /var/lib/vm-install /var/lib/vm-install/grants.json")).trim().split("\n"),
      ).toEqual(["root:root 700", "root:root 600"]);
      // Beside the members, what the first run wrote into daemon.json (log rotation, the default).
      expect(JSON.parse(await root(sb, "cat /var/lib/vm-install/grants.json")).docker).toEqual({
        group_members: ["u1"],
        daemon_json: { "log-driver": "json-file", "log-opts": { "max-size": "10m", "max-file": "3" } },
      });
    },
    T,
  );

  test(
    "official channel: Docker's layout from repo_url, keyring + signed-by source, packages from that repo, daemon verified; rerun touches nothing",
    async () => {
      sb = await started.sandbox();
      const repo = await started.dockerRepo({ host: sb.hostAddress, suite: RELEASE });
      // An apt-key era leftover for the same repository: must go, or apt would see two entries for one URI.
      await root(
        sb,
        `echo 'deb [arch=amd64] ${repo.url}/debian ${RELEASE} stable' > /etc/apt/sources.list.d/docker-ce.list`,
      );

      // A check first: the key fetched and checked, key and source compared on the VM as root, nothing written.
      const event = { repo_url: repo.url, repo_key_fingerprint: repo.fingerprint, verify: "daemon" };
      const unchecked = await vmFingerprint(sb);
      const check = await runInstaller(sb, "install-docker", { ...event, check: true });
      expectSucceeded(check);
      expect(await vmFingerprint(sb)).toEqual(unchecked);

      const run = await runInstaller(sb, "install-docker", event);
      expectSucceeded(run);
      const r = run.result;
      // The repository's lines are the run's (the packages after them come from lists the run refreshes).
      expect(check.result.would_change.slice(0, 3)).toEqual(r.changes.slice(0, 3));
      const line = `deb [arch=amd64 signed-by=/etc/apt/keyrings/docker.gpg] ${repo.url}/debian ${RELEASE} stable`;
      expect(r).toMatchObject({
        status: "ok",
        channel: "official",
        docker_version: FAKE_DOCKER_VERSION,
        server_version: FAKE_DOCKER_VERSION,
        compose: true,
        compose_version: FAKE_COMPOSE_VERSION,
        compose_command: "docker compose",
        users_added: [sb.user],
        removed: [],
        repository: {
          uri: `${repo.url}/debian`,
          suite: RELEASE,
          line,
          keyring: "/etc/apt/keyrings/docker.gpg",
          source_file: "/etc/apt/sources.list.d/docker.list",
        },
        apt_update: { ran: true, reason: "an apt source changed" },
        packages: {
          "docker-ce": repo.versions["docker-ce"],
          "docker-ce-cli": repo.versions["docker-ce-cli"],
          "containerd.io": repo.versions["containerd.io"],
          "docker-compose-plugin": repo.versions["docker-compose-plugin"],
        },
      });
      expect(r.warnings).toEqual([`docker-buildx-plugin is not offered by ${repo.url}/debian; skipped`]);
      // (/etc/apt/keyrings ships with apt on Debian 12 and 13, so it is not created.)
      expect(r.changes).toEqual([
        "wrote /etc/apt/keyrings/docker.gpg (new key)",
        "wrote /etc/apt/sources.list.d/docker.list (new source)",
        "removed /etc/apt/sources.list.d/docker-ce.list",
        "installed docker-ce docker-ce-cli containerd.io docker-compose-plugin",
        // Log rotation is on by default: daemon.json is written and dockerd (re)started on it.
        '/etc/docker/daemon.json: log-driver (unset) -> "json-file"',
        '/etc/docker/daemon.json: log-opts (unset) -> {"max-size":"10m","max-file":"3"}',
        "restarted docker.service (log-driver, log-opts)",
        "enabled docker.service",
        `added ${sb.user} to group docker`,
      ]);

      // On the target: the keyring is the served key rebuilt as binary (what gpg --export writes for it),
      // world-readable; the one source line; the packages come from that repository.
      expect(await root(sb, "base64 -w0 /etc/apt/keyrings/docker.gpg")).toBe(repo.publicKeyBinary.toString("base64"));
      expect(
        (await root(sb, "stat -c '%a %U' /etc/apt/keyrings /etc/apt/keyrings/docker.gpg")).trim().split("\n"),
      ).toEqual(["755 root", "644 root"]);
      expect(await root(sb, "cat /etc/apt/sources.list.d/docker.list")).toBe(`${line}\n`);
      expect(await root(sb, "grep -rl docker /etc/apt/sources.list.d /etc/apt/sources.list 2>/dev/null || true")).toBe(
        "/etc/apt/sources.list.d/docker.list\n",
      );
      const policy = await root(sb, "LC_ALL=C apt-cache policy docker-ce");
      expect(policy).toContain(`Installed: ${repo.versions["docker-ce"]}`);
      expect(policy).toContain(`500 ${repo.url}/debian ${RELEASE}/stable amd64 Packages`);
      expect((await root(sb, "systemctl is-active docker")).trim()).toBe("active");

      // The group is real: the socket is root:docker 0660, so a new session of the user gets through.
      const ps = await sshUser(sb, "docker ps && docker compose version");
      expect({ code: ps.code, stderr: ps.stderr }).toEqual({ code: 0, stderr: "" });
      expect(ps.stdout).toContain(`Docker Compose version v${FAKE_COMPOSE_VERSION}`);

      // Rerun: already installed; not even the repository is asked for anything.
      const served = repo.requests.length;
      const before = await packageState(sb);
      const again = await runInstaller(sb, "install-docker", {
        repo_url: repo.url,
        repo_key_fingerprint: repo.fingerprint,
        verify: "daemon",
      });
      expectSucceeded(again);
      expect(again.result).toMatchObject({
        status: "ok",
        changed: false,
        changes: [],
        docker_version: FAKE_DOCKER_VERSION,
      });
      expect(repo.requests.length).toBe(served);
      expect(await packageState(sb)).toBe(before);

      // A VM an earlier version set up: the served armour as docker.asc, the source signed by it, Docker
      // itself complete. apt trusts whatever that file holds, so the next run moves it to the rebuilt
      // docker.gpg and takes the .asc away although no package is missing; the run after that changes nothing.
      await root(
        sb,
        `rm /etc/apt/keyrings/docker.gpg && echo 'deb [arch=amd64 signed-by=/etc/apt/keyrings/docker.asc] ${repo.url}/debian ${RELEASE} stable' > /etc/apt/sources.list.d/docker.list`,
      );
      await sb.rootExec("cat > /etc/apt/keyrings/docker.asc && chmod 644 /etc/apt/keyrings/docker.asc", {
        input: repo.publicKey,
      });
      const migrated = await runInstaller(sb, "install-docker", {
        repo_url: repo.url,
        repo_key_fingerprint: repo.fingerprint,
        verify: "daemon",
      });
      expectSucceeded(migrated);
      expect(migrated.result.changes).toEqual([
        "wrote /etc/apt/keyrings/docker.gpg (replaces /etc/apt/keyrings/docker.asc)",
        "wrote /etc/apt/sources.list.d/docker.list (line differed)",
        "removed /etc/apt/keyrings/docker.asc",
      ]);
      expect(await root(sb, "ls -A /etc/apt/keyrings")).toBe("docker.gpg\n");
      expect(await root(sb, "cat /etc/apt/sources.list.d/docker.list")).toBe(`${line}\n`);
      expect(await root(sb, "base64 -w0 /etc/apt/keyrings/docker.gpg")).toBe(repo.publicKeyBinary.toString("base64"));
      expect(await root(sb, "LC_ALL=C apt-cache policy docker-ce")).toContain(
        `500 ${repo.url}/debian ${RELEASE}/stable amd64 Packages`,
      );
      const settled = await packageState(sb);
      const after = await runInstaller(sb, "install-docker", {
        repo_url: repo.url,
        repo_key_fingerprint: repo.fingerprint,
        verify: "daemon",
      });
      expectSucceeded(after);
      expect(after.result).toMatchObject({ changed: false, changes: [] });
      expect(await packageState(sb)).toBe(settled);
    },
    T,
  );

  test(
    "official channel over docker.io: Docker's real key served with a second key hidden in another armour block, the repository signed by that one: " +
      "refused naming it, no maintainer script of the repository ran, no trace in /etc/apt, docker.io still runs",
    async () => {
      sb = await started.sandbox(await dockerIoByApt());
      const marker = "/var/lib/vm-install-e2e-smuggled-postinst";
      const repo = await started.dockerRepo({
        host: sb.hostAddress,
        suite: RELEASE,
        postinstMarker: marker,
        servedKey: (own) => Buffer.concat([pgpKey("docker-release.asc"), armour("PGP MESSAGE", own.binary)]),
      });
      const keyringsBefore = await root(sb, "ls -A /etc/apt/keyrings");

      // The default repo_key_fingerprint: Docker's key is there, as the check expects; the repository's own is not.
      const run = await runInstaller(sb, "install-docker", { repo_url: repo.url, verify: "daemon", compose: false });
      expect(run.phase).toBe("Failed");
      expect(run.message).toContain(
        `holds more than the expected key ${DOCKER_KEY_FINGERPRINT}: besides it, key ${repo.fingerprint} (not expected)`,
      );
      expect(run.message).toContain('a second armour block, "-----BEGIN PGP MESSAGE-----"');
      expect(run.message).toContain("Nothing was written to the VM (no key, no source)");

      expect(await root(sb, `ls ${marker} 2>&1; true`)).toMatch(/No such file or directory/);
      expect(await root(sb, `grep -r ${new URL(repo.url).host} /etc/apt; echo "grep exit $?"`)).toBe("grep exit 1\n");
      expect(await root(sb, "ls -A /etc/apt/keyrings")).toBe(keyringsBefore);
      expect(repo.requests).toEqual(["/linux/debian/gpg"]); // apt never read the repository
      const status = await dpkgStatus(sb, ["docker.io", "docker-ce"]);
      expect(status["docker.io"]).toBe("install ok installed");
      expect(status["docker-ce"]).not.toBe("install ok installed"); // dpkg may list the name, as not installed
      expect((await root(sb, "systemctl is-active docker")).trim()).toBe("active");
      expect((await root(sb, "docker info --format '{{.ServerVersion}}'")).trim()).toMatch(FACTS.dockerIo);
    },
    T,
  );

  test(
    "official channel over docker.io: a repository whose key is not Docker's fails and leaves no trace, docker.io still runs; " +
      "with its fingerprint given, the conflicting distribution packages are removed, Docker's installed from the test repository (buildx plugin included)",
    async () => {
      sb = await started.sandbox(await dockerIoByApt());
      expect((await root(sb, "systemctl is-active docker")).trim()).toBe("active");
      const conflicting = FACTS.dockerIoConflicting;
      expect(await dpkgStatus(sb, conflicting)).toEqual(
        Object.fromEntries(conflicting.map((p) => [p, "install ok installed"])),
      );
      // With docker-buildx-plugin, which dpkg will not unpack over a docker-buildx still installed (Debian 13).
      const repo = await started.dockerRepo({ host: sb.hostAddress, suite: RELEASE, buildx: true });
      const hostPort = new URL(repo.url).host;
      const keyringsBefore = await root(sb, "ls -A /etc/apt/keyrings");

      // Default repo_key_fingerprint (Docker's): the test repository's own key must be refused.
      const refused = await runInstaller(sb, "install-docker", {
        repo_url: repo.url,
        verify: "daemon",
        compose: false,
      });
      expect(refused.phase).toBe("Failed");
      expect(refused.message).toContain(
        `the key at ${repo.url}/debian/gpg for apt repository docker is not the expected key: expected ${DOCKER_KEY_FINGERPRINT}, served ${repo.fingerprint}`,
      );
      expect(refused.message).toContain("nothing was written to the VM");
      // On the VM: no trace of the repository in /etc/apt, no new keyring, docker.io untouched and working.
      expect(await root(sb, `grep -r ${hostPort} /etc/apt; echo "grep exit $?"`)).toBe("grep exit 1\n");
      expect(await root(sb, "ls -A /etc/apt/keyrings")).toBe(keyringsBefore);
      expect((await dpkgStatus(sb, ["docker.io"]))["docker.io"]).toBe("install ok installed");
      expect((await root(sb, "systemctl is-active docker")).trim()).toBe("active");
      expect((await root(sb, "docker info --format '{{.ServerVersion}}'")).trim()).toMatch(FACTS.dockerIo);
      expect(repo.requests).toEqual(["/linux/debian/gpg"]); // apt never read the repository

      const run = await runInstaller(sb, "install-docker", {
        repo_url: repo.url,
        repo_key_fingerprint: repo.fingerprint,
        verify: "daemon",
        compose: false,
      });
      expectSucceeded(run);
      const r = run.result;
      expect(r.status).toBe("ok");
      expect(r.removed).toEqual(expect.arrayContaining(conflicting));
      // The key is verified and in place before anything is removed.
      expect(r.changes.indexOf("wrote /etc/apt/keyrings/docker.gpg (new key)")).toBe(0);
      expect(r.changes).toContain(`removed ${r.removed.join(" ")}`);
      expect(run.lines).toContain(
        `[install-docker] removing packages that conflict with Docker's: ${conflicting.join(" ")}`,
      );
      expect(r.changes).toContain("installed docker-ce docker-ce-cli containerd.io docker-buildx-plugin");
      expect(r.docker_version).toBe(FAKE_DOCKER_VERSION);

      const status = await dpkgStatus(sb, [
        ...conflicting,
        "docker-ce",
        "docker-ce-cli",
        "containerd.io",
        "docker-buildx-plugin",
        "docker-compose-plugin",
      ]);
      for (const p of conflicting) expect({ [p]: status[p] }).not.toEqual({ [p]: "install ok installed" });
      expect(status["docker-ce"]).toBe("install ok installed");
      expect(status["containerd.io"]).toBe("install ok installed");
      expect(status["docker-buildx-plugin"]).toBe("install ok installed");
      expect((await root(sb, "dpkg -S /usr/libexec/docker/cli-plugins/docker-buildx")).trim()).toBe(
        "docker-buildx-plugin: /usr/libexec/docker/cli-plugins/docker-buildx",
      );
      expect(status["docker-compose-plugin"]).toBeUndefined(); // compose: false
      expect(await root(sb, "LC_ALL=C apt-cache policy docker-ce")).toContain(
        `500 ${repo.url}/debian ${RELEASE}/stable amd64 Packages`,
      );
      expect((await root(sb, "systemctl is-active docker")).trim()).toBe("active");
      expect((await root(sb, "docker --version")).trim()).toBe(`Docker version ${FAKE_DOCKER_VERSION}, build fake000`);
      expect((await sshUser(sb, "docker info --format '{{.ServerVersion}}'")).stdout.trim()).toBe(FAKE_DOCKER_VERSION);
    },
    T,
  );
});
