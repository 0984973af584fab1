// The first boot: cloud-init waited for (every outcome, 22.4's and 23.4's shapes), and an apt lock held by
// cloud-init, apt-daily or unattended-upgrades waited for within the job's budget, not a count of
// attempts; holders classified by their unit, never by a name alone.
import { Apt, DEFAULT_APT } from "../../handlers/common/apt";
import { BOOT_LOOK } from "../../handlers/common/boot-look";
import { CLOUD_INIT_LOOK, cloudInitFrom, cloudInitState } from "../../handlers/common/cloud-init";
import { FIRST_BOOT_POLL_MS, FirstBootClock } from "../../handlers/common/first-boot";
import type { InstallerDeps } from "../../handlers/common/handler-kit";
import {
  firstBootReason,
  LOCK_TABLE_LOOK,
  parseHolderDetails,
  parseLockTable,
} from "../../handlers/common/lock-holders";
import { handler as dockerHandler } from "../../handlers/install-docker/handler";
import { handler } from "../../handlers/install-packages/handler";
import { handler as postgresHandler } from "../../handlers/install-postgres/handler";
import {
  cloudInitProbe,
  DONE_22,
  DONE_RECOVERABLE_23,
  FINAL_RUNNING,
  RUNCMD_ERROR,
  RUNCMD_FAILED_22,
  RUNNING_FINAL_22,
  statusJson,
} from "./support/cloud-init-fixtures";
import {
  CLOUD_FINAL_APT,
  DEBIAN_12,
  dpkgLine,
  FAKED_UNATTENDED,
  holderChain,
  LOCK_STAT,
  LOCK_STDERR,
  LOCK_TABLE,
  LOCK_TABLE_FREE,
  policyBlock,
  SESSION_APT,
  UNATTENDED_UPGRADE,
} from "./support/fixtures";
import { type Answer, answerLook } from "./support/look-answers";
import { runScripted } from "./support/run-scripted";
import { ScriptedRemote, type Step } from "./support/scripted-remote";

/** A clock that moves only when the code sleeps: waits take no real time, budgets are exact. */
function fakeTime() {
  const t = { now: 0 };
  return {
    t,
    deps: { now: () => t.now, sleep: async (ms: number) => void (t.now += ms) } satisfies Partial<InstallerDeps>,
  };
}

const os: Step = { match: "cat /etc/os-release", facts: { os_release: DEBIAN_12 } };
/** The kit's first look: os-release, and cloud-init as `cloud` says (no cloud-init when not given). */
const boot = (cloud: Record<string, Answer> = {}): Step => ({
  match: "cat /etc/os-release",
  sudo: false,
  facts: { os_release: DEBIAN_12, ...cloud },
});
/** cloud-init looked at again while the first boot goes on. */
const probe = (facts: Record<string, Answer>): Step => ({ match: "/run/cloud-init/status.json", sudo: false, facts });
const locks = (stdout: string): Step => ({ match: "/proc/locks", sudo: true, stdout });
const details = (stdout: string): Step => ({ match: "/proc/$p/cmdline", sudo: true, stdout });
const dpkg = (stdout: string): Step => ({ match: /^dpkg-query -W /, code: 1, stdout });
const update: Step = { match: /^apt-get update /, sudo: true };
const policy: Step = { match: "apt-cache policy", stdout: policyBlock("git", "1:2.39.2-1.1") };
const install = (extra: Partial<Step> = {}): Step => ({ match: /^apt-get install -y /, sudo: true, ...extra });
const installed = dpkg(dpkgLine("git", "1:2.39.2-1.1"));
/** cloud-init's log read (22.x records its warnings there only): `log` lines, then its output log. */
const cloudLog = (log = "", output = ""): Step => ({
  match: "cloud-init-output.log",
  sudo: true,
  facts: { "cloud_init.log": log, "cloud_init.output": output },
});
const run = (event: unknown, script: Step[], deps: Partial<InstallerDeps> = {}) =>
  runScripted(handler, { packages: ["git"], ...(event as object) }, script, deps);

