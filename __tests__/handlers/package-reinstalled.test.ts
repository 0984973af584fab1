// Issue 32: a recorded package the admin removed and installed again since vm-install installed it is theirs.
// Each transaction's record carries the time its first dpkg run began (apt-transaction.ts); state absent reads
// dpkg.log and its rotations in its one look (dpkg-log.ts) and keeps, names and forgets such a package. The
// class: remove and purge after the time, the same second on either side of the job's own install, upgrades and
// --reinstall (no removal), logs that begin too late or are not root's, and records without times.
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { DPKG_LOG_PROBE, type DpkgLog, dpkgLogFrom, provenance } from "../../handlers/common/dpkg-log";
import { parsePackageInventory, withAdded } from "../../handlers/common/package-inventory";
import { REMOVAL_LOOK } from "../../handlers/common/removal";
import { handler } from "../../handlers/install-packages/handler";
import { DEBIAN_12, dpkgLine } from "./support/fixtures";
import type { Answer } from "./support/look-answers";
import { runScripted } from "./support/run-scripted";
import type { Step } from "./support/scripted-remote";

const T = "2026-12-05 10:00:00";
const logFact = (text: string, code = 0) => ({ name: "removal.dpkg_log", writer: "root", code, text }) as const;
const log = (...lines: string[]): DpkgLog => dpkgLogFrom(logFact(`${lines.join("\n")}\n`));
const START = "2026-11-01 06:25:01 startup archives unpack";

