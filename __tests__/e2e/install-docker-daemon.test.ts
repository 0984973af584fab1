// End-to-end: /etc/docker/daemon.json as settings and registry mirrors, proven on one sandbox VM (Debian's
// docker.io, channel "distro"). The mirror is Debian's real docker-registry on the host's end of the
// sandbox's veth (fixtures/hello-registry.ts), serving a hello-world built here; the sandbox has no other
// way to a registry (a pull without the mirror fails), so verify "hello-world" passing proves the path.
// The cases run in order on the one VM: install + log rotation, a check and a reload for the mirror,
// a rollback of a file dockerd refuses, a mirror that does not answer, the mirror taken back.
import type { Sandbox } from "../../dev/sandbox/index";
import { busyboxIsStatic, freePort, type HelloRegistry, startHelloRegistry } from "./fixtures/hello-registry";
import { describeE2E, expectSucceeded, root, runInstaller, sandboxPerSuite, vmFingerprint } from "./support/e2e";

const T = 900_000;
const FILE = "/etc/docker/daemon.json";

const daemonJson = async (sb: Sandbox) => JSON.parse(await root(sb, `cat ${FILE}`));
const fileStamp = (sb: Sandbox) => root(sb, `stat -c '%s %Y %i' ${FILE}; sha256sum ${FILE}`);
const mainPid = async (sb: Sandbox) => (await root(sb, "systemctl show -p MainPID --value docker.service")).trim();

