// End-to-end: what install-docker records (group members it added, daemon.json keys it wrote and the values
// it replaced) stays true, on one sandbox VM (Debian's docker.io, channel "distro", verify "daemon"): a
// record the admin's hand edits left is forgotten and never acted on later, taking a setting back puts
// the admin's value back, and a reload's outcome is read from dockerd's running state (issue 32).
import type { Sandbox } from "../../dev/sandbox/index";
import { describeE2E, expectSucceeded, root, runInstaller, sandboxPerSuite } from "./support/e2e";

const T = 900_000;
const FILE = "/etc/docker/daemon.json";
const BASE = { channel: "distro", compose: false, verify: "daemon" };
/** The admin's own daemon.json before vm-install: json-file at 100m x 10, and a resolver. */
const ADMIN = { "log-driver": "json-file", "log-opts": { "max-size": "100m", "max-file": "10" }, dns: ["192.0.2.53"] };

const daemonJson = async (sb: Sandbox) => JSON.parse(await root(sb, `cat ${FILE}`));
const writeDaemonJson = (sb: Sandbox, value: object) =>
  root(sb, `printf '%s\\n' '${JSON.stringify(value)}' > ${FILE} && systemctl restart docker.service`);
const mainPid = async (sb: Sandbox) => (await root(sb, "systemctl show -p MainPID --value docker.service")).trim();
const members = async (sb: Sandbox) => (await root(sb, "getent group docker")).trim().split(":")[3].split(",");
const grants = async (sb: Sandbox) => JSON.parse(await root(sb, "cat /var/lib/vm-install/grants.json")).docker;
const fileStamp = (sb: Sandbox) => root(sb, `stat -c '%s %Y %i' ${FILE}; sha256sum ${FILE}`);

