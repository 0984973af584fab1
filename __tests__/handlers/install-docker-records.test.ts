// install-docker's records re-checked against the VM before use, and taking back what it replaced (issue 32,
// findings 3 and 4): a member or daemon.json key the admin removed by hand is forgotten on the run that sees
// it gone, so the admin's later grant of the same is never revoked; a value vm-install replaced is recorded
// and put back when its setting is taken back (a rerun, or state absent). Pure decisions, then the handler.
import { daemonTakeBack } from "../../handlers/install-docker/daemon-absent";
import { DAEMON_JSON, parseDaemonFile, planDaemonConfig } from "../../handlers/install-docker/daemon-config";
import { checkDaemonRecord, nextRecord } from "../../handlers/install-docker/daemon-record";
import { handler } from "../../handlers/install-docker/handler";
import { beforeWrite } from "./support/docker-journal";
import { dockerLook } from "./support/docker-look";
import { DEBIAN_12 } from "./support/fixtures";
import { GRANTS, grantsRead, grantsText, grantsWrite } from "./support/grants-steps";
import { renameOf } from "./support/remote-writes";
import { runScripted } from "./support/run-scripted";
import type { Step } from "./support/scripted-remote";

const OPTS = { "max-size": "10m", "max-file": "3" };
const ADMIN_OPTS = { "max-size": "100m", "max-file": "10" };
const ROTATED = { "log-driver": "json-file", "log-opts": OPTS };
const DEFAULTS = { log_rotation: true, log_max_size: "10m", log_max_file: 3, registry_mirrors: [], daemon_config: {} };
const file = (v: unknown) => parseDaemonFile(true, JSON.stringify(v, null, 2));
const rec = (written: object, replaced: object = {}) => ({ written: { ...written }, replaced: { ...replaced } });

describe("checkDaemonRecord: a key (or log option) no longer as vm-install wrote it is forgotten, with what it replaced", () => {
  it.each([
    ["removed by hand", { ...ROTATED }],
    ["changed by hand", { ...ROTATED, debug: false }],
    ["set again to another type", { ...ROTATED, debug: "true" }],
  ])("debug %s: forgotten, the rest kept", (_how, now) => {
    const record = rec({ ...ROTATED, debug: true }, { debug: false });
    expect(checkDaemonRecord(now, record)).toEqual({ record: rec(ROTATED), forgotten: ["debug"] });
  });

  it("log-opts option by option: one changed by hand is forgotten with the admin's value it had replaced", () => {
    const now = { "log-driver": "json-file", "log-opts": { "max-size": "50m", "max-file": "3" } };
    const record = rec(ROTATED, { "log-opts": ADMIN_OPTS });
    expect(checkDaemonRecord(now, record)).toEqual({
      record: rec({ "log-driver": "json-file", "log-opts": { "max-file": "3" } }, { "log-opts": { "max-file": "10" } }),
      forgotten: ["log-opts max-size"],
    });
  });

  it("a record the file bears out entirely is kept as it is", () => {
    const record = rec({ ...ROTATED, dns: ["10.0.0.53"] }, { dns: ["192.0.2.53"], "log-opts": ADMIN_OPTS });
    expect(checkDaemonRecord({ ...ROTATED, dns: ["10.0.0.53"], debug: true }, record)).toEqual({
      record,
      forgotten: [],
    });
  });
});