describeE2E("install-docker: daemon.json and registry mirrors on a sandbox VM (docker-registry as the mirror)", () => {
  let sb: Sandbox;
  let registry: HelloRegistry | undefined;
  sandboxPerSuite((s) => {
    sb = s;
  }, T);
  beforeAll(async () => {
    expect(busyboxIsStatic()).toBe(true);
    registry = await startHelloRegistry(sb.hostAddress);
  }, 120_000);
  afterAll(async () => {
    await registry?.stop();
  }, 60_000);

  test(
    "install: log rotation is on by default (json-file, max-size, max-file), foreseen by a check, dockerd restarted for it; a rerun changes nothing",
    async () => {
      const lines = [
        `${FILE}: log-driver (unset) -> "json-file"`,
        `${FILE}: log-opts (unset) -> {"max-size":"10m","max-file":"3"}`,
        "restarted docker.service (log-driver, log-opts)",
      ];
      // A check of the bare VM foresees the file with the packages; it writes nothing.
      const check = await runInstaller(sb, "install-docker", {
        channel: "distro",
        verify: "daemon",
        compose: false,
        check: true,
      });
      expectSucceeded(check);
      expect(check.result.would_change).toEqual(expect.arrayContaining(lines));
      expect((await sb.rootExec(`test -e ${FILE}`)).code).not.toBe(0);
      const run = await runInstaller(sb, "install-docker", { channel: "distro", verify: "daemon", compose: false });
      expectSucceeded(run);
      expect(run.result.changes).toEqual(expect.arrayContaining(lines));
      expect(await daemonJson(sb)).toEqual({
        "log-driver": "json-file",
        "log-opts": { "max-size": "10m", "max-file": "3" },
      });
      expect((await root(sb, "docker info --format '{{.LoggingDriver}}'")).trim()).toBe("json-file");
      // Nothing else reaches a registry: Docker Hub is not reachable from the sandbox, and no mirror is set.
      const pull = await sb.rootExec("timeout 120 docker pull hello-world");
      expect(pull.code).not.toBe(0);

      const stamp = await fileStamp(sb);
      const pid = await mainPid(sb);
      const again = await runInstaller(sb, "install-docker", { channel: "distro", verify: "daemon", compose: false });
      expectSucceeded(again);
      expect(again.result).toMatchObject({ changed: false, changes: [] });
      expect(await fileStamp(sb)).toBe(stamp);
      expect(await mainPid(sb)).toBe(pid);
    },
    T,
  );

  test(
    "registryMirrors: a check foresees it and changes nothing; the run reloads (no restart), keeps the admin's keys, and hello-world comes through the mirror",
    async () => {
      const mirror = registry!.url;
      // An admin's own key, written by hand: never dropped.
      await root(sb, `sed -i '1s/^{/{"userland-proxy": false, /' ${FILE}`);
      expect((await daemonJson(sb))["userland-proxy"]).toBe(false);
      const event = { channel: "distro", compose: false, registry_mirrors: [mirror] };
      const lines = [
        `${FILE}: registry-mirrors (unset) -> ${JSON.stringify([mirror])}`,
        "reloaded docker.service (registry-mirrors: applied without a restart)",
      ];

      const before = await vmFingerprint(sb);
      const stamp = await fileStamp(sb);
      const check = await runInstaller(sb, "install-docker", { ...event, check: true });
      expectSucceeded(check);
      expect(check.result).toMatchObject({ changed: false, changes: [], would_change: lines });
      expect(await vmFingerprint(sb)).toEqual(before);
      expect(await fileStamp(sb)).toBe(stamp);

      const pid = await mainPid(sb);
      const run = await runInstaller(sb, "install-docker", event); // verify: the default, "hello-world"
      expectSucceeded(run);
      expect(run.result.changes).toEqual(lines);
      expect(run.result.verify).toEqual({
        mode: "hello-world",
        detail: "docker run --rm hello-world: Hello from Docker!",
      });
      expect(await mainPid(sb)).toBe(pid); // reloaded, not restarted
      expect(await daemonJson(sb)).toEqual({
        "userland-proxy": false,
        "log-driver": "json-file",
        "log-opts": { "max-size": "10m", "max-file": "3" },
        "registry-mirrors": [mirror],
      });
      // dockerd uses the mirror (no insecure-registries needed for an http:// mirror) ...
      expect(JSON.parse(await root(sb, "docker info --format '{{json .RegistryConfig.Mirrors}}'"))).toEqual([
        `${mirror}/`,
      ]);
      expect(
        JSON.parse(await root(sb, "docker info --format '{{json .RegistryConfig.IndexConfigs}}'")),
      ).not.toHaveProperty(mirror.replace(/^http:\/\//, ""));
      // ... and the image came from it: the registry served the manifest, and the VM has the image as Hub's name.
      const fromVm = `${sb.address} - - \\[[^\\]]*\\] "(HEAD|GET) /v2/library/hello-world/`;
      expect(registry!.log()).toMatch(new RegExp(`${fromVm}manifests/latest`));
      expect(registry!.log()).toMatch(new RegExp(`${fromVm}blobs/sha256:`));
      expect((await root(sb, "docker image inspect --format '{{.Config.Cmd}}' hello-world")).trim()).toBe("[/hello]");
    },
    T,
  );

  test(
    "a pass-through key dockerd refuses: rolled back, dockerd serving on the old file, the job failing with dockerd's words",
    async () => {
      const stamp = await fileStamp(sb);
      const old = await root(sb, `cat ${FILE}`);
      const run = await runInstaller(sb, "install-docker", {
        channel: "distro",
        compose: false,
        verify: "daemon",
        registry_mirrors: [registry!.url],
        daemon_config: { "no-such-option": true },
      });
      expect(run.phase).toBe("Failed");
      expect(run.message).toMatch(
        /dockerd did not accept \/etc\/docker\/daemon\.json with no-such-option set as asked/,
      );
      // dockerd's own words, from its journal.
      expect(run.message).toMatch(/the following directives don't match any configuration option: no-such-option/);
      expect(run.message).toMatch(/Rolled back: \/etc\/docker\/daemon\.json put back as it was/);
      expect(await root(sb, `cat ${FILE}`)).toBe(old);
      expect((await fileStamp(sb)).split("\n")[1]).toBe(stamp.split("\n")[1]);
      expect((await root(sb, "systemctl is-active docker.service")).trim()).toBe("active");
      expect((await root(sb, "docker info --format '{{.ServerVersion}}'")).trim()).toMatch(/^[0-9]/);

      // A key dockerd re-reads on SIGHUP (debug) with a value it refuses: the reload's error, the same roll back,
      // and dockerd never restarted.
      const pid = await mainPid(sb);
      const reload = await runInstaller(sb, "install-docker", {
        channel: "distro",
        compose: false,
        verify: "daemon",
        registry_mirrors: [registry!.url],
        daemon_config: { debug: "yes" },
      });
      expect(reload.phase).toBe("Failed");
      expect(reload.message).toMatch(
        /dockerd did not accept \/etc\/docker\/daemon\.json with debug set as asked; dockerd said:\n.*level=error/,
      );
      expect(reload.message).toMatch(/Rolled back: \/etc\/docker\/daemon\.json put back as it was/);
      expect(reload.message).toMatch(/dockerd kept running on it \(not restarted\), serving/);
      expect(await root(sb, `cat ${FILE}`)).toBe(old);
      expect(await mainPid(sb)).toBe(pid);
      expect((await root(sb, "docker info --format '{{.ServerVersion}}'")).trim()).toMatch(/^[0-9]/);
    },
    T,
  );

  test(
    "a mirror that does not answer: hello-world's verification fails naming the mirror",
    async () => {
      const dead = `http://${sb.hostAddress}:${await freePort(sb.hostAddress)}`;
      await root(sb, "docker rmi -f hello-world >/dev/null 2>&1; true");
      const run = await runInstaller(sb, "install-docker", {
        channel: "distro",
        compose: false,
        registry_mirrors: [dead],
      });
      expect(run.phase).toBe("Failed");
      expect(run.message).toMatch(`registry mirror ${dead}/ does not answer`);
      expect(run.message).toMatch(/docker run --rm hello-world` failed/);
      // The setting was applied as asked (the mirror is the VM's problem, not the file's).
      expect((await daemonJson(sb))["registry-mirrors"]).toEqual([dead]);
    },
    T,
  );

  test(
    "registryMirrors [] takes back the mirror vm-install wrote (restart, admin's keys kept, recorded no more); an admin's registry-mirrors survives it",
    async () => {
      const mirror = registry!.url;
      const event = { channel: "distro", compose: false, verify: "daemon" };
      const set = await runInstaller(sb, "install-docker", { ...event, registry_mirrors: [mirror] });
      expectSucceeded(set);
      expect((await daemonJson(sb))["registry-mirrors"]).toEqual([mirror]);
      const grants = async () => JSON.parse(await root(sb, "cat /var/lib/vm-install/grants.json"));
      expect((await grants()).docker.daemon_json["registry-mirrors"]).toEqual([mirror]);

      const lines = [
        `${FILE}: removed registry-mirrors ${JSON.stringify([mirror])} (written by vm-install, no longer asked for)`,
        "restarted docker.service (registry-mirrors)",
      ];
      const stamp = await fileStamp(sb);
      const check = await runInstaller(sb, "install-docker", { ...event, registry_mirrors: [], check: true });
      expectSucceeded(check);
      expect(check.result).toMatchObject({ changed: false, would_change: lines });
      expect(await fileStamp(sb)).toBe(stamp);

      const pid = await mainPid(sb);
      const run = await runInstaller(sb, "install-docker", { ...event, registry_mirrors: [] });
      expectSucceeded(run);
      expect(run.result.changes).toEqual(lines);
      expect(await daemonJson(sb)).toEqual({
        "userland-proxy": false,
        "log-driver": "json-file",
        "log-opts": { "max-size": "10m", "max-file": "3" },
      });
      // dockerd itself dropped the mirror (a reload would have kept it): restarted.
      expect(await mainPid(sb)).not.toBe(pid);
      // No mirror left: dockerd 20 says [], dockerd 26 (trixie) null.
      const mirrors = JSON.parse(await root(sb, "docker info --format '{{json .RegistryConfig.Mirrors}}'"));
      expect(mirrors ?? []).toEqual([]);
      expect((await grants()).docker.daemon_json).not.toHaveProperty("registry-mirrors");
      expect((await root(sb, "stat -c '%a %U' /var/lib/vm-install/grants.json")).trim()).toBe("600 root");
      const again = await runInstaller(sb, "install-docker", { ...event, registry_mirrors: [] });
      expectSucceeded(again);
      expect(again.result).toMatchObject({ changed: false, changes: [] });

      // The admin writes the same mirror by hand: it is theirs, and registryMirrors [] leaves it.
      await root(sb, `sed -i '1s|^{|{"registry-mirrors": ["${mirror}"], |' ${FILE} && systemctl restart docker`);
      const admin = await root(sb, `cat ${FILE}`);
      const kept = await runInstaller(sb, "install-docker", { ...event, registry_mirrors: [] });
      expectSucceeded(kept);
      expect(kept.result).toMatchObject({ changed: false, changes: [] });
      expect(await root(sb, `cat ${FILE}`)).toBe(admin);
      expect((await daemonJson(sb))["registry-mirrors"]).toEqual([mirror]);
    },
    T,
  );
});