describe("provenance: dpkg.log's removals since the transaction's time", () => {
  it.each([
    ["purge", "2026-12-05 11:00:00 purge jq:amd64 1.6-2.1 <none>"],
    ["remove", "2026-12-06 09:00:00 remove jq:amd64 1.6-2.1 <none>"],
  ])("a %s logged after it: removed and installed again", (_action, line) => {
    expect(provenance(log(START, `${T} install jq:amd64 <none> 1.6-2.1`, line), "jq", T)).toMatchObject({
      verdict: "reinstalled",
      removal: { time: line.slice(0, 19), pkg: "jq" },
    });
  });

  it("upgrades, --reinstall (an upgrade to the same version) and other packages' removals leave it ours", () => {
    const lines = log(
      START,
      `${T} install jq:amd64 <none> 1.6-2.1`,
      "2026-12-05 12:00:00 upgrade jq:amd64 1.6-2.1 1.6-2.1",
      "2026-12-05 13:00:00 upgrade jq:amd64 1.6-2.1 1.6-2.2",
      "2026-12-05 14:00:00 purge jqx:amd64 1 <none>",
      "2026-12-05 14:00:00 remove libjq1:amd64 1.6-2.1 <none>",
    );
    expect(provenance(lines, "jq", T)).toEqual({ verdict: "ours" });
  });

  it("a removal before the time is what made room for the job's install: ours", () => {
    const lines = log(START, "2026-12-04 08:00:00 purge jq:amd64 1.6-2.1 <none>", `${T} install jq:amd64 <none> 1`);
    expect(provenance(lines, "jq", T)).toEqual({ verdict: "ours" });
  });

  it("in the time's own second: a removal before the job's install is not counted, one after it is", () => {
    const before = log(START, `${T} remove jq:amd64 1 <none>`, `${T} install jq:amd64 <none> 1`);
    expect(provenance(before, "jq", T)).toEqual({ verdict: "ours" });
    const after = log(
      START,
      `${T} install jq:amd64 <none> 1`,
      `${T} purge jq:amd64 1 <none>`,
      `${T} install jq:all <none> 1`,
    );
    expect(provenance(after, "jq", T).verdict).toBe("reinstalled");
  });

  it("logs that cannot say: they begin after the time, none, empty, not root's alone, unreadable", () => {
    const late = log("2026-12-05 10:00:01 startup archives unpack");
    expect(provenance(late, "jq", T)).toEqual({
      verdict: "unknown",
      why: `dpkg's log begins at 2026-12-05 10:00:01, after vm-install installed it (${T})`,
    });
    const why = (code: number, text = "") =>
      (provenance(dpkgLogFrom(logFact(text, code)), "jq", T) as { why: string }).why;
    expect(why(3)).toBe("the VM has no /var/log/dpkg.log");
    expect(why(0)).toBe("/var/log/dpkg.log is empty");
    expect(why(4)).toMatch(/is not root's alone/);
    expect(why(5)).toBe("reading /var/log/dpkg.log* failed (exit 5)");
  });
});

describe("the probe's script in sh, on a stand-in /var/log (the tests run as root, as it does)", () => {
  const run = (files: Record<string, string>, mode: Record<string, number> = {}) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "dpkg-log-"));
    for (const [name, text] of Object.entries(files)) {
      const file = path.join(dir, name.replace(/\.gz$/, ""));
      fs.writeFileSync(file, text);
      fs.chmodSync(file, mode[name] ?? 0o644);
      if (name.endsWith(".gz")) execFileSync("gzip", [file]);
    }
    const r = spawnSync("sh", ["-c", DPKG_LOG_PROBE.command.replace("cd /var/log", `cd ${dir}`)], { encoding: "utf8" });
    fs.rmSync(dir, { recursive: true });
    return { code: r.status, text: r.stdout };
  };
  const line = (day: string, rest: string) => `2026-12-${day} 10:00:00 ${rest}\n`;

  it("oldest first through the rotations (plain and gzip), up to a hole; the first line and the three actions", () => {
    const out = run({
      "dpkg.log.3.gz": line("01", "startup archives unpack") + line("01", "install a:amd64 <none> 1"),
      "dpkg.log.2.gz": line("02", "status installed a:amd64 1") + line("02", "remove a:amd64 1 <none>"),
      "dpkg.log.1": line("03", "upgrade b:all 1 2") + line("03", "purge a:amd64 1 <none>"),
      "dpkg.log": line("04", "install a:amd64 <none> 1"),
      "dpkg.log.5.gz": line("00", "purge z:amd64 1 <none>"),
    });
    expect(out).toEqual({
      code: 0,
      text:
        line("01", "startup archives unpack") +
        line("01", "install a:amd64 <none> 1") +
        line("02", "remove a:amd64 1 <none>") +
        line("03", "purge a:amd64 1 <none>") +
        line("04", "install a:amd64 <none> 1"),
    });
  });

  it("no dpkg.log: exit 3; a rotation group or other writable: exit 4, nothing printed", () => {
    expect(run({}).code).toBe(3);
    expect(run({ "dpkg.log": "x\n", "dpkg.log.1": "y\n" }, { "dpkg.log.1": 0o664 })).toEqual({ code: 4, text: "" });
  });
});

describe("the record's times", () => {
  it("a transaction's packages get its time, a later transaction's its own; lists without one keep theirs", () => {
    const first = withAdded({ packages: [], groups: [], users: [], files: [] }, { packages: ["jq", "libjq1"], at: T });
    expect(first.installedAt).toEqual({ jq: T, libjq1: T });
    const again = withAdded(first, { packages: ["jq"], at: "2026-12-07 10:00:00" });
    expect(again.installedAt).toEqual({ jq: "2026-12-07 10:00:00", libjq1: T });
    expect(withAdded(again, { files: ["/etc/x"] }).installedAt).toEqual(again.installedAt);
    expect(withAdded({ packages: ["a"], groups: [], users: [], files: [] }, { packages: ["b"] })).not.toHaveProperty(
      "installedAt",
    );
  });

  it("a file's times are read only for listed packages and in dpkg's form", () => {
    const text = JSON.stringify({
      version: 1,
      installers: { packages: { packages: ["jq"], installedAt: { jq: T, gone: T, bad: "yesterday" } } },
    });
    expect(parsePackageInventory(text).installers.packages.installedAt).toEqual({ jq: T });
  });
});

