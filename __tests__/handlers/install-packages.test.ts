import { DPKG_HEALTH_LOOK } from "../../handlers/common/dpkg-health";
import type { InstallerDeps } from "../../handlers/common/handler-kit";
import { handler } from "../../handlers/install-packages/handler";
import { probeOutput } from "./support/dpkg-probe";
import {
  DEBIAN_12,
  dpkgLine,
  FEDORA_39,
  LOCK_STDERR,
  LOCK_TABLE,
  policyBlock,
  SESSION_APT,
  UBUNTU_2204,
  UBUNTU_2404,
} from "./support/fixtures";
import { runScripted, TEST_KEY } from "./support/run-scripted";
import type { Step } from "./support/scripted-remote";

const KEY = TEST_KEY;

/** Runs the installer against `script`; returns the result or error, the output lines and the double. */
const run = (event: unknown, script: Step[], deps: Partial<InstallerDeps> = {}) =>
  runScripted(handler, event, script, deps);

const os = (text = DEBIAN_12): Step => ({ match: "cat /etc/os-release", sudo: false, facts: { os_release: text } });
const dpkg = (stdout: string): Step => ({ match: /^dpkg-query -W /, sudo: false, code: 1, stdout });
const update: Step = { match: /^apt-get update /, sudo: true };
const policy = (stdout: string, names?: string): Step => ({
  match: names ? `apt-cache policy ${names}` : "apt-cache policy",
  sudo: false,
  stdout,
});
const install = (specs: string, extra: Partial<Step> = {}): Step => ({
  match: new RegExp(`^apt-get install -y .*--force-confold ${specs.replace(/[.+]/g, "\\$&")}$`),
  sudo: true,
  ...extra,
});

describe("install-packages: event validation (before any SSH)", () => {
  const invalid: [string, unknown, RegExp][] = [
    [
      "shell syntax in a name",
      { packages: ["git;touch /tmp/pwned"] },
      /event packages\[0\]: "git;touch \/tmp\/pwned" is not a Debian package name/,
    ],
    ["command substitution", { packages: ["$(reboot)"] }, /event packages\[0\]: "\$\(reboot\)"/],
    ["an option smuggled in", { packages: ["-oAPT::Foo=1"] }, /event packages\[0\]/],
    ["uppercase", { packages: ["Git"] }, /event packages\[0\]/],
    ["a bad version", { packages: ["git=1.0;id"] }, /event packages\[0\]: "git=1.0;id"/],
    ["missing packages", {}, /event packages: required key is missing/],
    ["empty list", { packages: [] }, /event packages: expected at least 1 item, got 0/],
    ["not a list", { packages: "git curl" }, /event packages: expected a list/],
    ["a non-string item", { packages: [42] }, /event packages\[0\]: expected a string/],
    [
      "the same package twice",
      { packages: ["git", "curl", "git=1:2.39.2-1.1"] },
      /event packages\[2\]: package "git" is already listed at packages\[0\]/,
    ],
    ["update not a boolean", { packages: ["git"], update: "yes" }, /event update: expected true or false, got "yes"/],
    [
      "cache_valid_sec negative",
      { packages: ["git"], cache_valid_sec: -5 },
      /event cache_valid_sec: expected a whole number from 0/,
    ],
    [
      "an unknown key",
      { packages: ["git"], packgaes: ["x"] },
      /event packgaes: unknown key; did you mean "packages"\? allowed here: packages, update, cache_valid_sec, state, apt, ssh/,
    ],
    [
      "bad ssh settings",
      { packages: ["git"], ssh: { attempts: 0, delay: 5 } },
      /event ssh.delay: unknown key[\s\S]*event ssh.attempts: expected a whole number from 1 to 20/,
    ],
    [
      "bad apt settings",
      { packages: ["git"], apt: { lock_attempts: "5" } },
      /event apt.lock_attempts: expected a whole number/,
    ],
    ["not an object", ["git"], /event \(top level\): expected an object/],
    ["event_json that is not JSON", "{packages:", /not valid JSON/],
  ];

  it.each(invalid)("rejects %s with no connection made", async (_what, event, message) => {
    const { error, connects, remote } = await run(event, []);
    expect(error?.message).toMatch(/^install-packages: invalid input, nothing was done on the VM: /);
    expect(error?.message).toMatch(message);
    expect(connects).toBe(0);
    expect(remote.calls).toHaveLength(0);
  });

  it("lists event and env problems together", async () => {
    const { error, connects } = await run({ packages: ["bad name"] }, [], { env: { VM_IP: "192.0.2.10" } });
    expect(error?.message).toMatch(/event packages\[0\]/);
    expect(error?.message).toMatch(/env SSH_USER: required/);
    expect(error?.message).toMatch(/env SSH_KEY: required/);
    expect(connects).toBe(0);
  });

  it("accepts event_json's string form", async () => {
    const { result } = await run(JSON.stringify({ packages: ["git"] }), [os(), dpkg(dpkgLine("git", "1:2.39.2-1.1"))]);
    expect(result?.status).toBe("ok");
  });
});

