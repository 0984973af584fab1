import { Apt, DEFAULT_APT, resolveAptSettings } from "../../handlers/common/apt";
import {
  AptLockError,
  aptFailureReason,
  candidateProblem,
  isLockError,
  parseAptCachePolicy,
  parseAptHolderNote,
  parseDpkgQuery,
  parseLockTable,
} from "../../handlers/common/apt-output";
import { DPKG_HEALTH_PROBE } from "../../handlers/common/dpkg-repair";
import { CommandError } from "../../handlers/common/exec";
import { dpkgLine, LOCK_STAT, LOCK_STDERR, PROC_LOCKS, policyBlock } from "./support/fixtures";
import { ScriptedRemote } from "./support/scripted-remote";

const noSleep = { sleep: async () => undefined };

describe("parsers", () => {
  it("dpkg-query: installed, not installed, config-files, unknown to dpkg", () => {
    const out = `${dpkgLine("git", "1:2.39.2-1.1")}htop\tdeinstall ok config-files\t3.2.2-2\n${dpkgLine("jq")}vim\tinstall ok half-configured\t2:9.0\n`;
    const states = parseDpkgQuery(out, ["git", "htop", "jq", "vim", "nope"]);
    expect(states.get("git")).toEqual({ name: "git", installed: true, status: "installed", version: "1:2.39.2-1.1" });
    expect(states.get("htop")).toEqual({ name: "htop", installed: false, status: "config-files" });
    expect(states.get("jq")).toEqual({ name: "jq", installed: false, status: "not-installed" });
    expect(states.get("vim")).toMatchObject({ installed: false, status: "half-configured" });
    expect(states.get("nope")).toEqual({ name: "nope", installed: false, status: "not-installed" });
  });

  it("apt-cache policy: candidates, version tables, (none), unknown names", () => {
    // The real shape, as apt 2.6 prints it (an installed version marked ***, a virtual package).
    const out =
      policyBlock("bash", "5.2.15-2+b13", ["5.2.15-2+b13", "5.2.15-2+b8"], "5.2.15-2+b8") +
      "awk:\n  Installed: (none)\n  Candidate: (none)\n  Version table:\n";
    const offers = parseAptCachePolicy(out);
    expect(offers.get("bash")).toEqual({ name: "bash", installed: "5.2.15-2+b8", candidate: "5.2.15-2+b13", versions: ["5.2.15-2+b13", "5.2.15-2+b8"] });
    expect(offers.get("awk")).toEqual({ name: "awk", versions: [] });
    expect(offers.has("nope")).toBe(false);
  });

  it("candidateProblem: unknown, no candidate, missing version (with an epoch hint), fine", () => {
    const git = { name: "git", candidate: "1:2.39.2-1.1", versions: ["1:2.39.2-1.1"] };
    expect(candidateProblem({ name: "nope" }, undefined)).toMatch(/^unknown package/);
    expect(candidateProblem({ name: "awk" }, { name: "awk", versions: [] })).toMatch(/^no installation candidate/);
    expect(candidateProblem({ name: "git", version: "2.39.2-1.1" }, git)).toBe(
      "version 2.39.2-1.1 is not available (did you mean 1:2.39.2-1.1?); available: 1:2.39.2-1.1",
    );
    expect(candidateProblem({ name: "git", version: "1:2.39.2-1.1" }, git)).toBeUndefined();
    expect(candidateProblem({ name: "git" }, git)).toBeUndefined();
  });

  it("recognises lock errors of apt and dpkg, and not others", () => {
    expect(isLockError(LOCK_STDERR)).toBe(true);
    expect(isLockError("E: Could not get lock /var/lib/apt/lists/lock. It is held by process 77 (apt-get)")).toBe(true);
    expect(isLockError("dpkg: error: dpkg frontend lock was locked by another process with pid 5")).toBe(true);
    expect(isLockError("E: Unable to lock directory /var/lib/apt/lists/")).toBe(true);
    expect(isLockError("E: Unable to locate package nope")).toBe(false);
  });

  it("finds lock holders in /proc/locks by inode, skipping blocked waiters", () => {
    expect(parseLockTable(LOCK_STAT, PROC_LOCKS)).toEqual([
      { lock: "/var/lib/dpkg/lock-frontend", pid: 4242 },
      { lock: "/var/lib/dpkg/lock", pid: 4242 },
    ]);
    expect(parseAptHolderNote(LOCK_STDERR)).toEqual({ lock: "/var/lib/dpkg/lock-frontend", pid: 4242, command: "unattended-upgr" });
  });

  it("picks the lines that explain an apt failure", () => {
    const stdout =
      "Some packages could not be installed.\nThe following packages have unmet dependencies:\n foo : Depends: libbar (>= 2) but it is not installable\n";
    const stderr = "E: Unable to correct problems, you have held broken packages.\n";
    expect(aptFailureReason({ stdout, stderr })).toBe(
      "foo : Depends: libbar (>= 2) but it is not installable; E: Unable to correct problems, you have held broken packages.",
    );
  });

  it("fills apt setting defaults (5 x 15 s)", () => {
    expect(resolveAptSettings()).toEqual(DEFAULT_APT);
    expect(resolveAptSettings({ lock_attempts: 2 })).toMatchObject({ lockAttempts: 2, lockRetryDelaySec: 15, lockTimeoutSec: 30 });
  });
});