describeE2E("install-docker's records on a sandbox VM: re-checked before use, taken back to the admin's values", () => {
  let sb: Sandbox;
  sandboxPerSuite((s) => {
    sb = s;
  }, T);

  test(
    "a member and a key the admin removed are forgotten; granted again by hand, they stay; taken back, the admin's log-opts and dns return",
    async () => {
      await root(sb, "useradd -m alice && useradd -m bob && mkdir -p /etc/docker");
      await root(sb, `printf '%s\\n' '${JSON.stringify(ADMIN)}' > ${FILE}`);
      const first = await runInstaller(sb, "install-docker", {
        ...BASE,
        users: ["alice", "bob"],
        daemon_config: { debug: true, dns: ["10.0.0.53"] },
      });
      expectSucceeded(first);
      expect(first.result.changes).toEqual(
        expect.arrayContaining([
          `${FILE}: dns ["192.0.2.53"] -> ["10.0.0.53"]`,
          `${FILE}: log-opts {"max-size":"100m","max-file":"10"} -> {"max-size":"10m","max-file":"3"}`,
        ]),
      );
      expect(await members(sb)).toEqual(expect.arrayContaining(["alice", "bob"]));
      expect(await daemonJson(sb)).toEqual({
        ...ADMIN,
        "log-opts": { "max-size": "10m", "max-file": "3" },
        debug: true,
        dns: ["10.0.0.53"],
      });

      // The admin takes both back by hand.
      await root(sb, "gpasswd -d alice docker");
      const { debug: _, ...withoutDebug } = await daemonJson(sb);
      await writeDaemonJson(sb, withoutDebug);
      const settings = { ...BASE, users: ["bob"], daemon_config: { dns: ["10.0.0.53"] } };
      const stamp = await fileStamp(sb);
      const pid = await mainPid(sb);
      const forget = await runInstaller(sb, "install-docker", settings);
      expectSucceeded(forget);
      expect(forget.result.revoked).toEqual([]);
      expect(await fileStamp(sb)).toBe(stamp);
      expect(await mainPid(sb)).toBe(pid);

      // The admin grants both again: theirs now. The next run with the same settings leaves them.
      await root(sb, "usermod -aG docker alice");
      await writeDaemonJson(sb, { ...withoutDebug, debug: true });
      const pid2 = await mainPid(sb);
      const again = await runInstaller(sb, "install-docker", settings);
      expectSucceeded(again);
      expect(await members(sb)).toEqual(expect.arrayContaining(["alice", "bob"]));
      expect((await daemonJson(sb)).debug).toBe(true);
      expect(await mainPid(sb)).toBe(pid2);
      expect((await root(sb, "docker info --format '{{.Debug}}'")).trim()).toBe("true");
      expect(again.result).toMatchObject({ changed: false, changes: [], revoked: [] });
      // The run that saw them gone said it forgot them, and the inventory no longer lists them.
      expect(forget.result.changes).toEqual([
        expect.stringMatching(/^forgot: alice in group docker \(not a member now/),
        expect.stringMatching(/^forgot: \/etc\/docker\/daemon\.json debug \(the file no longer holds/),
      ]);
      const forgotten = await grants(sb);
      expect(forgotten.group_members).toEqual(["bob"]);
      expect(forgotten.daemon_json).not.toHaveProperty("debug");

      // Log rotation and dns taken back: the values vm-install replaced come back, said so in changes.
      const back = await runInstaller(sb, "install-docker", { ...BASE, users: ["bob"], log_rotation: false });
      expectSucceeded(back);
      expect(back.result.changes).toEqual(
        expect.arrayContaining([
          `${FILE}: restored log-opts {"max-size":"10m","max-file":"3"} -> {"max-size":"100m","max-file":"10"} (the admin's value vm-install replaced; no longer asked for)`,
          `${FILE}: restored dns ["10.0.0.53"] -> ["192.0.2.53"] (the admin's value vm-install replaced; no longer asked for)`,
        ]),
      );
      expect(await daemonJson(sb)).toEqual({ ...ADMIN, debug: true });
      expect(await members(sb)).toEqual(expect.arrayContaining(["alice", "bob"]));
      const left = await grants(sb);
      expect(left.daemon_json).toEqual({});
      const rerun = await runInstaller(sb, "install-docker", { ...BASE, users: ["bob"], log_rotation: false });
      expectSucceeded(rerun);
      expect(rerun.result).toMatchObject({ changed: false, changes: [] });
    },
    T,
  );

  test(
    "a reload is judged by dockerd's running state: a label that reads like a log level is accepted, a refused value rolled back without a configuration dump",
    async () => {
      const event = { ...BASE, users: ["bob"], log_rotation: false };
      expectSucceeded(await runInstaller(sb, "install-docker", event));
      const pid = await mainPid(sb);
      const label = await runInstaller(sb, "install-docker", {
        ...event,
        daemon_config: { labels: ["note=level=error"] },
      });
      expectSucceeded(label);
      expect(label.result.changes).toEqual([
        `${FILE}: labels (unset) -> ["note=level=error"]`,
        "reloaded docker.service (labels: applied without a restart)",
      ]);
      expect(await mainPid(sb)).toBe(pid);
      expect(JSON.parse(await root(sb, "docker info --format '{{json .Labels}}'"))).toEqual(["note=level=error"]);
      expect((await daemonJson(sb)).labels).toEqual(["note=level=error"]);

      const before = await root(sb, `cat ${FILE}`);
      const refused = await runInstaller(sb, "install-docker", {
        ...event,
        daemon_config: { labels: ["note=level=error", "b=2"], debug: "yes" },
      });
      expect(refused.phase).toBe("Failed");
      expect(refused.message).toMatch(
        /dockerd did not accept \/etc\/docker\/daemon\.json with labels, debug set as asked/,
      );
      expect(refused.message).toMatch(/dockerd kept running on it \(not restarted\)/);
      expect(refused.message).not.toMatch(/Reloaded configuration/);
      for (const line of refused.message.split("\n")) expect(line.length).toBeLessThanOrEqual(400);
      expect(await root(sb, `cat ${FILE}`)).toBe(before);
      expect(await mainPid(sb)).toBe(pid);
      expect(JSON.parse(await root(sb, "docker info --format '{{json .Labels}}'"))).toEqual(["note=level=error"]);
    },
    T,
  );

  test(
    "state absent puts back the admin's dns and log-opts vm-install replaced, keeps their debug and alice's membership",
    async () => {
      const event = { ...BASE, users: ["bob"] };
      const set = await runInstaller(sb, "install-docker", { ...event, daemon_config: { dns: ["10.0.0.53"] } });
      expectSucceeded(set);
      expect(await daemonJson(sb)).toEqual({
        ...ADMIN,
        "log-opts": { "max-size": "10m", "max-file": "3" },
        dns: ["10.0.0.53"],
        debug: true,
      });
      const absent = await runInstaller(sb, "install-docker", { ...event, state: "absent" });
      expectSucceeded(absent);
      expect(absent.result.changes).toEqual(
        expect.arrayContaining([
          `${FILE}: restored log-opts {"max-size":"100m","max-file":"10"}, dns ["192.0.2.53"] (the admin's values vm-install replaced)`,
        ]),
      );
      // The admin's file as they left it: their log options, their resolver, their debug.
      expect(await daemonJson(sb)).toEqual({ ...ADMIN, debug: true });
      // docker.io went (vm-install installed it); group docker stays while alice, the admin's, is in it.
      expect(await members(sb)).toEqual(["alice"]);
      const again = await runInstaller(sb, "install-docker", { ...event, state: "absent" });
      expectSucceeded(again);
      expect(again.result).toMatchObject({ changed: false, changes: [] });
    },
    T,
  );
});