describe("install-packages: flow", () => {
  // The same run on each Ubuntu release the handlers are proven on by transcripts (docs/os-matrix.md).
  it.each([
    {
      os: UBUNTU_2204,
      version_id: "22.04",
      codename: "jammy",
      curl: "7.81.0-1ubuntu1.15",
      git: "1:2.34.1-1ubuntu1.10",
      jq: "1.6-2.1ubuntu3",
    },
    {
      os: UBUNTU_2404,
      version_id: "24.04",
      codename: "noble",
      curl: "8.5.0-2ubuntu10.6",
      git: "1:2.43.0-1ubuntu7.3",
      jq: "1.7.1-3build1",
    },
  ])("Ubuntu $version_id ($codename): installs what is missing, verifies it, and reports per package", async (t) => {
    const { result, remote, lines } = await run({ packages: ["git", "curl", "jq"] }, [
      os(t.os),
      dpkg(dpkgLine("curl", t.curl)),
      update,
      policy(policyBlock("git", t.git) + policyBlock("jq", t.jq), "git jq"),
      install("git jq", { check: (_c, opts) => expect(opts.env?.DEBIAN_FRONTEND).toBe("noninteractive") }),
      dpkg(dpkgLine("git", t.git) + dpkgLine("jq", t.jq)),
    ]);
    expect(remote.done).toBe(true);
    expect(remote.closed).toBe(true);
    expect(result).toMatchObject({
      status: "ok",
      changed: true,
      installed: ["git", "jq"],
      already_installed: ["curl"],
      failed: [],
      versions: { curl: t.curl, git: t.git, jq: t.jq },
      apt_update: { ran: true },
      os: { id: "ubuntu", family: "ubuntu", version_id: t.version_id, codename: t.codename },
      host_key_sha256: `SHA256:${"A".repeat(43)}`,
      summary: "installed 2, already installed 1, failed 0",
    });
    expect(Object.keys(result!.timings_ms)).toEqual([
      "validate",
      "connect",
      "os",
      "apt_update",
      "candidates",
      "apt_install",
      "total",
    ]);
    // dpkg's word on git and jq is read with the install's record, in the same exec (issue 30): no verify step.
    expect(lines).toContain("[install-packages] verifying with dpkg-query: read with the install's record");
    expect(remote.transactionLooks).toBe(1);
    expect(remote.sent.filter((c) => c.startsWith("dpkg-query"))).toEqual([]); // the first one rode in the boot look
    expect(lines).toContain("[install-packages] to install: git jq; already installed: curl");
    expect(lines.some((l) => /^\[install-packages\] apt-get update \.\.\. \d+\.\ds$/.test(l))).toBe(true);
  });

  it("an interrupted dpkg, seen after apt-get update, is repaired before the install, and the result's changes say so first", async () => {
    const { result, remote } = await run({ packages: ["jq"] }, [
      os(UBUNTU_2204),
      dpkg(dpkgLine("jq", "1.6-2.1ubuntu3", "install reinstreq half-installed")),
      // dpkg's health and the candidates, read in the look after apt-get update (one exec).
      update,
      {
        match: DPKG_HEALTH_LOOK.script,
        stdout: probeOutput({
          updates: "0001",
          audit:
            "The following packages are in a mess due to serious problems during\ninstallation.  " +
            "They must be reinstalled for them (and any dependencies) to\nfunction properly:\n jq                   " +
            "lightweight and flexible command-line JSON processor",
        }),
      },
      policy(policyBlock("jq", "1.6-2.1ubuntu3"), "jq"),
      { match: /^A=\/var\/cache\/apt\/archives; debs=""\n/, sudo: true },
      { match: DPKG_HEALTH_LOOK.script, stdout: probeOutput({}) },
      install("jq"),
      dpkg(dpkgLine("jq", "1.6-2.1ubuntu3")),
    ]);
    expect(remote.done).toBe(true);
    expect(result!.changes).toEqual([
      "repaired dpkg (an interrupted dpkg run; half-done packages: jq): dpkg --configure -a and apt-get -f install " +
        "--no-remove",
      "installed jq",
    ]);
    expect(result!.changed).toBe(true);
  });

  it("is idempotent: a rerun runs no apt-get at all and says so", async () => {
    const { result, remote, lines } = await run({ packages: ["git", "curl"] }, [
      os(),
      dpkg(dpkgLine("git", "1:2.39.2-1.1") + dpkgLine("curl", "7.88.1-10+deb12u5")),
    ]);
    expect(remote.done).toBe(true);
    expect(remote.calls.some((c) => /apt-get/.test(c.command))).toBe(false);
    expect(result).toMatchObject({
      status: "ok",
      changed: false,
      installed: [],
      already_installed: ["git", "curl"],
      failed: [],
      apt_update: { ran: false, reason: "nothing to install" },
      summary: "nothing to do: all 2 packages are already installed",
    });
    expect(lines).toContain("[install-packages] nothing to do: all 2 packages are already installed (git, curl)");
  });

  it("one unknown package does not stop the good ones: partial", async () => {
    const { result, remote } = await run({ packages: ["git", "no-such-pkg", "htop"] }, [
      os(),
      dpkg(""),
      update,
      policy(policyBlock("git", "1:2.39.2-1.1") + policyBlock("htop", "3.2.2-2")),
      install("git htop"),
      dpkg(dpkgLine("git", "1:2.39.2-1.1") + dpkgLine("htop", "3.2.2-2")),
    ]);
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({ status: "partial", installed: ["git", "htop"], already_installed: [] });
    expect(result!.failed).toEqual([{ name: "no-such-pkg", reason: expect.stringMatching(/^unknown package/) }]);
  });

  it("a package without a candidate fails alone with that reason", async () => {
    const { result } = await run({ packages: ["awk", "git"] }, [
      os(),
      dpkg(""),
      update,
      policy(`awk:\n  Installed: (none)\n  Candidate: (none)\n  Version table:\n${policyBlock("git", "1:2.39.2-1.1")}`),
      install("git"),
      dpkg(dpkgLine("git", "1:2.39.2-1.1")),
    ]);
    expect(result?.failed).toEqual([{ name: "awk", reason: expect.stringMatching(/^no installation candidate/) }]);
  });

  it("all failed: throws a readable error listing each reason, and installs nothing", async () => {
    const { error, remote } = await run({ packages: ["nope-one", "nope-two"] }, [os(), dpkg(""), update, policy("")]);
    expect(remote.done).toBe(true);
    expect(error?.message).toBe(
      "install-packages failed while installing: none of the 2 packages could be installed:\n" +
        "  - nope-one: unknown package: apt on the VM knows no package of that name (check the spelling, or whether " +
        "its repository is configured)\n" +
        "  - nope-two: unknown package: apt on the VM knows no package of that name (check the spelling, or whether " +
        "its repository is configured)",
    );
  });

  it("a pinned version that differs from the installed one is installed (downgrade allowed)", async () => {
    const { result } = await run({ packages: ["git=1:2.39.2-1.1", "curl"] }, [
      os(),
      dpkg(dpkgLine("git", "1:2.39.5-0+deb12u3") + dpkgLine("curl", "7.88.1-10+deb12u5")),
      update,
      policy(
        policyBlock("git", "1:2.39.5-0+deb12u3", ["1:2.39.5-0+deb12u3", "1:2.39.2-1.1"], "1:2.39.5-0+deb12u3"),
        "git",
      ),
      { match: /--allow-downgrades git=1:2\.39\.2-1\.1$/, sudo: true },
      dpkg(dpkgLine("git", "1:2.39.2-1.1")),
    ]);
    expect(result).toMatchObject({
      status: "ok",
      installed: ["git"],
      already_installed: ["curl"],
      versions: { git: "1:2.39.2-1.1" },
    });
  });

  it("a pinned version that is not available fails with the versions there are", async () => {
    const { result } = await run({ packages: ["git=2.39.2-1.1", "curl"] }, [
      os(),
      dpkg(""),
      update,
      policy(policyBlock("git", "1:2.39.2-1.1") + policyBlock("curl", "7.88.1-10+deb12u5")),
      install("curl"),
      dpkg(dpkgLine("curl", "7.88.1-10+deb12u5")),
    ]);
    expect(result?.failed).toEqual([
      {
        name: "git",
        reason: "version 2.39.2-1.1 is not available (did you mean 1:2.39.2-1.1?); available: 1:2.39.2-1.1",
      },
    ]);
  });

  it("when the batch install fails, retries one by one so each package gets its own reason", async () => {
    const broken = {
      code: 100,
      stdout: "The following packages have unmet dependencies:\n broken : Depends: libgone but it is not installable\n",
      stderr: "E: Unable to correct problems, you have held broken packages.\n",
    };
    const { result, remote } = await run({ packages: ["git", "broken"] }, [
      os(),
      dpkg(""),
      update,
      policy(policyBlock("git", "1:2.39.2-1.1") + policyBlock("broken", "1.0-1")),
      install("git broken", broken),
      install("git"),
      install("broken", broken),
      dpkg(dpkgLine("git", "1:2.39.2-1.1")),
    ]);
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({ status: "partial", installed: ["git"] });
    expect(result!.failed).toEqual([
      {
        name: "broken",
        reason:
          "broken : Depends: libgone but it is not installable; E: Unable to correct problems, you have held broken " +
          "packages.",
      },
    ]);
  });

  it("a lost connection during install fails the job instead of retrying package by package", async () => {
    const { error, remote } = await run({ packages: ["git", "jq"] }, [
      os(),
      dpkg(""),
      update,
      policy(policyBlock("git", "1:2.39.2-1.1") + policyBlock("jq", "1.6-2.1")),
      install("git jq", { code: null }),
    ]);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      /^install-packages failed while installing: apt-get install git jq on ubuntu@192\.0\.2\.10:22 did not finish/,
    );
  });

  it("apt saying yes is not enough: dpkg's verdict decides", async () => {
    const { result } = await run({ packages: ["git", "jq"] }, [
      os(),
      dpkg(""),
      update,
      policy(policyBlock("git", "1:2.39.2-1.1") + policyBlock("jq", "1.6-2.1")),
      install("git jq"),
      dpkg(`${dpkgLine("git", "1:2.39.2-1.1")}jq\tinstall ok half-configured\t1.6-2.1\n`),
    ]);
    expect(result?.failed).toEqual([
      {
        name: "jq",
        reason:
          "apt-get reported success but dpkg shows status half-configured (an interrupted install: `sudo dpkg " +
          "--configure -a` on the VM finishes it)",
      },
    ]);
  });

  it("update: false skips apt-get update", async () => {
    const { result, remote } = await run({ packages: ["git"], update: false }, [
      os(),
      dpkg(""),
      policy(policyBlock("git", "1:2.39.2-1.1")),
      install("git"),
      dpkg(dpkgLine("git", "1:2.39.2-1.1")),
    ]);
    expect(remote.done).toBe(true);
    expect(result?.apt_update).toEqual({ ran: false, reason: "update: false" });
  });

  it("cache_valid_sec skips a recent update", async () => {
    const { result, lines } = await run({ packages: ["git"], cache_valid_sec: 3600 }, [
      os(),
      dpkg(""),
      { match: "/var/lib/apt/lists", stdout: "1700000600 1700000000\n" },
      policy(policyBlock("git", "1:2.39.2-1.1")),
      install("git"),
      dpkg(dpkgLine("git", "1:2.39.2-1.1")),
    ]);
    expect(result?.apt_update).toEqual({
      ran: false,
      reason: "package lists are 600s old, younger than cache_valid_sec 3600",
    });
    expect(lines).toContain(
      "[install-packages] apt-get update skipped: package lists are 600s old, younger than cache_valid_sec 3600",
    );
  });

  it("retries a busy dpkg lock and goes on", async () => {
    const { result, remote, lines } = await run({ packages: ["git"], apt: { lock_retry_delay_sec: 0 } }, [
      os(),
      dpkg(""),
      update,
      policy(policyBlock("git", "1:2.39.2-1.1")),
      install("git", { code: 100, stderr: LOCK_STDERR }),
      { match: "/proc/locks", stdout: LOCK_TABLE },
      { match: "/proc/$p/cmdline", stdout: SESSION_APT },
      install("git"),
      dpkg(dpkgLine("git", "1:2.39.2-1.1")),
    ]);
    expect(remote.done).toBe(true);
    expect(result?.status).toBe("ok");
    expect(lines.some((l) => l.includes("lock busy: /var/lib/dpkg/lock-frontend is held by pid 4242"))).toBe(true);
  });

  it("a lock that never frees fails the job naming the holder", async () => {
    const busy: Step[] = [
      install("git", { code: 100, stderr: LOCK_STDERR }),
      { match: "/proc/locks", stdout: LOCK_TABLE },
      { match: "/proc/$p/cmdline", stdout: SESSION_APT },
    ];
    const { error, remote } = await run({ packages: ["git"], apt: { lock_attempts: 2, lock_retry_delay_sec: 0 } }, [
      os(),
      dpkg(""),
      update,
      policy(policyBlock("git", "1:2.39.2-1.1")),
      ...busy,
      ...busy,
    ]);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      /^install-packages failed while installing: apt-get install: the apt\/dpkg lock stayed busy through 2 attempts/,
    );
    expect(error?.message).toContain("held by pid 4242 (apt-get install -y nginx; unit session-3.scope)");
  });

  it("refuses an unsupported OS before touching apt", async () => {
    const { error, remote } = await run({ packages: ["git"] }, [os(FEDORA_39)]);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      /^install-packages failed while detecting the OS: unsupported OS on the VM: \/etc\/os-release says ID=fedora/,
    );
    expect(remote.closed).toBe(true);
  });

  it("scrubs the SSH key from errors even when the VM echoes it", async () => {
    const keyLine = KEY.split("\n")[1];
    // The first look's dpkg-query failed too (its words are dropped there): dpkg-query is asked again, alone.
    const { error } = await run({ packages: ["git"] }, [
      { ...os(), facts: { os_release: DEBIAN_12, packages: { code: 2 } } },
      { match: "dpkg-query", code: 2, stderr: `weird: ${keyLine}\n` },
    ]);
    expect(error?.message).toMatch(/dpkg-query failed on the VM \(exit 2\)/);
    expect(error?.message).not.toContain(keyLine);
    expect(error?.message).toContain("[redacted:SSH_KEY]");
  });

  it("names the phase when connecting fails", async () => {
    const { error } = await run({ packages: ["git"] }, [], {
      connect: async () => {
        throw new Error("SSH authentication failed for ubuntu@192.0.2.10:22: ...");
      },
    });
    expect(error?.message).toMatch(
      /^install-packages failed while connecting over SSH: SSH authentication failed for ubuntu@192\.0\.2\.10:22/,
    );
  });
});