describe("cloud-init's state, from its own files", () => {
  const state = (answers: Record<string, Answer>) =>
    cloudInitState(cloudInitFrom(CLOUD_INIT_LOOK.parse(answerLook(CLOUD_INIT_LOOK, answers)).get));

  it("no cloud-init, disabled, or installed but not run this boot: nothing to wait for", () => {
    expect(state({ cloud_init: "none\n" }).kind).toBe("absent");
    expect(state(cloudInitProbe({ markers: ["/etc/cloud/cloud-init.disabled"] }))).toMatchObject({
      kind: "disabled",
      words: expect.stringContaining("/etc/cloud/cloud-init.disabled"),
    });
    expect(state(cloudInitProbe({ markers: [], units: [] })).kind).toBe("not-run");
  });

  it("22.4 and 23.4 shapes: done, done with recoverable errors, failed, running, between stages, not started", () => {
    expect(state(DONE_22)).toEqual({ kind: "done", warnings: [], logOnly: true });
    expect(state(DONE_RECOVERABLE_23)).toEqual({
      kind: "done",
      warnings: [
        "DEPRECATED: Deprecated cloud-config provided: chpasswd.list: Deprecated in version 22.2.",
        "WARNING: Invalid cloud-config provided: foo: Additional properties are not allowed",
      ],
    });
    expect(state(RUNCMD_FAILED_22)).toMatchObject({ kind: "failed", errors: [RUNCMD_ERROR] });
    expect(state(RUNNING_FINAL_22)).toEqual({
      kind: "running",
      words: "cloud-init to finish the first boot: stage modules:final",
    });
    const between = cloudInitProbe({
      status: statusJson({ finished: ["init-local", "init"] }),
      system: "starting",
      units: FINAL_RUNNING,
    });
    expect(state(between)).toEqual({
      kind: "running",
      words: "cloud-init to finish the first boot: init done, next stage",
    });
    expect(state(cloudInitProbe({ system: "starting", units: FINAL_RUNNING }))).toMatchObject({
      kind: "running",
      words: expect.stringContaining("not started yet"),
    });
    // 22.4 says "error" as soon as a stage has one, though later stages still run: still running here.
    const early = cloudInitProbe({
      status: statusJson({
        finished: ["init-local", "init", "modules-config"],
        running: "modules-final",
        errors: { "modules-config": ["x"] },
      }),
      system: "starting",
      units: FINAL_RUNNING,
    });
    expect(state(early).kind).toBe("running");
  });

  it("a stage that never ended, no unit left running and the boot over: cloud-init died", () => {
    const died = cloudInitProbe({
      status: statusJson({ finished: ["init-local", "init", "modules-config"], running: "modules-final" }),
      system: "degraded",
      units: [...FINAL_RUNNING.slice(0, 3), { id: "cloud-final.service", active: "failed", result: "signal" }],
    });
    expect(state(died)).toMatchObject({
      kind: "failed",
      stage: "modules-final",
      errors: [expect.stringMatching(/unit cloud-final\.service failed \(signal\)/)],
    });
  });
});

