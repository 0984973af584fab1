// State absent takes back only the daemon.json keys vm-install wrote and the file still holds as written.

import { daemonTakeBack } from "../../handlers/install-docker/daemon-absent";
import { parseDaemonFile } from "../../handlers/install-docker/daemon-config";

const file = (value: unknown) => parseDaemonFile(true, JSON.stringify(value));
const LOGS = { "log-driver": "json-file", "log-opts": { "max-size": "10m", "max-file": "3" } };
const wrote = (written: object, replaced: object = {}) => ({ written: { ...written }, replaced: { ...replaced } });

describe("daemonTakeBack", () => {
  it("plans nothing when nothing is recorded, whatever the file holds", () => {
    expect(daemonTakeBack(file({ ...LOGS, debug: true }), wrote({}))).toBeUndefined();
  });

  it("removes the file when it held only what vm-install wrote", () => {
    expect(daemonTakeBack(file(LOGS), wrote(LOGS))).toEqual({
      next: null,
      removed: ["log-driver", "log-opts"],
      restored: [],
      kept: [],
    });
  });

  it("keeps the admin's keys and log options, removing vm-install's", () => {
    const now = { ...LOGS, "log-opts": { ...LOGS["log-opts"], compress: "true" }, "userland-proxy": false };
    const plan = daemonTakeBack(file(now), wrote(LOGS));
    expect(plan?.removed).toEqual(["log-driver", "log-opts (the options vm-install set)"]);
    expect(JSON.parse(plan?.next ?? "null")).toEqual({ "log-opts": { compress: "true" }, "userland-proxy": false });
  });

  it("leaves a recorded key the admin changed since, and says so", () => {
    const mirrors = { "registry-mirrors": ["http://10.0.0.1:5000"] };
    const plan = daemonTakeBack(file({ "registry-mirrors": ["http://mine:5000"] }), wrote(mirrors));
    expect(plan).toEqual({ removed: [], restored: [], kept: ["registry-mirrors"] });
    expect(plan?.next).toBeUndefined();
  });

  it.each([
    ["no file", parseDaemonFile(false, "")],
    ["a file dockerd cannot read", parseDaemonFile(true, "{ not json")],
  ])("writes nothing with %s, only forgets the record", (_what, f) => {
    expect(daemonTakeBack(f, wrote(LOGS))).toEqual({ removed: [], restored: [], kept: ["log-driver", "log-opts"] });
  });
});
