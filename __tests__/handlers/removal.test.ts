// state absent: which recorded packages a removal may take (removal.ts's rule, over the class of
// relations dpkg has: plain, alternatives, virtual packages, chains), and install-packages' absent run
// over the scripted double, check mode included (what an install records: apt-transaction.test.ts).
import { parseRelations, REMOVAL_LOOK, removalSet } from "../../handlers/common/removal";
import { handler } from "../../handlers/install-packages/handler";
import { withoutEntries } from "../../handlers/install-postgres/absent";
import { DEBIAN_12, dpkgLine } from "./support/fixtures";
import { runScripted } from "./support/run-scripted";
import type { Step } from "./support/scripted-remote";

/** One DEPENDENCY_SCRIPT line: "ii " state, name, provides, pre-depends, depends. */
const rel = (name: string, depends = "", provides = "", state = "ii ") =>
  `${state}\t${name}\t${provides}\t\t${depends}\n`;

describe("parseRelations", () => {
  it("reads groups, alternatives, arch qualifiers and versions; skips what is not there", () => {
    const present = parseRelations(
      rel("jq", "libjq1 (= 1.6-2.1), libc6 (>= 2.34)") +
        rel("x", "perl:any (>= 5.10) | perl-base, libonig5") +
        rel("postfix", "", "mail-transport-agent, default-mta (= 1)") +
        rel("gone", "jq", "", "rc ") +
        rel("never", "jq", "", "un "),
    );
    expect([...present.keys()]).toEqual(["jq", "x", "postfix"]);
    expect(present.get("jq")!.depends).toEqual([["libjq1"], ["libc6"]]);
    expect(present.get("x")!.depends).toEqual([["perl", "perl-base"], ["libonig5"]]);
    expect(present.get("postfix")!.provides).toEqual(["mail-transport-agent", "default-mta"]);
  });
});

describe("removalSet: the recorded packages nothing that stays depends on", () => {
  const vm = parseRelations(
    rel("jq", "libjq1, libc6") +
      rel("libjq1", "libonig5, libc6") +
      rel("libonig5", "libc6") +
      rel("libc6") +
      rel("curl", "libc6"),
  );

  it("takes every recorded package still there, in the record's order, and skips the ones already gone", () => {
    expect(removalSet(["jq", "libjq1", "libonig5", "gone-already"], vm)).toEqual({
      remove: ["jq", "libjq1", "libonig5"],
      kept: [],
    });
  });

  it("keeps what a package that stays needs, and what that needs in turn", () => {
    const withKeeper = parseRelations(
      rel("jq", "libjq1") + rel("libjq1", "libonig5") + rel("libonig5") + rel("keeper", "libjq1"),
    );
    const set = removalSet(["jq", "libjq1", "libonig5"], withKeeper);
    expect(set.remove).toEqual(["jq"]);
    expect(set.kept).toEqual([
      { name: "libjq1", neededBy: "keeper" },
      { name: "libonig5", neededBy: "libjq1" },
    ]);
  });

  it("an alternative a staying package satisfies needs none of ours; one only ours satisfy keeps them all", () => {
    const alt = parseRelations(rel("a", "ours1 | theirs") + rel("b", "ours2 | ours3") + rel("theirs"));
    const vmAlt = new Map([...alt, ...parseRelations(rel("ours1") + rel("ours2") + rel("ours3"))]);
    const set = removalSet(["ours1", "ours2", "ours3"], vmAlt);
    expect(set.remove).toEqual(["ours1"]);
    expect(set.kept.map((k) => k.name).sort()).toEqual(["ours2", "ours3"]);
  });

  it("a virtual package provided only by ours keeps its provider", () => {
    const mta = parseRelations(rel("postfix", "", "mail-transport-agent") + rel("mailer", "mail-transport-agent"));
    expect(removalSet(["postfix"], mta)).toEqual({ remove: [], kept: [{ name: "postfix", neededBy: "mailer" }] });
  });

  it("a recorded package that depends on a foreign one is still taken (only the reverse keeps anything)", () => {
    expect(removalSet(["curl"], vm).remove).toEqual(["curl"]);
  });
});

