// daemon.json keys vm-install wrote are taken back when the settings stop asking for them, as group
// members are: only what the inventory records, only while the file still holds what vm-install wrote;
// an admin's key of the same name is never removed. Pure decisions first, then the handler on the
// scripted double (a check foresees the removal; a run removes, restarts and records).
import { DAEMON_JSON, parseDaemonFile, planDaemonConfig } from "../../handlers/install-docker/daemon-config";
import { nextRecord } from "../../handlers/install-docker/daemon-record";
import { handler } from "../../handlers/install-docker/handler";
import { beforeWrite } from "./support/docker-journal";
import { dockerLook } from "./support/docker-look";
import { DEBIAN_12 } from "./support/fixtures";
import { grantsRead } from "./support/grants-steps";
import { renameOf } from "./support/remote-writes";
import { runScripted } from "./support/run-scripted";
import type { Step } from "./support/scripted-remote";

const DEFAULTS = { log_rotation: true, log_max_size: "10m", log_max_file: 3, registry_mirrors: [], daemon_config: {} };
const file = (v: unknown) => parseDaemonFile(true, JSON.stringify(v, null, 2));
const MIRROR = "http://10.200.1.1:5000";
const OPTS = { "max-size": "10m", "max-file": "3" };
const ROTATED = { "log-driver": "json-file", "log-opts": OPTS };
/** A record of what vm-install wrote, none of it replacing an admin's value. */
const wrote = (written: object, replaced: object = {}) => ({ written: { ...written }, replaced: { ...replaced } });

describe("planDaemonConfig with the inventory's record: what vm-install wrote and is no longer asked is removed", () => {
  it("registryMirrors [] after vm-install set a mirror: removed, admin's keys kept, a restart", () => {
    const now = { ...ROTATED, "registry-mirrors": [MIRROR], "userland-proxy": false };
    const plan = planDaemonConfig(file(now), DEFAULTS, true, wrote({ "registry-mirrors": [MIRROR] }))!;
    expect(plan).toBeDefined();
    expect(JSON.parse(plan.next)).toEqual({ ...ROTATED, "userland-proxy": false });
    expect(plan.lines).toEqual([
      `${DAEMON_JSON}: removed registry-mirrors ["${MIRROR}"] (written by vm-install, no longer asked for)`,
      "restarted docker.service (registry-mirrors)",
    ]);
    // A reload keeps a setting whose key is gone from the file: only a restart drops the mirror.
    expect(plan.restart).toBe(true);
    expect(plan.recordAfter(wrote({ "registry-mirrors": [MIRROR] }))).toEqual(wrote({}));
  });

  it.each([
    ["not recorded (the admin's own)", {}],
    ["recorded with another value (changed since by the admin)", { "registry-mirrors": ["https://old.example"] }],
    ["recorded under another key", { "live-restore": true }],
  ])("an empty registryMirrors leaves a registry-mirrors %s", (_why, recorded) => {
    const now = { ...ROTATED, "registry-mirrors": ["https://by-hand.example"] };
    expect(planDaemonConfig(file(now), DEFAULTS, true, wrote(recorded))).toBeUndefined();
  });

  it("a key dropped from daemonConfig is removed when vm-install wrote it; one it did not write is kept", () => {
    const now = { ...ROTATED, "live-restore": true, debug: true };
    const plan = planDaemonConfig(file(now), DEFAULTS, true, wrote({ "live-restore": true }))!;
    expect(JSON.parse(plan.next)).toEqual({ ...ROTATED, debug: true });
    expect(plan.changed).toEqual(["live-restore"]);
  });

  it("logRotation false: log-driver and vm-install's log-opts removed, the admin's log options kept", () => {
    const now = { "log-driver": "json-file", "log-opts": { ...OPTS, labels: "app" } };
    const recorded = wrote({ "log-driver": "json-file", "log-opts": OPTS });
    const plan = planDaemonConfig(file(now), { ...DEFAULTS, log_rotation: false }, true, recorded)!;
    expect(JSON.parse(plan.next)).toEqual({ "log-opts": { labels: "app" } });
    expect(plan.lines).toContain(
      `${DAEMON_JSON}: removed log-driver "json-file" (written by vm-install, no longer asked for)`,
    );
    const fully = planDaemonConfig(file(ROTATED), { ...DEFAULTS, log_rotation: false }, true, recorded)!;
    expect(JSON.parse(fully.next)).toEqual({});
    // An option the admin changed since is theirs now.
    const changed = { "log-driver": "json-file", "log-opts": { "max-size": "50m", "max-file": "3" } };
    const kept = planDaemonConfig(file(changed), { ...DEFAULTS, log_rotation: false }, true, recorded)!;
    expect(JSON.parse(kept.next)).toEqual({ "log-opts": { "max-size": "50m" } });
  });

  it("records what it changed or had recorded; a value the file already held as asked stays the admin's", () => {
    expect(nextRecord({}, { ...ROTATED }, wrote({}))).toEqual(wrote(ROTATED));
    const admin = { "log-driver": "json-file", "log-opts": { "max-size": "10m", labels: "a" } };
    const owned = { "log-driver": "json-file", "log-opts": { labels: "a", ...OPTS }, "registry-mirrors": [MIRROR] };
    expect(nextRecord(admin, owned, wrote({}))).toEqual(
      wrote({ "log-opts": { "max-file": "3" }, "registry-mirrors": [MIRROR] }),
    );
    expect(nextRecord({ ...ROTATED }, { ...ROTATED }, wrote(ROTATED))).toEqual(wrote(ROTATED));
  });
});

