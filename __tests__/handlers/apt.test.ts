import { Apt, DEFAULT_APT, resolveAptSettings } from "../../handlers/common/apt";
import {
  AptLockError,
  aptFailureReason,
  candidateProblem,
  isLockError,
  parseAptCachePolicy,
  parseAptHolderNote,
  parseDpkgQuery,
} from "../../handlers/common/apt-output";
import { DPKG_HEALTH_LOOK } from "../../handlers/common/dpkg-health";
import { CommandError } from "../../handlers/common/exec";
import { LOCK_TABLE_LOOK, parseLockTable } from "../../handlers/common/lock-holders";
import { probeOutput } from "./support/dpkg-probe";
import { dpkgLine, LOCK_STAT, LOCK_STDERR, LOCK_TABLE, PROC_LOCKS, policyBlock, SESSION_APT } from "./support/fixtures";
import { answerLook } from "./support/look-answers";
import { ScriptedRemote } from "./support/scripted-remote";

const noSleep = { sleep: async () => undefined };

describe("parsers", () => {
  it("dpkg-query: installed, not installed, config-files, unknown to dpkg", () => {
    const out =
      `${dpkgLine("git", "1:2.39.2-1.1")}htop\tdeinstall ok ` +
      `config-files\t3.2.2-2\n${dpkgLine("jq")}vim\tinstall ok half-configured\t2:9.0\n`;
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
    expect(offers.get("bash")).toEqual({
      name: "bash",
      installed: "5.2.15-2+b8",
      candidate: "5.2.15-2+b13",
      versions: ["5.2.15-2+b13", "5.2.15-2+b8"],
    });
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
    expect(parseLockTable(answerLook(LOCK_TABLE_LOOK, { "locks.files": LOCK_STAT, "locks.proc": PROC_LOCKS }))).toEqual(
      [
        { lock: "/var/lib/dpkg/lock-frontend", pid: 4242 },
        { lock: "/var/lib/dpkg/lock", pid: 4242 },
      ],
    );
    expect(parseAptHolderNote(LOCK_STDERR)).toEqual({
      lock: "/var/lib/dpkg/lock-frontend",
      pid: 4242,
      command: "unattended-upgr",
    });
  });

  it("picks the lines that explain an apt failure", () => {
    const stdout =
      "Some packages could not be installed.\nThe following packages have unmet dependencies:\n foo : Depends: " +
      "libbar (>= 2) but it is not installable\n";
    const stderr = "E: Unable to correct problems, you have held broken packages.\n";
    expect(aptFailureReason({ stdout, stderr })).toBe(
      "foo : Depends: libbar (>= 2) but it is not installable; E: Unable to correct problems, you have held broken " +
        "packages.",
    );
  });

  it("fills apt setting defaults (5 x 15 s)", () => {
    expect(resolveAptSettings()).toEqual(DEFAULT_APT);
    expect(resolveAptSettings({ lock_attempts: 2 })).toMatchObject({
      lockAttempts: 2,
      lockRetryDelaySec: 15,
      lockTimeoutSec: 30,
    });
  });
});