describe("install-packages with state absent (scripted VM)", () => {
  const inventory = JSON.stringify({ version: 1, installers: { packages: { packages: ["jq", "libjq1", "htop"] } } });
  /** The one look before a removal (as root): the inventory, dpkg's relations, groups, users. */
  const look = (o: { inventory?: string; relations?: string; groups?: string; users?: string } = {}): Step => ({
    match: REMOVAL_LOOK.script,
    sudo: true,
    facts: {
      "inventory.packages": `${o.inventory ?? inventory}\n`,
      "removal.dpkg": o.relations ?? rel("jq", "libjq1") + rel("libjq1") + rel("curl"),
      "removal.groups": o.groups ?? "root:\n",
      "removal.users": o.users ?? "root\n",
    },
  });
  const os: Step = { match: "cat /etc/os-release", sudo: false, facts: { os_release: DEBIAN_12 } };
  const event = { packages: ["jq", "curl"], state: "absent" };

  it("check mode: would_change says the removal in a real run's words; nothing privileged but the read runs", async () => {
    const { result, remote } = await runScripted(handler, { ...event, check: true }, [os, look()]);
    expect(remote.done).toBe(true);
    expect(remote.calls.filter((c) => c.opts.sudo).map((c) => c.command)).toEqual([REMOVAL_LOOK.script]);
    expect(result).toMatchObject({ state: "absent", changed: false, changes: [], would_change: ["removed jq libjq1"] });
  });

  it("a run purges exactly those after apt's simulation agrees, checks dpkg, and forgets them", async () => {
    const { result, remote, error } = await runScripted(handler, event, [
      os,
      look(),
      { match: "apt-get purge -s -q jq libjq1", sudo: false, stdout: "Purg jq [1.6]\nPurg libjq1 [1.6]\n" },
      { match: /apt-get purge -y -q .* jq libjq1$/, sudo: true },
      { match: /^dpkg-query -W -f=.* jq libjq1$/, sudo: false, code: 1, stdout: dpkgLine("jq") + dpkgLine("libjq1") },
      { match: "dpkg --audit", sudo: false },
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({ state: "absent", changes: ["removed jq libjq1"], removed: ["jq", "libjq1"] });
    expect(JSON.parse(remote.packageInventory!).installers).toEqual({});
  });

  it("removes only system accounts (uid/gid 100-999): a hand edit naming root or a person removes neither", async () => {
    const edited = JSON.stringify({
      version: 1,
      installers: { packages: { users: ["root", "alice", "svc"], groups: ["root", "alice", "svc"] } },
    });
    const { result } = await runScripted(handler, { ...event, check: true }, [
      os,
      look({
        inventory: edited,
        relations: rel("curl"),
        groups: "root:0:\nalice:1000:\nsvc:120:\n",
        users: "root:0\nalice:1000\nsvc:110\n",
      }),
    ]);
    expect(result?.would_change).toEqual(["removed user svc", "removed group svc"]);
  });

  it("refuses, changing nothing, when apt would take a package vm-install did not install", async () => {
    const { error, remote } = await runScripted(handler, event, [
      os,
      look(),
      { match: "apt-get purge -s", sudo: false, stdout: "Purg jq [1.6]\nPurg libjq1 [1.6]\nPurg other [1]\n" },
    ]);
    expect(error?.message).toMatch(/would also remove other, which vm-install did not install: nothing was removed/);
    expect(remote.calls.some((c) => c.opts.mutates)).toBe(false);
  });
});

describe("install-postgres absent: its pg_hba.conf lines out, nobody else's", () => {
  const ours = "hostssl    shop    app    10.0.0.0/8    scram-sha-256    # vm-install:install-postgres";
  const text = [
    "local all postgres peer",
    "hostssl shop app 10.0.0.0/8 scram-sha-256",
    ours,
    "host    shop    old    0.0.0.0/0    scram-sha-256    # vm-install:install-postgres",
  ].join("\n");

  it("takes a marked line only when the inventory lists its entry; the admin's identical line stays", () => {
    const { content, removed } = withoutEntries(text, ["hostssl shop app 10.0.0.0/8 scram-sha-256"]);
    expect(removed).toEqual(["hostssl shop app 10.0.0.0/8 scram-sha-256"]);
    expect(content.split("\n")).toEqual([
      "local all postgres peer",
      "hostssl shop app 10.0.0.0/8 scram-sha-256",
      "host    shop    old    0.0.0.0/0    scram-sha-256    # vm-install:install-postgres",
    ]);
  });
});