describe("lock holders: first boot by unit, never by a name alone", () => {
  const reason = (chain: string) => firstBootReason(parseHolderDetails(chain).get(4242) ?? []);

  it("each first-boot holder is known by its unit", () => {
    expect(reason(UNATTENDED_UPGRADE)).toBe("unit apt-daily-upgrade.service");
    expect(reason(CLOUD_FINAL_APT)).toBe("unit cloud-final.service");
    for (const unit of [
      "apt-daily.service",
      "unattended-upgrades.service",
      "cloud-config.service",
      "cloud-init.service",
    ]) {
      expect(reason(holderChain(4242, [[4242, 1, `/system.slice/${unit}`, "python3 hold.py"]]))).toBe(`unit ${unit}`);
    }
  });

  it("a foreign holder, and a faked name in a unit that is no first-boot one, are not", () => {
    expect(reason(SESSION_APT)).toBeUndefined();
    expect(reason(FAKED_UNATTENDED)).toBeUndefined();
    expect(
      reason(holderChain(4242, [[4242, 1, "/system.slice/cloud-backup.service", "/usr/bin/cloud-init modules"]])),
    ).toBeUndefined();
  });

  it("without a unit (no systemd), the ancestry decides", () => {
    const noUnit = (cmd: string, parent: string) =>
      holderChain(4242, [
        [4242, 300, "/", cmd],
        [300, 1, "/", parent],
      ]);
    expect(reason(noUnit("apt-get -y upgrade", "/usr/bin/python3 /usr/bin/cloud-init modules --mode=final"))).toBe(
      "started by /usr/bin/python3 /usr/bin/cloud-init modules --mode=final (pid 300)",
    );
    expect(
      reason(noUnit("/usr/bin/python3 /usr/bin/unattended-upgrade", "/bin/sh /usr/lib/apt/apt.systemd.daily install")),
    ).toMatch(/^command /);
    expect(reason(noUnit("apt-get -qq update", "/bin/sh /usr/lib/apt/apt.systemd.daily update"))).toBe(
      "started by /bin/sh /usr/lib/apt/apt.systemd.daily update (pid 300)",
    );
    expect(reason(noUnit("apt-get install nginx", "-bash"))).toBeUndefined();
    // Only where the packages put them (root's paths): a copy in a home directory is not cloud-init.
    expect(reason(noUnit("apt-get install nginx", "python3 /home/eve/bin/cloud-init modules"))).toBeUndefined();
    expect(reason(noUnit("/home/eve/unattended-upgrade", "-bash"))).toBeUndefined();
  });

  it("open-file-description locks (pid -1 in /proc/locks) are found through fdinfo", () => {
    const table = answerLook(LOCK_TABLE_LOOK, {
      "locks.files": LOCK_STAT,
      "locks.proc": "5: OFDLCK ADVISORY  WRITE -1 00:2d:131090 0 EOF\n",
      "locks.ofd": "131090 977\n",
    });
    expect(parseLockTable(table)).toEqual([{ lock: "/var/lib/dpkg/lock-frontend", pid: 977 }]);
  });
});