// The handler on the scripted double: Docker installed and running, a mirror vm-install wrote, an admin key.
const look = (daemonJson: unknown): Step => dockerLook(JSON.stringify(daemonJson));
const os: Step = { match: "cat /etc/os-release", sudo: false, facts: { os_release: DEBIAN_12 } };
const info: Step = { match: "docker info --format '{{.ServerVersion}}'", sudo: true, stdout: "20.10.24\n" };
const event = { channel: "distro", compose: false, users: ["admin"], verify: "daemon", registry_mirrors: [] };
const NOW = { ...ROTATED, "registry-mirrors": [MIRROR], "userland-proxy": false };
const INVENTORY = {
  version: 1,
  docker: { group_members: ["admin"], daemon_json: { ...ROTATED, "registry-mirrors": [MIRROR] } },
};
const grants: Step = grantsRead(INVENTORY);
const REMOVED = [
  `${DAEMON_JSON}: removed registry-mirrors ["${MIRROR}"] (written by vm-install, no longer asked for)`,
  "restarted docker.service (registry-mirrors)",
];

describe("install-docker takes back the daemon.json keys it wrote (scripted double)", () => {
  it("check mode foresees the removal and changes nothing", async () => {
    const { result, remote, error } = await runScripted(handler, { ...event, check: true }, [
      os,
      look(NOW),
      grants,
      info,
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(remote.calls.filter((c) => c.opts.mutates)).toEqual([]);
    expect(result).toMatchObject({ changed: false, would_change: REMOVED });
  });

  it("a run removes the key, restarts, and records the rest (group members kept)", async () => {
    const { result, remote, error } = await runScripted(handler, event, [
      os,
      look(NOW),
      grants,
      info,
      beforeWrite(`${JSON.stringify(NOW)}`),
      {
        match: renameOf(DAEMON_JSON),
        sudo: true,
        check: (_c, o) => expect(JSON.parse(String(o.stdin))).toEqual({ ...ROTATED, "userland-proxy": false }),
      },
      { match: /systemctl restart docker\.service$/, sudo: true },
      info,
      grants,
      {
        match: "/var/lib/vm-install/.grants.json.XXXXXX",
        sudo: true,
        check: (_c, o) => {
          expect(o.mutates).toBe(true);
          expect(JSON.parse(String(o.stdin)).docker).toEqual({ group_members: ["admin"], daemon_json: ROTATED });
        },
      },
      look({ ...ROTATED, "userland-proxy": false }),
      grantsRead({ ...INVENTORY, docker: { daemon_json: ROTATED } }),
      info,
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(result?.changes).toEqual(REMOVED);
  });
});