describe("Apt on a scripted VM", () => {
  it("installs noninteractively, as root, with apt's own lock wait", async () => {
    const remote = new ScriptedRemote([
      {
        match: "apt-get install -y -q -o DPkg::Lock::Timeout=30 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold git curl",
        sudo: true,
        check: (_cmd, opts) => expect(opts.env).toMatchObject({ DEBIAN_FRONTEND: "noninteractive" }),
      },
    ]);
    await new Apt(remote, DEFAULT_APT, noSleep).install(["git", "curl"]);
    expect(remote.done).toBe(true);
  });

  it("retries while the lock is busy, then succeeds", async () => {
    const lines: string[] = [];
    const sleeps: number[] = [];
    const remote = new ScriptedRemote([
      { match: "apt-get install", code: 100, stderr: LOCK_STDERR },
      { match: "/proc/locks", sudo: true, stdout: `${LOCK_STAT}--- /proc/locks\n${PROC_LOCKS}` },
      { match: "/proc/$p/cmdline", stdout: "4242\t/usr/bin/python3 /usr/bin/unattended-upgrade \n" },
      { match: "apt-get install", stdout: "Setting up git ...\n" },
    ]);
    const progress = { info: (l: string) => lines.push(l) } as never;
    await new Apt(remote, DEFAULT_APT, { progress, sleep: async (ms) => void sleeps.push(ms) }).install(["git"]);
    expect(remote.done).toBe(true);
    expect(sleeps).toEqual([15_000]);
    expect(lines[0]).toBe(
      "apt-get install: lock busy: /var/lib/dpkg/lock-frontend is held by pid 4242 (/usr/bin/python3 /usr/bin/unattended-upgrade); /var/lib/dpkg/lock is held by pid 4242 (/usr/bin/python3 /usr/bin/unattended-upgrade); attempt 2/5 in 15.0s",
    );
  });

  it("gives up after lock_attempts and names the holder's pid and command", async () => {
    const busy = [
      { match: "apt-get install", code: 100, stderr: LOCK_STDERR },
      { match: "/proc/locks", stdout: `${LOCK_STAT}--- /proc/locks\n${PROC_LOCKS}` },
      { match: "/proc/$p/cmdline", stdout: "4242\t/usr/bin/python3 /usr/bin/unattended-upgrade \n" },
    ];
    const remote = new ScriptedRemote([...busy, ...busy]);
    const settings = resolveAptSettings({ lock_attempts: 2, lock_retry_delay_sec: 1 });
    const err = await new Apt(remote, settings, noSleep).install(["git"]).catch((e) => e);
    expect(err).toBeInstanceOf(AptLockError);
    expect(err.message).toMatch(
      /^apt-get install: the apt\/dpkg lock stayed busy through 2 attempts \(each waiting 30s, 1s apart\): \/var\/lib\/dpkg\/lock-frontend is held by pid 4242 \(\/usr\/bin\/python3 \/usr\/bin\/unattended-upgrade\)/,
    );
    expect(err.message).toMatch(/systemctl stop unattended-upgrades/);
    expect(err.holders[0]).toEqual({ lock: "/var/lib/dpkg/lock-frontend", pid: 4242, command: "/usr/bin/python3 /usr/bin/unattended-upgrade" });
    expect(remote.done).toBe(true);
  });

  it("falls back to apt's own holder note when /proc/locks shows nothing", async () => {
    const remote = new ScriptedRemote([
      { match: "apt-get update", code: 100, stderr: "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 77 (apt-get)\n" },
      { match: "/proc/locks", stdout: "--- /proc/locks\n" },
    ]);
    const err = await new Apt(remote, resolveAptSettings({ lock_attempts: 1 }), noSleep).update().catch((e) => e);
    expect(err.message).toContain("/var/lib/apt/lists/lock is held by pid 77 (apt-get)");
  });

  it("does not retry other failures", async () => {
    const remote = new ScriptedRemote([{ match: "apt-get install", code: 100, stderr: "E: Unable to locate package nope\n" }]);
    const err = await new Apt(remote, DEFAULT_APT, noSleep).install(["nope"]).catch((e) => e);
    expect(err).toBeInstanceOf(CommandError);
    expect(remote.done).toBe(true);
  });

  it("skips apt-get update while the lists are younger than cache_valid_sec", async () => {
    const remote = new ScriptedRemote([{ match: "/var/lib/apt/lists", sudo: false, stdout: "1700000100 1700000000\n" }]);
    await expect(new Apt(remote).update({ cacheValidSec: 3600 })).resolves.toEqual({
      ran: false,
      reason: "package lists are 100s old, younger than cache_valid_sec 3600",
    });
    expect(remote.done).toBe(true);
  });

  it("updates when the lists are older, or missing, and stamps the time", async () => {
    const remote = new ScriptedRemote([
      { match: "/var/lib/apt/lists", stdout: "1700009999 1700000000\n" },
      { match: /^apt-get update -q && mkdir -p \/var\/lib\/apt\/periodic && touch \/var\/lib\/apt\/periodic\/update-success-stamp$/, sudo: true },
      { match: "/var/lib/apt/lists", stdout: "1700009999 none\n" },
      { match: "apt-get update", sudo: true },
    ]);
    const apt = new Apt(remote);
    expect((await apt.update({ cacheValidSec: 3600 })).ran).toBe(true);
    expect((await apt.update({ cacheValidSec: 3600 })).ran).toBe(true);
    expect(remote.done).toBe(true);
  });

  it("queries dpkg for all names in one command and tolerates exit 1 (some not found)", async () => {
    const remote = new ScriptedRemote([
      {
        match: "dpkg-query -W -f='${Package}\\t${Status}\\t${Version}\\n' git jq",
        code: 1,
        stdout: dpkgLine("git", "1:2.39.2-1.1"),
        stderr: "dpkg-query: no packages found matching jq\n",
      },
    ]);
    const states = await new Apt(remote).query(["git", "jq"]);
    expect(states.get("git")?.installed).toBe(true);
    expect(states.get("jq")?.installed).toBe(false);
  });
});

