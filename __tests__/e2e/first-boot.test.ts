// End-to-end: the first boot's hold on apt. A real process holds the real dpkg locks the way apt does
// (fcntl), inside a systemd service. Named unattended-upgrades.service it is the first boot's (or apt's
// own periodic) work: the install-packages job waits for it, whatever the lock settings, naming it in its
// progress, and the holder is let go only once the job's log says it waits. Named anything else it keeps
// the bounded wait of old: the job fails within seconds naming pid, command and unit, installing nothing.
// The event's lock settings are small, so the old bounded wait would give up within seconds in both.
import type { Sandbox } from "../../sandbox";
import { describeE2E, dpkgStatus, expectSucceeded, type InstallerRun, root, runInstaller, sandboxPerSuite } from "./support/e2e";
import { holdDpkgLockInUnit, type UnitLockHold } from "./support/faults";

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
              if (released === undefined && line.includes("waiting for the apt lock the first boot holds") && line.includes(`pid ${hold.pid}`)) {
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
        locks: ["/var/lib/dpkg/lock-frontend free", "/var/lib/dpkg/lock free", "/var/lib/apt/lists/lock free", "/var/cache/apt/archives/lock free"],
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
      expect(run.message).toContain(`/var/lib/dpkg/lock-frontend is held by pid ${hold.pid} (${hold.command}; unit ${unit})`);
      expect(run.message).toMatch(/not the VM's first boot/);
      expect(run.durationMs).toBeLessThan(60_000);
      expect(run.lines.some((l) => l.includes("waiting for the apt lock the first boot holds"))).toBe(false);
      expect((await dpkgStatus(sb, ["unzip"])).unzip).toBeUndefined();
      expect((await vmState(sb, unit)).audit).toBe("");
    },
    T,
  );
});
