// End-to-end: install-postgres' `parameters` on one sandbox VM (Debian 12 -> PostgreSQL 15), installed
// once and then rerun: a check foresees old -> new values, a reloadable one is applied without a restart,
// a postmaster one with it, a value the server's parser refuses changes nothing, one that stops the
// server on restart is rolled back with its log lines, an unknown name names the nearest, a rerun has
// nothing to do and a name removed from the settings leaves the drop-in. Every outcome is read on the VM.
import type { Sandbox } from "../../sandbox/index";
import { describeE2E, expectSucceeded, root, runInstaller, sandboxPerSuite, withoutFrames } from "./support/e2e";
import { FACTS } from "./support/release";

const T = 15 * 60_000;
const PG = FACTS.pgMajor;
const DROPIN = `/etc/postgresql/${PG}/main/conf.d/90-vm-install.conf`;
const PW = "Param-test-password-1";

describeE2E("install-postgres parameters on a sandbox VM", () => {
  let sb: Sandbox;
  sandboxPerSuite((s) => {
    sb = s;
  }, T);
  const event = (parameters: Record<string, unknown>, over: Record<string, unknown> = {}) => ({
    db_name: "shop",
    db_user: "shop_app",
    db_password: PW,
    parameters,
    ...over,
  });
  const job = (ev: Record<string, unknown>) => runInstaller(sb, "install-postgres", ev, { secrets: [PW] });
  /** SQL as postgres on the VM (test reads only). */
  const sql = async (q: string) => (await root(sb, `cd / && runuser -u postgres -- psql -X -At -c ${sh(q)}`)).trim();
  const startTime = () => sql("SELECT pg_postmaster_start_time()");
  const dropIn = () => root(sb, `cat ${DROPIN}`);
  const expectServing = async () => {
    expect((await root(sb, `systemctl is-active postgresql@${PG}-main`)).trim()).toBe("active");
    expect(await sql("SELECT 6 * 7")).toBe("42");
  };

  it(
    "installs, foresees, reloads, restarts, refuses, rolls back and leaves a removed name",
    async () => {
      expectSucceeded(await job(event({})));
      const t0 = await startTime();

      // A check foresees each setting's old and new value, and the restart.
      const check = await job(event({ work_mem: "64MB", max_connections: 150 }, { check: true }));
      expectSucceeded(check);
      expect(check.result.would_change).toEqual([
        `parameter max_connections '100' -> '150' (${DROPIN}, restart)`,
        `parameter work_mem '4MB' -> '64MB' (${DROPIN}, reload)`,
      ]);
      expect(await startTime()).toBe(t0);
      expect(await sql("SHOW work_mem")).toBe("4MB");

      // Reloadable: applied by a reload, the postmaster not restarted.
      const reload = await job(event({ work_mem: "64MB" }));
      expectSucceeded(reload);
      expect(reload.result.changes).toEqual([`parameter work_mem '4MB' -> '64MB' (${DROPIN}, reload)`]);
      expect(reload.result).toMatchObject({ restarted: false, reloaded: true });
      await until(async () => (await sql("SHOW work_mem")) === "64MB", "work_mem 64MB");
      expect(await startTime()).toBe(t0);
      expect(await dropIn()).toContain("work_mem = '64MB'\n");

      // A postmaster setting: restarted, nothing left waiting.
      const restart = await job(event({ work_mem: "64MB", max_connections: 150 }));
      expectSucceeded(restart);
      expect(restart.result.changes).toEqual([`parameter max_connections '100' -> '150' (${DROPIN}, restart)`]);
      expect(restart.result.restarted).toBe(true);
      expect(await sql("SHOW max_connections")).toBe("150");
      expect(await sql("SELECT count(*) FROM pg_settings WHERE pending_restart")).toBe("0");
      const t1 = await startTime();
      expect(t1).not.toBe(t0);

      // Rerun: nothing to do, in a check and in a run.
      const again = await job(event({ work_mem: "64MB", max_connections: 150 }));
      expectSucceeded(again);
      expect(again.result.changes).toEqual([]);
      expect(again.result.restarted).toBe(false);
      const before = await dropIn();

      // Refused by the server's parser (an enum, a range, a unit): nothing written, nothing restarted.
      for (const [name, value, words] of [
        ["wal_level", "bogus", 'invalid value for parameter "wal_level": "bogus"'],
        ["max_connections", 9999999, 'outside the valid range for parameter "max_connections"'],
        ["work_mem", "64 parsecs", 'invalid value for parameter "work_mem"'],
      ] as const) {
        const bad = await job(event({ work_mem: "64MB", max_connections: 150, [name]: value }));
        expect(bad.phase).toBe("Failed");
        expect(withoutFrames(bad.message)).toContain(words);
        expect(withoutFrames(bad.message)).toContain("nothing was changed");
        expect(await dropIn()).toBe(before);
      }
      // A check says the same before anything changes.
      const badCheck = await job(event({ wal_level: "bogus" }, { check: true }));
      expect(badCheck.phase).toBe("Failed");
      expect(withoutFrames(badCheck.message)).toContain('invalid value for parameter "wal_level"');

      // Unknown name: the nearest are named.
      const typo = await job(event({ work_mme: "64MB" }));
      expect(typo.phase).toBe("Failed");
      expect(withoutFrames(typo.message)).toMatch(/no setting work_mme \(nearest: [^)]*work_mem/);
      expect(await dropIn()).toBe(before);
      expect(await startTime()).toBe(t1);

      // Parsed fine, refused at start (below superuser_reserved_connections): rolled back with the log's words.
      const stop = await job(event({ work_mem: "64MB", max_connections: 2 }));
      expect(stop.phase).toBe("Failed");
      expect(withoutFrames(stop.message)).toContain("must be less than max_connections (2)");
      expect(withoutFrames(stop.message)).toContain("Rolled back");
      expect(await dropIn()).toBe(before);
      await expectServing();
      expect(await sql("SHOW max_connections")).toBe("150");

      // Removed from the settings: out of the drop-in, back to the default (a restart for max_connections).
      const removed = await job(event({}));
      expectSucceeded(removed);
      expect(removed.result.changes).toEqual([
        `parameter max_connections '150' removed from ${DROPIN} (no longer in the settings; ` +
          "the server's other files or its default apply, restart)",
        `parameter work_mem '64MB' removed from ${DROPIN} (no longer in the settings; ` +
          "the server's other files or its default apply, reload)",
      ]);
      expect(await dropIn()).not.toMatch(/work_mem|max_connections/);
      expect(await sql("SHOW max_connections")).toBe("100");
      await until(async () => (await sql("SHOW work_mem")) === "4MB", "work_mem back to 4MB");
      await expectServing();
    },
    T,
  );
});

/** A shell word for the VM's shell. */
function sh(s: string): string {
  return `'${s.replace(/'/g, "'\\''")}'`;
}

/** Polls `check` every 100 ms until it holds, for at most 20 s. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