describe("Apt on a scripted VM", () => {
  it("installs noninteractively, as root, with apt's own lock wait", async () => {
    const remote = new ScriptedRemote([
      {
        match:
          "apt-get install -y -q -o DPkg::Lock::Timeout=30 -o Dpkg::Options::=--force-confdef -o " +
          "Dpkg::Options::=--force-confold git curl",
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
      { match: "/proc/locks", sudo: true, stdout: LOCK_TABLE },
      { match: "/proc/$p/cmdline", stdout: SESSION_APT },
      { match: "apt-get install", stdout: "Setting up git ...\n" },
    ]);
    const progress = { info: (l: string) => lines.push(l) } as never;
    await new Apt(remote, DEFAULT_APT, { progress, sleep: async (ms) => void sleeps.push(ms) }).install(["git"]);
    expect(remote.done).toBe(true);
    expect(sleeps).toEqual([15_000]);
    expect(lines[0]).toBe(
      "apt-get install: lock busy: /var/lib/dpkg/lock-frontend is held by pid 4242 (apt-get install -y nginx; unit " +
        "session-3.scope); /var/lib/dpkg/lock is held by pid 4242 (apt-get install -y nginx; unit session-3.scope); " +
        "attempt 2/5 in 15.0s",
    );
  });

  it(
    "a holder that is not the first boot: gives up after lock_attempts and names the holder's pid, command and " +
      "unit",
    async () => {
      const busy = [
        { match: "apt-get install", code: 100, stderr: LOCK_STDERR },
        { match: "/proc/locks", stdout: LOCK_TABLE },
        { match: "/proc/$p/cmdline", stdout: SESSION_APT },
      ];
      const remote = new ScriptedRemote([...busy, ...busy]);
      const settings = resolveAptSettings({ lock_attempts: 2, lock_retry_delay_sec: 1 });
      const err = await new Apt(remote, settings, noSleep).install(["git"]).catch((e) => e);
      expect(err).toBeInstanceOf(AptLockError);
      expect(err.message).toMatch(
        /^apt-get install: the apt\/dpkg lock stayed busy through 2 attempts \(each waiting 30s, 1s apart\): \/var\/lib\/dpkg\/lock-frontend is held by pid 4242 \(apt-get install -y nginx; unit session-3\.scope\)/,
      );
      expect(err.message).toMatch(/not the VM's first boot/);
      expect(err.holders[0]).toEqual({
        lock: "/var/lib/dpkg/lock-frontend",
        pid: 4242,
        command: "apt-get install -y nginx",
        unit: "session-3.scope",
      });
      expect(remote.done).toBe(true);
    },
  );

  it("falls back to apt's own holder note when /proc/locks shows nothing", async () => {
    const remote = new ScriptedRemote([
      {
        match: "apt-get update",
        code: 100,
        stderr: "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 77 (apt-get)\n",
      },
      { match: "/proc/locks", stdout: answerLook(LOCK_TABLE_LOOK) },
    ]);
    const err = await new Apt(remote, resolveAptSettings({ lock_attempts: 1 }), noSleep).update().catch((e) => e);
    expect(err.message).toContain("/var/lib/apt/lists/lock is held by pid 77 (apt-get)");
  });

  it("does not retry other failures", async () => {
    const remote = new ScriptedRemote([
      { match: "apt-get install", code: 100, stderr: "E: Unable to locate package nope\n" },
    ]);
    const err = await new Apt(remote, DEFAULT_APT, noSleep).install(["nope"]).catch((e) => e);
    expect(err).toBeInstanceOf(CommandError);
    expect(remote.done).toBe(true);
  });

  it("skips apt-get update while the lists are younger than cache_valid_sec", async () => {
    const remote = new ScriptedRemote([
      { match: "/var/lib/apt/lists", sudo: false, stdout: "1700000100 1700000000\n" },
    ]);
    await expect(new Apt(remote).update({ cacheValidSec: 3600 })).resolves.toEqual({
      ran: false,
      reason: "package lists are 100s old, younger than cache_valid_sec 3600",
    });
    expect(remote.done).toBe(true);
  });

  it("updates when the lists are older, or missing, and stamps the time", async () => {
    const remote = new ScriptedRemote([
      { match: "ls /var/lib/apt/lists", stdout: "1700009999 1700000000\n" },
      {
        match:
          /^apt-get update -q && mkdir -p \/var\/lib\/apt\/periodic && touch \/var\/lib\/apt\/periodic\/update-success-stamp$/,
        sudo: true,
      },
      { match: "ls /var/lib/apt/lists", stdout: "1700009999 none\n" },
      { match: "apt-get update", sudo: true },
    ]);
    const apt = new Apt(remote);
    expect((await apt.update({ cacheValidSec: 3600 })).ran).toBe(true);
    expect((await apt.update({ cacheValidSec: 3600 })).ran).toBe(true);
    expect(remote.done).toBe(true);
  });

  it("the first update reads dpkg's health and the candidates after it, in its own exec (issue 30)", async () => {
    const remote = new ScriptedRemote([
      {
        match: "apt-get update",
        sudo: true,
        stdout: "Hit:1 http://deb.debian.org/debian bookworm InRelease\n",
      },
      { match: "apt-cache policy jq", stdout: policyBlock("jq", "1.6-2.1") },
    ]);
    const apt = new Apt(remote, DEFAULT_APT, noSleep);
    await apt.update({ policyOf: ["jq"] });
    expect((await apt.candidates(["jq"])).get("jq")?.candidate).toBe("1.6-2.1");
    await apt.ensureDpkgHealthy();
    expect(remote.done).toBe(true);
    // One exec: no lock table, dpkg look or apt-cache policy of their own.
    expect(remote.sent).toHaveLength(1);
    expect(remote.sent[0]).toMatch(/^\( apt-get update -q .*\n\); vmi_status=\$\?; echo\n/);
    expect(remote.implicit).toEqual([]);
    expect(remote.lockLooks).toBe(0);
    // Read once: the lists change with the next update, and another name is asked of apt itself.
    await expect(apt.candidates(["jq"])).rejects.toThrow(/unexpected command #3 "apt-cache policy jq"/);
  });

  it("a lock held as the look after the update read dpkg: dpkg is looked at again, alone", async () => {
    const held = answerLook(LOCK_TABLE_LOOK, { "locks.files": LOCK_STAT, "locks.proc": PROC_LOCKS });
    const remote = new ScriptedRemote([
      { match: "apt-get update", sudo: true },
      // What the look after the update says: someone holds dpkg's lock (and dpkg looks half-done).
      { match: "/proc/locks", stdout: held },
      { match: DPKG_HEALTH_LOOK.script, stdout: probeOutput({ updates: "0000" }) },
      // The holder is not the first boot: no wait; dpkg read again on its own, clean now.
      { match: "/proc/locks", sudo: true, stdout: held },
      { match: "/proc/$p/cmdline", stdout: SESSION_APT },
      { match: DPKG_HEALTH_LOOK.script, stdout: probeOutput({}) },
    ]);
    const apt = new Apt(remote, DEFAULT_APT, noSleep);
    await apt.update();
    expect(remote.done).toBe(true);
    expect(apt.repairs).toEqual([]);
  });

  it("the lock table unread after the update (a probe failed): dpkg's health is not taken, it is read again", async () => {
    const remote = new ScriptedRemote([
      { match: "apt-get update", sudo: true },
      // What the look after the update says: /proc/locks could not be read, and dpkg looks half-done.
      { match: "/proc/locks", stdout: answerLook(LOCK_TABLE_LOOK, { "locks.proc": { code: 1 } }) },
      { match: DPKG_HEALTH_LOOK.script, stdout: probeOutput({ updates: "0000" }) },
    ]);
    const apt = new Apt(remote, DEFAULT_APT, noSleep);
    await apt.update();
    expect(remote.done).toBe(true);
    // Read again on its own (the double's dpkg is clean there): nothing to repair.
    expect(remote.lockLooks).toBe(1);
    expect(remote.implicit).toEqual([DPKG_HEALTH_LOOK.script]);
    expect(apt.repairs).toEqual([]);
  });

  it("an update whose output lacks the look after it (cut short): dpkg and the candidates are read alone", async () => {
    const remote = new ScriptedRemote([
      { match: "apt-get update", sudo: true },
      { match: "apt-cache policy jq", stdout: policyBlock("jq", "1.6-2.1") },
      { match: "apt-cache policy jq", stdout: policyBlock("jq", "1.6-2.1") },
    ]);
    const cut = Object.assign(Object.create(remote), {
      run: async (command: string, opts = {}) => {
        const r = await remote.run(command, opts);
        return command.startsWith("( apt-get update") ? { ...r, stdout: r.stdout.split("\n")[0] } : r;
      },
    });
    const apt = new Apt(cut, DEFAULT_APT, noSleep);
    await apt.update({ policyOf: ["jq"] });
    expect(remote.implicit).toEqual([DPKG_HEALTH_LOOK.script]);
    expect(remote.lockLooks).toBe(1);
    expect((await apt.candidates(["jq"])).get("jq")?.candidate).toBe("1.6-2.1");
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
  const INTERRUPTED = probeOutput({
    updates: "tmp.i\n0001",
    audit:
      "The following packages are only half configured, probably due to problems\nconfiguring " +
      "them the first time.  The configuration should be retried using\ndpkg --configure <package> or the configure " +
      "menu option in dselect:\n gcc-12    GNU C compiler",
  });
  /** dpkg killed while it upgraded perl-base: reinst-required, the old version on record, the new .deb in the cache. */
  const KILLED_UNPACK = probeOutput({
    updates: "0000",
    audit: " perl-base            minimal Perl system\n",
    packages: [
      "perl-base\tamd64\tinstall reinstreq unpacked\t5.36.0-7+deb12u3",
      "postgresql-15\tamd64\tinstall ok unpacked\t15.14-0+deb12u1",
    ],
    cache: ["perl-base_5.36.0-7+deb12u4_amd64.deb", "perl-base_5.36.0-7+deb12u3_amd64.deb"],
  });
  const CLEAN = probeOutput({});
  const repair = { match: /^A=\/var\/cache\/apt\/archives; debs=""\n/, sudo: true };

  it(
    "an interrupted dpkg: configured and apt-get -f install --no-remove as root, once, before the install; said in " +
      "repairs",
    async () => {
      const remote = new ScriptedRemote([
        { match: DPKG_HEALTH_LOOK.script, sudo: false, stdout: INTERRUPTED },
        {
          ...repair,
          check: (c) =>
            expect(c).toMatch(/--configure -a\napt-get -f install --no-remove -y -q -o DPkg::Lock::Timeout=30 /),
        },
        { match: DPKG_HEALTH_LOOK.script, stdout: probeOutput({}) },
        { match: "apt-get install", sudo: true },
        { match: "apt-get install", sudo: true },
      ]);
      const apt = new Apt(remote, DEFAULT_APT, noSleep);
      await apt.install(["gcc"]);
      await apt.install(["make"]);
      expect(remote.done).toBe(true);
      expect(apt.repairs).toEqual([
        "repaired dpkg (an interrupted dpkg run; half-done packages: gcc-12): dpkg --configure -a and apt-get -f " +
          "install --no-remove",
      ]);
    },
  );

  it(
    "a package dpkg must reinstall: its recorded version's .deb unpacked over it first, from the cache; said with " +
      "the source",
    async () => {
      const remote = new ScriptedRemote([
        { match: DPKG_HEALTH_LOOK.script, stdout: KILLED_UNPACK },
        {
          ...repair,
          stdout: "vm-install-repair: reinstall perl-base from the archive cache\n",
          check: (c) => {
            expect(c).toContain('f="$A/perl-base_5.36.0-7+deb12u3_amd64.deb"');
            expect(c.indexOf("--unpack $debs")).toBeLessThan(c.indexOf("--configure -a"));
          },
        },
        { match: DPKG_HEALTH_LOOK.script, stdout: CLEAN },
        { match: "apt-get install", sudo: true },
      ]);
      const apt = new Apt(remote, DEFAULT_APT, noSleep);
      await apt.install(["postgresql"]);
      expect(remote.done).toBe(true);
      expect(apt.repairs).toEqual([
        "repaired dpkg (an interrupted dpkg run; to reinstall: perl-base; half-done packages: postgresql-15 " +
          "(unpacked)): " +
          "reinstalled perl-base 5.36.0-7+deb12u3 (from the archive cache), then dpkg --configure -a and apt-get -f " +
          "install --no-remove",
      ]);
    },
  );

  it(
    "still not clean after the repair: fails naming the package, dpkg's last lines and the command to run; " +
      "installs nothing",
    async () => {
      const left = probeOutput({ packages: ["postgresql-common\tall\tinstall ok half-configured\t248+deb12u2"] });
      const dpkgSaid = [
        "Setting up postgresql-common (248+deb12u2) ...",
        "dpkg: error processing package postgresql-common (--configure):",
        " installed postgresql-common package post-installation script subprocess returned error exit status 1",
        "Errors were encountered while processing:",
        " postgresql-common",
        "E: Sub-process /usr/bin/dpkg returned an error code (1)",
      ].join("\n");
      const remote = new ScriptedRemote([
        // apt-get update first: dpkg's health is read in the look after it, in the same exec.
        { match: "apt-get update", sudo: true },
        { match: DPKG_HEALTH_LOOK.script, stdout: left },
        { ...repair, code: 100, stderr: dpkgSaid },
        { match: DPKG_HEALTH_LOOK.script, stdout: left },
      ]);
      const err = await new Apt(remote, DEFAULT_APT, noSleep).update().catch((e: Error) => e);
      expect(remote.done).toBe(true);
      expect(String((err as Error).message)).toMatch(
        /^dpkg could not be repaired on ubuntu@192\.0\.2\.10:22 \(exit 100\): postgresql-common\. dpkg still reports: postgresql-common \(half-configured at 248\+deb12u2\)\./,
      );
      expect((err as Error).message).toContain("post-installation script subprocess returned error exit status 1");
      expect((err as Error).message).toContain(
        "On the VM, run `sudo dpkg --configure postgresql-common` and read its error",
      );
    },
  );

  it("no .deb of a package to reinstall, anywhere: the error names it and the reinstall to run", async () => {
    const gone = probeOutput({ packages: ["perl-base\tamd64\tinstall reinstreq half-installed\t5.36.0-7+deb12u3"] });
    const remote = new ScriptedRemote([
      // apt-get update first: dpkg's health is read in the look after it, in the same exec.
      { match: "apt-get update", sudo: true },
      { match: DPKG_HEALTH_LOOK.script, stdout: gone },
      {
        ...repair,
        code: 90,
        stdout: "vm-install-repair: no-deb perl-base\n",
        stderr:
          "E: Can not find version '5.36.0-7+deb12u3' of package 'perl-base'\nno .deb of perl-base 5.36.0-7+deb12u3 " +
          "in /var/cache/apt/archives, and the mirror does not offer it\n",
      },
      { match: DPKG_HEALTH_LOOK.script, stdout: gone },
    ]);
    const err = (await new Apt(remote, DEFAULT_APT, noSleep).update().catch((e: Error) => e)) as Error;
    expect(err.message).toMatch(
      /^dpkg could not be repaired on \S+ \(exit 90\): perl-base\. dpkg still reports: perl-base \(must be reinstalled, half-installed at 5\.36\.0-7\+deb12u3\)/,
    );
    expect(err.message).toContain("the mirror does not offer it");
    expect(err.message).toContain("`sudo apt-get install --reinstall perl-base=5.36.0-7+deb12u3`");
  });

  it("apt-get -f install would remove packages: refused, and the error says which", async () => {
    const broken = probeOutput({ packages: ["libfoo1\tamd64\tinstall ok unpacked\t1.0"] });
    const remote = new ScriptedRemote([
      // apt-get update first: dpkg's health is read in the look after it, in the same exec.
      { match: "apt-get update", sudo: true },
      { match: DPKG_HEALTH_LOOK.script, stdout: broken },
      { ...repair, code: 100, stderr: "E: Packages need to be removed but remove is disabled.\n" },
      { match: DPKG_HEALTH_LOOK.script, stdout: broken },
      {
        match: "apt-get -s -f install",
        sudo: false,
        stdout: "NOTE: This is only a simulation!\nRemv myapp [2.0]\nConf libfoo1 (1.0 local)\n",
      },
    ]);
    const err = (await new Apt(remote, DEFAULT_APT, noSleep).update().catch((e: Error) => e)) as Error;
    expect(remote.done).toBe(true);
    expect(err.message).toContain("apt-get -f install would remove myapp the VM has; refused (--no-remove).");
  });

  it("the lock busy during the repair: looked at again, then repaired", async () => {
    const remote = new ScriptedRemote([
      { match: DPKG_HEALTH_LOOK.script, stdout: KILLED_UNPACK },
      { ...repair, code: 2, stderr: "dpkg: error: dpkg frontend lock was locked by another process with pid 4242\n" },
      { match: "stat -c", sudo: true, stdout: LOCK_TABLE },
      { match: "/proc/$p/cmdline", stdout: SESSION_APT },
      { match: DPKG_HEALTH_LOOK.script, stdout: INTERRUPTED },
      { ...repair, check: (c) => expect(c).not.toContain("--unpack") },
      { match: DPKG_HEALTH_LOOK.script, stdout: CLEAN },
    ]);
    const apt = new Apt(remote, { ...DEFAULT_APT, lockRetryDelaySec: 0 }, noSleep);
    await apt.ensureDpkgHealthy();
    expect(remote.done).toBe(true);
    expect(remote.calls.filter((c) => c.command.startsWith("A=/var/cache/apt/archives")).length).toBe(2);
    expect(apt.repairs).toHaveLength(1);
  });

  it("check mode: the repair is only recorded, in a real run's words", async () => {
    const remote = new ScriptedRemote([{ match: DPKG_HEALTH_LOOK.script, stdout: KILLED_UNPACK }]);
    const apt = new Apt(remote, DEFAULT_APT, { ...noSleep, check: true });
    await apt.update();
    expect(remote.done).toBe(true);
    expect(apt.repairs[0]).toMatch(
      /^repaired dpkg \(.*to reinstall: perl-base.*\): reinstalled perl-base 5\.36\.0-7\+deb12u3, then dpkg --configure -a/,
    );
  });

  it(
    "a maintainer script failed under an install and left another package half-configured: repaired once, the " +
      "install runs once more",
    async () => {
      const failed =
        "dpkg: error processing package watch (--configure):\n installed watch package post-installation script " +
        "subprocess was killed by signal (Killed)\nE: Sub-process /usr/bin/dpkg returned an error code (1)\n";
      const remote = new ScriptedRemote([
        { match: "apt-get install", code: 100, stderr: failed },
        {
          match: DPKG_HEALTH_LOOK.script,
          stdout: probeOutput({
            packages: ["watch\tall\tinstall ok half-configured\t1.0", "files\tall\tinstall ok triggers-awaited\t1.0"],
          }),
        },
        repair,
        { match: DPKG_HEALTH_LOOK.script, stdout: CLEAN },
        { match: "apt-get install", sudo: true },
      ]);
      const apt = new Apt(remote, DEFAULT_APT, noSleep);
      await apt.install(["files"]);
      expect(remote.done).toBe(true);
      expect(apt.repairs).toEqual([
        "repaired dpkg (half-done packages: watch (half-configured) files (triggers-awaited)): dpkg --configure -a " +
          "and apt-get -f install --no-remove",
      ]);
    },
  );

  it("a package that fails to install with dpkg clean: apt's error stands, no repair, no second try", async () => {
    const remote = new ScriptedRemote([
      {
        match: "apt-get install",
        code: 100,
        stderr:
          "dpkg: error processing archive x.deb (--unpack):\n trying to overwrite '/usr/bin/x'\nE: Sub-process " +
          "/usr/bin/dpkg returned an error code (1)\n",
      },
    ]);
    const err = await new Apt(remote, DEFAULT_APT, noSleep).install(["x"]).catch((e: Error) => e);
    expect(err).toBeInstanceOf(CommandError);
    expect(remote.done).toBe(true);
    expect(remote.implicit).toHaveLength(2);
  });

  it("dpkg killed under an install: repaired, and the install runs once more", async () => {
    const remote = new ScriptedRemote([
      { match: "apt-get install", code: 100, stderr: "E: Sub-process /usr/bin/dpkg received signal 9.\n" },
      { match: DPKG_HEALTH_LOOK.script, stdout: KILLED_UNPACK },
      repair,
      { match: DPKG_HEALTH_LOOK.script, stdout: CLEAN },
      { match: "apt-get install", sudo: true },
    ]);
    const apt = new Apt(remote, DEFAULT_APT, noSleep);
    await apt.install(["gcc"]);
    expect(remote.done).toBe(true);
    expect(apt.repairs).toHaveLength(1);
  });
});