describe("take-back restores: the admin's value vm-install replaced is recorded and put back", () => {
  const admin = { "log-driver": "json-file", "log-opts": ADMIN_OPTS, dns: ["192.0.2.53"] };
  const s = { ...DEFAULTS, daemon_config: { dns: ["10.0.0.53"] } };

  it("the write records what it replaced: dns, and json-file's options by option", () => {
    const plan = planDaemonConfig(file(admin), s, true)!;
    expect(plan.recordAfter(rec({}))).toEqual(
      rec({ "log-opts": OPTS, dns: ["10.0.0.53"] }, { "log-opts": ADMIN_OPTS, dns: ["192.0.2.53"] }),
    );
    // A second write of a key vm-install already wrote keeps the admin's value, not vm-install's own.
    const again = nextRecord({ ...admin, dns: ["10.0.0.53"] }, { dns: ["10.0.0.99"] }, plan.recordAfter(rec({})));
    expect(again.replaced).toEqual({ dns: ["192.0.2.53"] });
  });

  it("a rerun no longer asking puts the admin's values back and says so", () => {
    const now = { ...admin, "log-opts": OPTS, dns: ["10.0.0.53"] };
    const record = rec({ "log-opts": OPTS, dns: ["10.0.0.53"] }, { "log-opts": ADMIN_OPTS, dns: ["192.0.2.53"] });
    const plan = planDaemonConfig(file(now), { ...DEFAULTS, log_rotation: false }, true, record)!;
    expect(JSON.parse(plan.next)).toEqual(admin);
    expect(plan.lines).toEqual([
      `${DAEMON_JSON}: restored log-opts {"max-size":"10m","max-file":"3"} -> {"max-size":"100m","max-file":"10"} (the admin's value vm-install replaced; no longer asked for)`,
      `${DAEMON_JSON}: restored dns ["10.0.0.53"] -> ["192.0.2.53"] (the admin's value vm-install replaced; no longer asked for)`,
      "restarted docker.service (log-opts, dns)",
    ]);
    expect(plan.recordAfter(record)).toEqual(rec({}));
  });

  it("another driver's options and the driver itself come back when log rotation is taken back", () => {
    const journald = { "log-driver": "journald", "log-opts": { tag: "{{.Name}}" } };
    const plan = planDaemonConfig(file(journald), DEFAULTS, true)!;
    const record = plan.recordAfter(rec({}));
    expect(record).toEqual(rec(ROTATED, journald));
    const back = planDaemonConfig(file(JSON.parse(plan.next)), { ...DEFAULTS, log_rotation: false }, true, record)!;
    expect(JSON.parse(back.next)).toEqual(journald);
  });

  it("state absent puts the admin's values back too, and removes what replaced nothing", () => {
    const now = { ...admin, "log-opts": OPTS, dns: ["10.0.0.53"], debug: true };
    const record = rec(
      { "log-opts": OPTS, dns: ["10.0.0.53"], debug: true },
      { "log-opts": ADMIN_OPTS, dns: ["192.0.2.53"] },
    );
    const plan = daemonTakeBack(file(now), record)!;
    expect(JSON.parse(plan.next!)).toEqual(admin);
    expect(plan).toMatchObject({
      removed: ["debug"],
      restored: ['log-opts {"max-size":"100m","max-file":"10"}', 'dns ["192.0.2.53"]'],
    });
  });
});

// ---------------------------------------------------------------------------------------------------
// The handler on the scripted double: Docker installed and running, admin in group docker.

const os: Step = { match: "cat /etc/os-release", sudo: false, facts: { os_release: DEBIAN_12 } };
const info: Step = { match: "docker info --format '{{.ServerVersion}}'", sudo: true, stdout: "20.10.24\n" };
const event = { channel: "distro", compose: false, users: ["admin"], verify: "daemon" };
/** The inventory read as an earlier step of the same run wrote it (the facts are asked for when it is read). */
const grantsAsWritten = (inventory: () => object): Step => ({
  match: `cat ${GRANTS}`,
  sudo: true,
  get facts() {
    return { grants: grantsText(inventory()) };
  },
});
const look = (daemonJson: object, members = "admin"): Step => {
  const step = dockerLook(JSON.stringify(daemonJson));
  return { ...step, facts: { ...step.facts, group: `docker:x:999:${members}\n` } };
};