describe("install-packages with state absent, dpkg's log read in the same look (scripted VM)", () => {
  const rel = (name: string, depends = "") => `ii \t${name}\t\t\t${depends}\n`;
  const RELATIONS = rel("jq", "libjq1") + rel("libjq1", "libonig5") + rel("libonig5") + rel("curl");
  const timed = { jq: T, libjq1: T, libonig5: T };
  const inventory = (installedAt: Record<string, string> | null) =>
    JSON.stringify({ version: 1, installers: { packages: { packages: ["jq", "libjq1", "libonig5"], installedAt } } });
  const look = (dpkgLog: Answer, installedAt: Record<string, string> | null = timed): Step => ({
    match: REMOVAL_LOOK.script,
    sudo: true,
    facts: {
      "inventory.packages": inventory(installedAt),
      "removal.dpkg": RELATIONS,
      "removal.groups": "root:0:\n",
      "removal.users": "root:0\n",
      "removal.dpkg_log": dpkgLog,
    },
  });
  const os: Step = { match: "cat /etc/os-release", sudo: false, facts: { os_release: DEBIAN_12 } };
  const event = { packages: ["jq"], state: "absent" };
  const ALL = "jq libjq1 libonig5";
  const purged: Step[] = [
    { match: `apt-get purge -s -q ${ALL}`, sudo: false, stdout: "Purg jq [1]\nPurg libjq1 [1]\nPurg libonig5 [1]\n" },
    { match: new RegExp(`apt-get purge -y -q .* ${ALL}$`), sudo: true },
    {
      match: `dpkg-query -W`,
      sudo: false,
      code: 1,
      stdout: ALL.split(" ")
        .map((p) => dpkgLine(p))
        .join(""),
    },
    { match: "dpkg --audit", sudo: false },
  ];
  const REINSTALLED = `${START}\n${T} install jq:amd64 <none> 1\n2026-12-05 11:00:00 purge jq:amd64 1 <none>\n`;

  it("purged and installed again by the admin: kept and named, what it needs kept, and jq forgotten", async () => {
    const { result, remote, error } = await runScripted(handler, event, [os, look(REINSTALLED)]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({ removed: [], kept: ["libjq1", "libonig5"], changes: [] });
    expect(result?.warnings).toEqual([
      "jq was removed and installed again since vm-install installed it: kept (dpkg.log: purge at 2026-12-05 11:00:00)",
      "kept libjq1: jq (not installed by this installer) depends on it",
      "kept libonig5: libjq1 (not installed by this installer) depends on it",
    ]);
    expect(JSON.parse(remote.packageInventory!).installers.packages).toEqual({
      packages: ["libjq1", "libonig5"],
      groups: [],
      users: [],
      files: [],
      installedAt: { libjq1: T, libonig5: T },
    });
  });

  it.each([
    ["nobody touched it", `${START}\n${T} install jq:amd64 <none> 1\n`, timed],
    ["upgraded and reinstalled (--reinstall)", `${START}\n2026-12-06 01:00:00 upgrade jq:amd64 1 1\n`, timed],
    ["a record of an older version (no times): today's rule", REINSTALLED, null],
  ])("%s: all three go", async (_case, dpkgLog, installedAt) => {
    const { result, error } = await runScripted(handler, event, [os, look(dpkgLog, installedAt), ...purged]);
    expect(error).toBeUndefined();
    expect(result).toMatchObject({ removed: ALL.split(" "), kept: [], warnings: [] });
  });

  it("logs that begin after the record's time: nothing is removed, each named, all still recorded", async () => {
    const { result, remote } = await runScripted(handler, event, [os, look("2026-12-06 00:00:00 startup x\n")]);
    expect(result).toMatchObject({ removed: [], kept: ["jq", "libjq1", "libonig5"], changed: false });
    expect(result?.warnings[0]).toBe(
      "kept jq: vm-install cannot tell whether it was removed and installed again since it installed it (dpkg's " +
        `log begins at 2026-12-06 00:00:00, after vm-install installed it (${T})); if it is still vm-install's, ` +
        "remove it by hand (apt-get purge jq)",
    );
    expect(remote.packageInventory).toBeUndefined();
  });
});