describe("install-packages: check mode (check: true)", () => {
  const damaged = {
    match: DPKG_HEALTH_LOOK.script,
    stdout: probeOutput({
      updates: "0001",
      audit:
        "The following packages are only half configured:\n jq                   lightweight and " +
        "flexible command-line JSON processor",
    }),
  };

  it("reports what it would install as would_change, in a real run's words, and runs no apt-get update or install", async () => {
    const { result, remote, lines } = await run({ packages: ["git", "curl", "jq=1.6-2.1ubuntu3"], check: true }, [
      os(UBUNTU_2204),
      dpkg(dpkgLine("curl", "7.81.0-1ubuntu1.15")),
      policy(policyBlock("git", "1:2.34.1-1ubuntu1.10") + policyBlock("jq", "1.6-2.1ubuntu3"), "git jq"),
    ]);
    expect(remote.done).toBe(true);
    expect(remote.calls.some((c) => /apt-get|dpkg --configure/.test(c.command))).toBe(false);
    expect(remote.calls.every((c) => !c.opts.sudo)).toBe(true);
    expect(result).toMatchObject({
      status: "ok",
      changed: false,
      changes: [],
      would_change: ["installed git jq"],
      summary: "check: 1 change would be made: installed git jq",
      installed: [],
      already_installed: ["curl"],
      apt_update: { ran: false, reason: "nothing was installed, so the package lists were not refreshed" },
    });
    expect(lines).toContain(
      "[install-packages] check mode: looking only; what would change is reported in would_change, nothing on the " +
        "VM is changed",
    );
  });

  it("says nothing would change when everything is installed; would_change is empty", async () => {
    const { result } = await run({ packages: ["git"], check: true }, [os(), dpkg(dpkgLine("git", "1:2.39.2-1.1"))]);
    expect(result).toMatchObject({
      changed: false,
      changes: [],
      would_change: [],
      summary: "check: nothing would change; nothing to do: all 1 package is already installed",
    });
  });

  it("a dpkg that needs repair is a foreseen change, listed first, and is not repaired", async () => {
    const { result, remote } = await run({ packages: ["jq"], check: true }, [
      os(UBUNTU_2204),
      dpkg(dpkgLine("jq", "1.6-2.1ubuntu3", "install ok half-configured")),
      damaged,
      policy(policyBlock("jq", "1.6-2.1ubuntu3"), "jq"),
    ]);
    expect(remote.done).toBe(true);
    expect(result!.would_change).toEqual([
      "repaired dpkg (an interrupted dpkg run; half-done packages: jq): dpkg --configure -a and apt-get -f install " +
        "--no-remove",
      "installed jq",
    ]);
    expect(result!.changes).toEqual([]);
  });

  it("a package the current lists do not offer is a warning, not a failure: a real run refreshes the lists first", async () => {
    const { result, error } = await run({ packages: ["nosuchpkg"], check: true }, [
      os(),
      dpkg(""),
      policy("", "nosuchpkg"),
    ]);
    expect(error).toBeUndefined();
    expect(result).toMatchObject({ status: "ok", would_change: ["installed nosuchpkg"], failed: [] });
    expect(result!.warnings[0]).toMatch(
      /^nosuchpkg may fail to install: .*in the VM's current package lists \(a real run refreshes them first\)$/,
    );
  });

  it("the same event without check is a real run: the check key is not sent by deploys", async () => {
    const { result } = await run({ packages: ["git"], check: false }, [os(), dpkg(dpkgLine("git", "1:2.39.2-1.1"))]);
    expect(result).not.toHaveProperty("would_change");
    expect(result!.summary).toBe("nothing to do: all 1 package is already installed");
  });

  it("rejects a check that is not a boolean before connecting", async () => {
    const { error, connects } = await run({ packages: ["git"], check: "yes" }, []);
    expect(error?.message).toMatch(/event check: expected true or false, got "yes"/);
    expect(connects).toBe(0);
  });
});