describe("install-docker re-checks its records before acting on them (scripted double)", () => {
  it("the admin removed alice and debug: the run forgets both, touches neither; granted again, a rerun leaves them", async () => {
    const recorded = {
      version: 1,
      docker: { group_members: ["admin", "alice"], daemon_json: { ...ROTATED, debug: true } },
    };
    let written: Record<string, unknown> = {};
    const first = await runScripted(handler, event, [
      os,
      look(ROTATED),
      grantsRead(recorded),
      info,
      grantsRead(recorded),
      grantsWrite((w) => {
        written = w;
        expect(w.docker).toEqual({ group_members: ["admin"], daemon_json: ROTATED });
      }),
    ]);
    expect(first.error).toBeUndefined();
    expect(first.remote.done).toBe(true);
    // Only grants.json is written: no gpasswd, no daemon.json write, no restart.
    const acted = first.remote.calls.filter((c) => c.opts.mutates && !c.command.includes("grants.json"));
    expect(acted.map((c) => c.command)).toEqual([]);
    expect(first.result).toMatchObject({ changed: true, revoked: [] });
    expect(first.result?.changes).toEqual([
      "forgot: alice in group docker (not a member now: removed since vm-install added them; a later grant is the admin's, never revoked)",
      `forgot: ${DAEMON_JSON} debug (the file no longer holds what vm-install wrote: changed or removed since, the admin's now)`,
    ]);

    // The admin adds both again by hand: the same settings leave them (no gpasswd, no rewrite, no restart).
    const again = await runScripted(handler, event, [
      os,
      look({ ...ROTATED, debug: true }, "admin,alice"),
      grantsRead(written),
      info,
    ]);
    expect(again.error).toBeUndefined();
    expect(again.remote.done).toBe(true);
    expect(again.result).toMatchObject({ changed: false, changes: [], revoked: [] });
  });

  it("a check foresees the forgetting and writes nothing", async () => {
    const recorded = {
      version: 1,
      docker: { group_members: ["admin", "alice"], daemon_json: { ...ROTATED, debug: true } },
    };
    const { result, remote, error } = await runScripted(handler, { ...event, check: true }, [
      os,
      look(ROTATED),
      grantsRead(recorded),
      info,
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(remote.calls.filter((c) => c.opts.mutates)).toEqual([]);
    expect(result?.would_change).toHaveLength(2);
  });
});

describe("install-docker puts back the admin's values it replaced (scripted double)", () => {
  const ADMIN = { "log-driver": "json-file", "log-opts": ADMIN_OPTS, dns: ["192.0.2.53"] };
  const MINE = { ...ADMIN, "log-opts": OPTS, dns: ["10.0.0.53"] };
  const writes = (check: (v: unknown) => void): Step => ({
    match: renameOf(DAEMON_JSON),
    sudo: true,
    check: (_c, o) => check(JSON.parse(String(o.stdin))),
  });
  const restart: Step = { match: /systemctl restart docker\.service$/, sudo: true };

  it("dns and json-file's options replaced, recorded with the admin's values; taken back, the admin's values return", async () => {
    let inventory: Record<string, unknown> = {};
    const set = await runScripted(handler, { ...event, daemon_config: { dns: ["10.0.0.53"] } }, [
      os,
      look(ADMIN),
      grantsRead(),
      info,
      beforeWrite(JSON.stringify(ADMIN)),
      writes((v) => expect(v).toEqual(MINE)),
      restart,
      info,
      grantsRead(),
      grantsWrite((w) => {
        inventory = w;
        expect(w.docker).toEqual({
          daemon_json: { "log-opts": OPTS, dns: ["10.0.0.53"] },
          daemon_json_replaced: { "log-opts": ADMIN_OPTS, dns: ["192.0.2.53"] },
        });
      }),
      look(MINE),
      grantsAsWritten(() => inventory),
      info,
    ]);
    expect(set.error).toBeUndefined();
    expect(set.remote.done).toBe(true);

    const back = await runScripted(handler, { ...event, log_rotation: false }, [
      os,
      look(MINE),
      grantsRead(inventory),
      info,
      beforeWrite(JSON.stringify(MINE)),
      writes((v) => expect(v).toEqual(ADMIN)),
      restart,
      info,
      grantsRead(inventory),
      grantsWrite((w) => expect(w.docker).toEqual({ daemon_json: {} })),
      look(ADMIN),
      grantsRead({ version: 1, docker: { daemon_json: {} } }),
      info,
    ]);
    expect(back.error).toBeUndefined();
    expect(back.remote.done).toBe(true);
    expect(back.result?.changes).toEqual([
      `${DAEMON_JSON}: restored log-opts {"max-size":"10m","max-file":"3"} -> {"max-size":"100m","max-file":"10"} (the admin's value vm-install replaced; no longer asked for)`,
      `${DAEMON_JSON}: restored dns ["10.0.0.53"] -> ["192.0.2.53"] (the admin's value vm-install replaced; no longer asked for)`,
      "restarted docker.service (log-opts, dns)",
    ]);
  });
});
