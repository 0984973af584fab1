// End-to-end: the first boot's hold on apt. A real process holds the real dpkg locks the way apt does
// (fcntl), inside a systemd service. Named unattended-upgrades.service it is the first boot's (or apt's
// own periodic) work: the install-packages job waits for it, whatever the lock settings, naming it in its
// progress, and the holder is let go only once the job's log says it waits. Named anything else it keeps
// the bounded wait of old: the job fails within seconds naming pid, command and unit, installing nothing.
// The event's lock settings are small, so the old bounded wait would give up within seconds in both.
// Then real cloud-init (NoCloud): a first boot that upgrades packages after sshd answers is waited for,
// and one whose user-data fails fails the job with cloud-init's error, not apt's.
import { loginUserCloudConfig, multipartUserData, type Sandbox, startSandbox } from "../../dev/sandbox/index";
import {
  describeE2E,
  dpkgStatus,
  expectSucceeded,
  type InstallerRun,
  root,
  runInstaller,
  sandboxPerSuite,
} from "./support/e2e";
import { blockSsh, holdDpkgLockInUnit, type SshBlock, type UnitLockHold } from "./support/faults";

const T = 240_000;
const SHORT_LOCKS = { lock_timeout_sec: 1, lock_attempts: 2, lock_retry_delay_sec: 1 };

/** What is true on the VM after the job, read through nsenter: no lock held, dpkg clean, the unit gone. */
async function vmState(sb: Sandbox, unit: string) {
  const free = await root(
    sb,
    "python3 -c 'import fcntl, os, sys\n" +
      'for p in ["/var/lib/dpkg/lock-frontend", "/var/lib/dpkg/lock", "/var/lib/apt/lists/lock", "/var/cache/apt/archives/lock"]:\n' +
      "    fd = os.open(p, os.O_RDWR | os.O_CREAT)\n" +
      '    try: fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB); print(p, "free")\n' +
      '    except OSError: print(p, "held")\n\'',
  );
  return {
    locks: free.trim().split("\n"),
    audit: (await root(sb, "dpkg --audit; true")).trim(),
    unit: (await root(sb, `systemctl is-active ${unit}; true`)).trim(),
  };
}

