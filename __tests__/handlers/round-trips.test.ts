// How many SSH execs a rerun makes (issue 30: each a round trip, 50 ms and more on a real link): a rerun
// that changes nothing is looks only, and back-to-back looks are one exec. Counted on the scripted
// double, every command it answers, with or without a step.
import { TRANSACTION_LOOK } from "../../handlers/common/apt-transaction";
import { REMOVAL_LOOK } from "../../handlers/common/removal";
import { handler as docker } from "../../handlers/install-docker/handler";
import { handler as packages } from "../../handlers/install-packages/handler";
import { dockerLook } from "./support/docker-look";
import { keyCompare, keyFetch, look, officialLine, staleLook } from "./support/docker-steps";
import { DEBIAN_12, dpkgLine, policyBlock } from "./support/fixtures";
import { runScripted } from "./support/run-scripted";
import type { Step } from "./support/scripted-remote";

const os: Step = { match: "cat /etc/os-release", sudo: false, facts: { os_release: DEBIAN_12 } };
const ROTATED = JSON.stringify({ "log-driver": "json-file", "log-opts": { "max-size": "10m", "max-file": "3" } });

describe("a rerun's SSH execs", () => {
  it("install-packages, all installed: dpkg's answer read in the boot look, 1 exec (2 before, 4 before the facts layer)", async () => {
    const { result, remote } = await runScripted(packages, { packages: ["git", "curl"] }, [
      os,
      { match: /^dpkg-query -W /, code: 0, stdout: dpkgLine("git", "1:2.39.2-1.1") + dpkgLine("curl", "7.88.1") },
    ]);
    expect(result?.changed).toBe(false);
    expect(result?.already_installed).toEqual(["git", "curl"]);
    expect(remote.done).toBe(true);
    expect(remote.sent).toHaveLength(1);
  });

  // The grants inventory is read on every run that finds Docker (issue 32: its records are re-checked against
  // the VM before anything acts on them, so a record the admin's hand edits left is forgotten): 4, not 3.
  it("install-docker, all in place (daemon.json rotated): boot look, Docker's look, grants, docker info, 4 execs (6 before)", async () => {
    const event = { channel: "distro", compose: false, users: ["admin"], verify: "daemon" };
    const { result, remote, error } = await runScripted(docker, event, [
      os,
      dockerLook(ROTATED),
      { match: "docker info --format '{{.ServerVersion}}'", sudo: true, stdout: "20.10.24\n" },
    ]);
    expect(error).toBeUndefined();
    expect(result?.changed).toBe(false);
    expect(remote.done).toBe(true);
    expect(remote.sent).toHaveLength(4);
    expect(remote.grantsLooks).toBe(1);
  });

  it("install-packages state absent, nothing recorded: the boot look and one root look, 2 execs (6 before)", async () => {
    const { result, remote } = await runScripted(packages, { packages: ["jq"], state: "absent" }, [
      os,
      { match: REMOVAL_LOOK.script, sudo: true, facts: { "inventory.packages": { code: 3 } } },
    ]);
    expect(result?.changed).toBe(false);
    expect(remote.done).toBe(true);
    expect(remote.sent).toHaveLength(2);
  });
});

describe("a first install's SSH execs", () => {
  // dpkg's word on what was asked and the inventory the record is added to are read in the look after the
  // install, with its record, in the install's own exec (issue 30): that exec and the write, where it was the
  // install, a look, a dpkg-query, the inventory read and the write. apt's locks, dpkg's health and the
  // candidates are read in the look after apt-get update, in its exec (issue 30).
  it("install-packages, jq missing: boot look, update (locks, dpkg health, policy), install with its look, the record written: 4 execs (8 before)", async () => {
    const { result, remote, error } = await runScripted(packages, { packages: ["jq"] }, [
      os,
      { match: /^dpkg-query -W /, code: 1, stdout: "" },
      { match: /^apt-get update /, sudo: true },
      { match: "apt-cache policy jq", stdout: policyBlock("jq", "1.6-2.1") },
      { match: /^apt-get install -y -q .* jq$/, sudo: true },
      {
        match: TRANSACTION_LOOK.script,
        sudo: true,
        facts: {
          "apt_tx.before.packages": "ii \tcurl\n",
          "apt_tx.status": "status: jq: installed\nstatus: libjq1: installed\n",
          installed: dpkgLine("jq", "1.6-2.1"),
        },
      },
    ]);
    expect(error).toBeUndefined();
    expect(result?.installed).toEqual(["jq"]);
    expect(remote.done).toBe(true);
    expect(JSON.parse(remote.packageInventory ?? "{}").installers.packages.packages).toEqual(["jq", "libjq1"]);
    expect(remote.sent).toHaveLength(4);
    expect(remote.sent[2]).toContain(TRANSACTION_LOOK.script);
    expect(remote.implicit).toEqual([]);
    expect(remote.lockLooks).toBe(0);
  });
});

describe("a check's SSH execs", () => {
  // A check of Docker's repository fetches and checks the key, compares key and source and looks at older
  // sources, as the run does (issue 34): three execs more than when it only named the repository (5 before).
  it("install-docker official from nothing, curl there: boot look, Docker's look, grants, dpkg's health, the key fetch, the compare, the sources' look, the policy: 8 execs (5 before)", async () => {
    const { result, remote, error } = await runScripted(docker, { check: true, compose: false, users: [] }, [
      os,
      look({}),
      keyFetch("debian"),
      keyCompare(officialLine("bookworm", "https://download.docker.com/linux/debian")),
      staleLook(),
      { match: "apt-cache policy docker-ce docker-ce-cli containerd.io docker-buildx-plugin", sudo: false },
    ]);
    expect(error).toBeUndefined();
    expect(result?.would_change?.slice(0, 2)).toEqual([
      "wrote /etc/apt/keyrings/docker.gpg (new key)",
      "wrote /etc/apt/sources.list.d/docker.list (new source)",
    ]);
    expect(remote.done).toBe(true);
    expect(remote.sent).toHaveLength(8);
  });
});