describe("the first-boot clock", () => {
  it("ends at the budget or at first_boot_wait_sec from the first wait, whichever is first, and says which", () => {
    const t = { now: 100_000 };
    const budget = { started: 0, budgetSec: 600, now: () => t.now };
    const capped = new FirstBootClock({ budget, capSec: 120, now: budget.now });
    expect(capped.leftMs()).toBe(120_000);
    t.now += 50_000;
    expect(capped.leftMs()).toBe(70_000);
    expect(capped.limitWords()).toMatch(/apt\.first_boot_wait_sec \(120s/);
    const byBudget = new FirstBootClock({ budget, capSec: 1800, now: budget.now });
    expect(byBudget.leftMs()).toBe(450_000);
    expect(byBudget.limitWords()).toMatch(/time_budget_sec 600s, set from the installer's waitTimeoutSec/);
    expect(new FirstBootClock({ capSec: 30, now: budget.now }).leftMs()).toBe(30_000);
  });
});

describe("install-packages waits for cloud-init", () => {
  it("no cloud-init: one look (the kit's first, with os-release), no wait, no warning", async () => {
    const { result, remote } = await run({}, [boot(), dpkg(""), update, policy, install(), installed]);
    expect(result?.status).toBe("ok");
    expect(remote.calls[0].command.startsWith(`${BOOT_LOOK.script}\n`)).toBe(true); // and the dpkg-query
    // boot look, update (the policy and dpkg's health read after it), install (the verify rides in the look
    // after it, answered by the double)
    expect(remote.calls).toHaveLength(3);
    expect(remote.implicit).toEqual([]);
    expect(remote.transactionLooks).toBe(1);
    expect(remote.cloudInitLooks).toBe(0);
    expect(result?.warnings).toEqual([]);
    expect(result?.timings_ms).not.toHaveProperty("first_boot");
  });

  it("running: looked at every few seconds naming the stage, then the install goes on", async () => {
    const { t, deps } = fakeTime();
    const { result, remote, lines } = await run(
      {},
      [
        boot(RUNNING_FINAL_22),
        probe(RUNNING_FINAL_22),
        probe(RUNNING_FINAL_22),
        probe(DONE_22),
        cloudLog(),
        dpkg(""),
        update,
        policy,
        install(),
        installed,
      ],
      deps,
    );
    expect(remote.done).toBe(true);
    expect(result?.status).toBe("ok");
    const waits = lines.filter((l) => l.includes("waiting for cloud-init"));
    expect(waits).toEqual(
      [0, 5, 10].map(
        (s) => `[install-packages] waiting for cloud-init to finish the first boot: stage modules:final (${s} s)`,
      ),
    );
    expect(lines).toContain("[install-packages] cloud-init has finished the first boot");
    expect(t.now).toBe(3 * FIRST_BOOT_POLL_MS);
    expect(result?.timings_ms.first_boot).toBe(15_000);
  });

  it("22.4 done, with a user-data part it could not parse: its log's WARNING lines become the result's warning", async () => {
    const log =
      "2026-12-04 01:16:29,100 - util.py[WARNING]: Failed loading yaml blob. Invalid format at line 2 column 9: " +
      '"while parsing a flow sequence"\n' +
      "2026-12-04 01:16:29,101 - cloud_config.py[WARNING]: Failed at merging in cloud config part from case.cfg: " +
      "empty cloud config\n";
    const { result } = await run({}, [boot(DONE_22), cloudLog(log), dpkg(""), update, policy, install(), installed]);
    expect(result?.status).toBe("ok");
    expect(result?.warnings).toEqual([
      "cloud-init finished the VM's first boot with warnings in its log (/var/log/cloud-init.log): " +
        'util.py[WARNING]: Failed loading yaml blob. Invalid format at line 2 column 9: "while parsing a flow ' +
        'sequence"; ' +
        "cloud_config.py[WARNING]: Failed at merging in cloud config part from case.cfg: empty cloud config",
    ]);
  });

  it("while cloud-init runs, each line also names who holds apt's lock", async () => {
    const { deps } = fakeTime();
    const { lines } = await run(
      {},
      [
        boot(RUNNING_FINAL_22),
        locks(LOCK_TABLE),
        details(CLOUD_FINAL_APT),
        probe(DONE_22),
        cloudLog(),
        dpkg(""),
        update,
        policy,
        install(),
        installed,
      ],
      deps,
    );
    expect(lines).toContain(
      "[install-packages] waiting for cloud-init to finish the first boot: stage modules:final; apt lock: " +
        "/var/lib/dpkg/lock-frontend is held by pid 4242 " +
        "(apt-get --option=Dpkg::Options::=--force-confold --assume-yes --quiet dist-upgrade; unit " +
        "cloud-final.service); /var/lib/dpkg/lock is held by pid 4242 " +
        "(apt-get --option=Dpkg::Options::=--force-confold --assume-yes --quiet dist-upgrade; unit " +
        "cloud-final.service) (0 s)",
    );
  });

  it("done with recoverable errors (23.4+): a warning in the result naming them", async () => {
    const { result } = await run({}, [boot(DONE_RECOVERABLE_23), dpkg(""), update, policy, install(), installed]);
    expect(result?.status).toBe("ok");
    expect(result?.warnings).toEqual([
      "cloud-init finished the VM's first boot with recoverable errors: DEPRECATED: Deprecated cloud-config " +
        "provided: chpasswd.list: Deprecated in version 22.2.; " +
        "WARNING: Invalid cloud-config provided: foo: Additional properties are not allowed",
    ]);
  });

  it("failed: the job fails with cloud-init's own lines, scrubbed and printable, before any apt work", async () => {
    const log =
      "2024-05-01 10:00:09,101 - subp.py[WARNING]: Failed running /var/lib/cloud/instance/scripts/runcmd [1]\n" +
      "2024-05-01 10:00:09,102 - util.py[WARNING]: Failed to run module scripts-user (scripts in " +
      "/var/lib/cloud/instance/scripts)\x1b]0;pwned\x07\n" +
      "";
    const { error, remote } = await run({}, [boot(RUNCMD_FAILED_22), cloudLog(log, "+ false\n")]);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      /^install-packages failed while waiting for the VM's first boot \(cloud-init\): cloud-init reported errors on the VM's first boot/,
    );
    expect(error?.message).toContain(RUNCMD_ERROR);
    expect(error?.message).toContain("Failed running /var/lib/cloud/instance/scripts/runcmd [1]");
    expect(error?.message).toContain("cloud-init-output.log ends:\n+ false");
    expect(error?.message).toMatch(/fix the VM's user-data \(cloud_init\) and replace the VM/);
    expect(error?.message).not.toContain("\x1b");
    expect(error?.message).not.toContain("pwned");
    // (The first look read dpkg's state, read-only, with os-release.)
    expect(remote.calls.slice(1).some((c) => /apt-get|dpkg-query/.test(c.command))).toBe(false);
  });

  it("still running when the job's budget ends: fails naming the stage and the setting to raise", async () => {
    const { t, deps } = fakeTime();
    // Twelve looks, 5 s apart: the kit's first, then eleven of cloud-init alone.
    const script = Array.from({ length: 11 }, () => probe(RUNNING_FINAL_22));
    const { error, remote } = await run({ time_budget_sec: 60 }, [boot(RUNNING_FINAL_22), ...script], deps);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      /cloud-init had not finished the VM's first boot after 60 s \(still waiting for stage modules:final\)/,
    );
    expect(error?.message).toMatch(
      /time_budget_sec 60s, set from the installer's waitTimeoutSec in cdktf.json: raise that/,
    );
    expect(t.now).toBe(60_000);
  });

  it("apt.first_boot_wait_sec 0: cloud-init, even running, is not waited for nor looked at again", async () => {
    const { result, remote } = await run({ apt: { first_boot_wait_sec: 0 } }, [
      boot(RUNNING_FINAL_22),
      dpkg(""),
      update,
      policy,
      install(),
      installed,
    ]);
    expect(result?.status).toBe("ok");
    expect(remote.cloudInitLooks).toBe(0);
  });

  it("a look lost with the SSH link is looked again", async () => {
    const { deps } = fakeTime();
    const lost: Step = { ...probe(RUNNING_FINAL_22), code: null };
    const { result } = await run(
      {},
      [boot(RUNNING_FINAL_22), lost, probe(DONE_22), cloudLog(), dpkg(""), update, policy, install(), installed],
      deps,
    );
    expect(result?.status).toBe("ok");
  });

  it("check mode waits as well: what it reads is what a real run would see after the first boot", async () => {
    const { deps } = fakeTime();
    const { result, remote, lines } = await run(
      { check: true },
      [boot(RUNNING_FINAL_22), probe(DONE_22), cloudLog(), dpkg(""), policy],
      deps,
    );
    expect(remote.done).toBe(true);
    expect(result?.would_change).toEqual(["installed git"]);
    expect(lines.some((l) => l.includes("waiting for cloud-init"))).toBe(true);
  });
});

describe("every installer waits for the first boot before its own work", () => {
  const pg = { db_name: "myapp", db_user: "app_user", db_password: "a-long-enough-password" };
  it.each([
    ["install-packages", handler, { packages: ["git"] }],
    ["install-docker", dockerHandler, {}],
    ["install-postgres", postgresHandler, pg],
  ] as const)("%s: a failed first boot fails it before anything of its own ran", async (name, spec, event) => {
    const { error, remote } = await runScripted(spec as never, event, [boot(RUNCMD_FAILED_22), cloudLog()]);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      new RegExp(`^${name} failed while waiting for the VM's first boot \\(cloud-init\\)`),
    );
    expect(remote.lockLooks).toBe(0);
  });
});