describeE2E("the first boot's hold on the dpkg lock, on a sandbox VM", () => {
  let sb: Sandbox;
  sandboxPerSuite((s) => (sb = s), T);

  test(
    "held by unattended-upgrades.service: the job waits past lock_attempts naming the holder, and installs once it lets go",
    async () => {
      const unit = "unattended-upgrades.service";
      const hold: UnitLockHold = await holdDpkgLockInUnit(sb, unit, 600);
      let released: string | undefined;
      let run: InstallerRun;
      try {
        run = await runInstaller(
          sb,
          "install-packages",
          { packages: ["jq"], update: true, apt: SHORT_LOCKS },
          {
            // Let go when the job says it waits for this very holder: its own progress is the trigger.
            onLine: (line) => {
              if (
                released === undefined &&
                line.includes("waiting for the apt lock the first boot holds") &&
                line.includes(`pid ${hold.pid}`)
              ) {
                released = line;
                void hold.stop();
              }
            },
          },
        );
      } finally {
        await hold.stop();
      }
      expectSucceeded(run);
      expect(released).toContain(`is held by pid ${hold.pid} (${hold.command}; unit ${unit})`);
      expect(run.result.installed).toEqual(["jq"]);
      // It waited longer than the old bounded wait (2 runs of 1 s, 1 s apart) allowed, and said so each time.
      const waits = run.lines.filter((l) => l.includes("waiting for the apt lock the first boot holds"));
      expect(waits.length).toBeGreaterThanOrEqual(1);
      expect(run.lines.some((l) => /lock busy: .*attempt/.test(l))).toBe(false);
      expect((await dpkgStatus(sb, ["jq"])).jq).toBe("install ok installed");
      expect(await vmState(sb, unit)).toEqual({
        locks: [
          "/var/lib/dpkg/lock-frontend free",
          "/var/lib/dpkg/lock free",
          "/var/lib/apt/lists/lock free",
          "/var/cache/apt/archives/lock free",
        ],
        audit: "",
        unit: "inactive",
      });
    },
    T,
  );

  test(
    "the same holder in a unit of another name: the bounded wait, then Failed naming pid, command and unit; nothing installed",
    async () => {
      const unit = "vmi-lock-holder.service";
      const hold = await holdDpkgLockInUnit(sb, unit, 600);
      let run: InstallerRun;
      try {
        run = await runInstaller(sb, "install-packages", { packages: ["unzip"], update: true, apt: SHORT_LOCKS });
        // Still held when the job gave up: it was the bounded wait that ended, not the holder.
        expect((await vmState(sb, unit)).unit).toBe("active");
      } finally {
        await hold.stop();
      }
      expect(run.phase).toBe("Failed");
      expect(run.message).toMatch(/lock stayed busy through 2 attempts/);
      expect(run.message).toContain(
        `/var/lib/dpkg/lock-frontend is held by pid ${hold.pid} (${hold.command}; unit ${unit})`,
      );
      expect(run.message).toMatch(/not the VM's first boot/);
      expect(run.durationMs).toBeLessThan(60_000);
      expect(run.lines.some((l) => l.includes("waiting for the apt lock the first boot holds"))).toBe(false);
      expect((await dpkgStatus(sb, ["unzip"])).unzip).toBeUndefined();
      expect((await vmState(sb, unit)).audit).toBe("");
    },
    T,
  );
});

/** A sandbox booted the way a cloud boots: cloud-init makes the login user, then runs `part`. */
function cloudInitSandbox(part: string): Promise<Sandbox> {
  return startSandbox({
    user: "deploy",
    cloudInit: {
      userData: (pub) =>
        multipartUserData([
          { text: loginUserCloudConfig("deploy", pub), filename: "platform.cfg" },
          { text: part, filename: "case.cfg" },
        ]),
    },
  });
}

describeE2E("install-packages on a sandbox VM that cloud-init is still setting up", () => {
  let sb: Sandbox | undefined;
  afterEach(async () => {
    await sb?.stop();
    sb = undefined;
  }, T);

  // One boot for the wait and for the link dropped during it (issue 31): the same user-data and install,
  // the event's lock settings small and its SSH settings bounded, so each proves what it did alone.
  test(
    "package_upgrade: true, the job started as soon as sshd answers: it waits for cloud-init, names the lock's holder, keeps waiting across a dropped SSH link (reconnecting), then installs",
    async () => {
      const vm = await cloudInitSandbox("#cloud-config\npackage_upgrade: true\n");
      sb = vm;
      let block: SshBlock | undefined;
      let restored: Promise<number> | undefined;
      const run = await runInstaller(
        vm,
        "install-packages",
        {
          packages: ["jq"],
          update: true,
          apt: SHORT_LOCKS,
          ssh: { attempts: 8, delay_sec: 2, budget_sec: 90, timeout_sec: 5 },
        },
        {
          // The link goes when the job says it waits, and comes back when it says it reconnects.
          onLine: (line) => {
            if (!block && line.includes("waiting for cloud-init to finish the first boot"))
              void blockSsh(vm).then((b) => (block = b));
            if (block && !restored && line.includes("the SSH connection was lost; reconnecting"))
              restored = block.restore();
          },
        },
      ).finally(() => block?.restore());
      expectSucceeded(run);
      expect(restored).toBeDefined();
      expect(run.result.installed).toEqual(["jq"]);
      const waits = run.lines.filter((l) => l.includes("waiting for cloud-init to finish the first boot"));
      expect(waits.length).toBeGreaterThanOrEqual(1);
      // What held the lock while it waited: cloud-init's own apt, in cloud-final.service.
      expect(waits.join("\n")).toMatch(
        /apt lock: .*is held by pid \d+ \(apt-get [^;)]*(upgrade|update)[^;)]*; unit cloud-final\.service\)/,
      );
      // It waited on both sides of the drop: a look before it, a look after the reconnect.
      const reconnect = run.lines.findIndex((l) => l.includes("the SSH connection was lost; reconnecting"));
      expect(run.lines.slice(0, reconnect).some((l) => l.includes("waiting for cloud-init"))).toBe(true);
      expect(run.lines.slice(reconnect).some((l) => l.includes("cloud-init has finished the first boot"))).toBe(true);
      expect(run.lines).toContain("[install-packages] cloud-init has finished the first boot");
      expect(run.result.timings_ms.first_boot).toBeGreaterThan(0);
      // On the VM: cloud-init done, the upgrade and the install both complete, dpkg clean, nothing held.
      expect(await root(vm, "cloud-init status; true")).toMatch(/^status: done$/m);
      expect((await dpkgStatus(vm, ["jq"])).jq).toBe("install ok installed");
      expect((await root(vm, "apt-get -s -o Debug::NoLocking=1 dist-upgrade | grep -c '^Inst ' || true")).trim()).toBe(
        "0",
      );
      expect(await vmState(vm, "cloud-final.service")).toMatchObject({
        audit: "",
        locks: expect.not.arrayContaining([expect.stringMatching(/held$/)]),
      });
    },
    T,
  );

  test(
    "a runcmd that fails: the job fails naming cloud-init's error and its own lines, not apt's; nothing installed",
    async () => {
      sb = await cloudInitSandbox('#cloud-config\nruncmd:\n  - [sh, -c, "echo vmi-runcmd-broke >&2; exit 3"]\n');
      const run = await runInstaller(sb, "install-packages", { packages: ["jq"], update: true });
      expect(run.phase).toBe("Failed");
      expect(run.message).toMatch(
        /failed while waiting for the VM's first boot \(cloud-init\): cloud-init reported errors on the VM's first boot/,
      );
      expect(run.message).toContain("Runparts: 1 failures (runcmd) in 1 attempted commands");
      expect(run.message).toContain("vmi-runcmd-broke");
      expect(run.message).toMatch(/fix the VM's user-data \(cloud_init\)/);
      expect(run.message).not.toMatch(/dpkg|apt-get|lock/);
      expect((await dpkgStatus(sb, ["jq"])).jq).toBeUndefined();
      expect(await root(sb, "cloud-init status; true")).toMatch(/^status: error$/m);
    },
    T,
  );
});