describe("dpkg repairs itself before apt work", () => {
  const INTERRUPTED =
    "tmp.i\n0001\n--- audit\nThe following packages are only half configured, probably due to problems\nconfiguring them the first time.  The configuration should be retried using\ndpkg --configure <package> or the configure menu option in dselect:\n gcc-12    GNU C compiler\n";
  const repair = { match: /^dpkg --force-confdef --force-confold --configure -a && apt-get -f install -y -q -o DPkg::Lock::Timeout=30 /, sudo: true };

  it("an interrupted dpkg: dpkg --configure -a and apt-get -f install as root, once, before the install; said in repairs", async () => {
    const remote = new ScriptedRemote([
      { match: DPKG_HEALTH_PROBE, sudo: false, stdout: INTERRUPTED },
      repair,
      { match: DPKG_HEALTH_PROBE, stdout: "--- audit\n" },
      { match: "apt-get install", sudo: true },
      { match: "apt-get install", sudo: true },
    ]);
    const apt = new Apt(remote, DEFAULT_APT, noSleep);
    await apt.install(["gcc"]);
    await apt.install(["make"]);
    expect(remote.done).toBe(true);
    expect(apt.repairs).toEqual(["repaired dpkg (an interrupted dpkg run; half-done packages: gcc-12): dpkg --configure -a and apt-get -f install"]);
  });

  it("still not clean after the repair: fails naming what dpkg reports, installs nothing", async () => {
    const remote = new ScriptedRemote([
      { match: DPKG_HEALTH_PROBE, stdout: INTERRUPTED },
      repair,
      { match: DPKG_HEALTH_PROBE, stdout: "--- audit\n gcc-12    GNU C compiler\n" },
    ]);
    await expect(new Apt(remote, DEFAULT_APT, noSleep).update()).rejects.toThrow(
      /dpkg is still not clean after dpkg --configure -a and apt-get -f install: gcc-12/,
    );
    expect(remote.done).toBe(true);
  });

  it("dpkg killed under an install: repaired, and the install runs once more", async () => {
    const remote = new ScriptedRemote([
      { match: "apt-get install", code: 100, stderr: "E: Sub-process /usr/bin/dpkg received signal 9.\n" },
      { match: DPKG_HEALTH_PROBE, stdout: INTERRUPTED },
      repair,
      { match: DPKG_HEALTH_PROBE, stdout: "--- audit\n" },
      { match: "apt-get install", sudo: true },
    ]);
    const apt = new Apt(remote, DEFAULT_APT, noSleep);
    await apt.install(["gcc"]);
    expect(remote.done).toBe(true);
    expect(apt.repairs).toHaveLength(1);
  });
});