describe("a lock held by the first boot is waited for within the budget, not lock_attempts", () => {
  const short = { lock_attempts: 2, lock_retry_delay_sec: 1, lock_timeout_sec: 2 };

  it("held by unattended-upgrade past lock_attempts: waits, naming the holder every few seconds, then installs", async () => {
    const { deps } = fakeTime();
    const busy = [locks(LOCK_TABLE), details(UNATTENDED_UPGRADE)];
    const { result, remote, lines } = await run(
      { apt: short },
      [
        os,
        dpkg(""),
        update,
        policy,
        install({ code: 100, stderr: LOCK_STDERR }),
        ...busy,
        ...busy,
        ...busy,
        ...busy,
        locks(LOCK_TABLE_FREE),
        install(),
        installed,
      ],
      deps,
    );
    expect(remote.done).toBe(true);
    expect(result?.status).toBe("ok");
    const waits = lines.filter((l) => l.includes("waiting for the apt lock the first boot holds"));
    expect(waits).toHaveLength(4);
    expect(waits[0]).toBe(
      "[install-packages] waiting for the apt lock the first boot holds (apt-get install): " +
        "/var/lib/dpkg/lock-frontend is held by pid 4242 " +
        "(/usr/bin/python3 /usr/bin/unattended-upgrade; unit apt-daily-upgrade.service); /var/lib/dpkg/lock is held " +
        "by pid 4242 " +
        "(/usr/bin/python3 /usr/bin/unattended-upgrade; unit apt-daily-upgrade.service) (0 s)",
    );
    expect(lines.some((l) => l.includes("attempt 2/2"))).toBe(false);
  });

  it("held by cloud-init's apt as apt-get update ends: waited for before dpkg's health counts", async () => {
    const { deps } = fakeTime();
    const { result, remote, lines } = await run(
      {},
      [
        os,
        dpkg(""),
        update,
        // The look after the update: the lock is held, so what it read of dpkg is not taken.
        locks(LOCK_TABLE),
        locks(LOCK_TABLE),
        details(CLOUD_FINAL_APT),
        locks(LOCK_TABLE),
        details(CLOUD_FINAL_APT),
        locks(LOCK_TABLE_FREE),
        policy,
        install(),
        installed,
      ],
      deps,
    );
    expect(remote.done).toBe(true);
    expect(result?.status).toBe("ok");
    expect(lines.filter((l) => l.includes("unit cloud-final.service"))).toHaveLength(2);
  });

  it("held by the first boot past the budget: fails naming the holder and the setting to raise", async () => {
    const { deps } = fakeTime();
    const busy = Array.from({ length: 6 }, () => [locks(LOCK_TABLE), details(UNATTENDED_UPGRADE)]).flat();
    const { error, remote } = await run(
      { time_budget_sec: 30 },
      [os, dpkg(""), update, locks(LOCK_TABLE), ...busy],
      deps,
    );
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      /stayed held by the VM's first boot or apt's own periodic work: \/var\/lib\/dpkg\/lock-frontend is held by pid 4242/,
    );
    expect(error?.message).toMatch(/unit apt-daily-upgrade\.service/);
    expect(error?.message).toMatch(/time_budget_sec 30s/);
  });

  it("a faked unattended-upgrade in ssh.service keeps the bounded wait and fails after lock_attempts naming it", async () => {
    const busy = [install({ code: 100, stderr: LOCK_STDERR }), locks(LOCK_TABLE), details(FAKED_UNATTENDED)];
    const { error, remote } = await run({ apt: { ...short, lock_retry_delay_sec: 0 } }, [
      os,
      dpkg(""),
      update,
      policy,
      ...busy,
      ...busy,
    ]);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(/lock stayed busy through 2 attempts/);
    expect(error?.message).toContain(
      "held by pid 4242 (/usr/bin/python3 /usr/bin/unattended-upgrade; unit ssh.service)",
    );
  });

  it("Apt alone (no kit): the proactive look costs one read when nobody holds a lock", async () => {
    const remote = new ScriptedRemote([install()]);
    await new Apt(remote, DEFAULT_APT, { sleep: async () => undefined }).install(["git"]);
    expect(remote.lockLooks).toBe(1);
    expect(LOCK_TABLE_LOOK.script).toContain("/proc/locks");
  });
});
