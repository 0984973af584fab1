// End-to-end: install-postgres' `parameters` on one sandbox VM (Debian 12 -> PostgreSQL 15), installed
// once and then rerun: a check foresees old -> new values, a reloadable one is applied without a restart,
// a postmaster one with it, a value the server's parser refuses changes nothing, one that stops the
// server on restart is rolled back with its log lines, an unknown name names the nearest, a rerun has
// nothing to do and a name removed from the settings leaves the drop-in; then `extensions`. Read on the VM.
import type { Sandbox } from "../../dev/sandbox/index";
import { describeE2E, expectSucceeded, root, runInstaller, sandboxPerSuite, withoutFrames } from "./support/e2e";
import { FACTS } from "./support/release";
import { postgresByJob } from "./support/snapshots";

const T = 15 * 60_000;
const PG = FACTS.pgMajor;
const DROPIN = `/etc/postgresql/${PG}/main/conf.d/90-vm-install.conf`;
const PW = "Param-test-password-1";

describeE2E("install-postgres parameters on a sandbox VM", () => {
  let sb: Sandbox;
  sandboxPerSuite(
    (s) => {
      sb = s;
    },
    T,
    postgresByJob,
  );
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
      // A check foresees what is then in effect from pg_file_settings and pg_settings, in the run's words.
      const foresee = await job(event({}, { check: true }));
      expectSucceeded(foresee);
      const removed = await job(event({}));
      expectSucceeded(removed);
      expect(removed.result.changes).toEqual(foresee.result.would_change);
      expect(removed.result.changes).toEqual([
        `parameter max_connections '150' removed from ${DROPIN} (no longer in the settings; ` +
          "the server's other files or its default apply, restart)",
        `parameter work_mem '64MB' removed from ${DROPIN} (no longer in the settings; ` +
          "the server's other files or its default apply, reload)",
        `parameter max_connections: vm-install's '150' taken back; '100' from /etc/postgresql/${PG}/main/postgresql.conf in effect`,
        "parameter work_mem: vm-install's '64MB' taken back; '4MB' (default) in effect",
      ]);
      expect(await dropIn()).not.toMatch(/work_mem|max_connections/);
      expect(await sql("SHOW max_connections")).toBe("100");
      await until(async () => (await sql("SHOW work_mem")) === "4MB", "work_mem back to 4MB");
      await expectServing();
    },
    T,
  );

  it(
    "creates extensions, preloading what needs it next to the admin's libraries, and leaves a removed one",
    async () => {
      const inShop = async (q: string) =>
        (await root(sb, `cd / && runuser -u postgres -- psql -X -At -d shop -c ${sh(q)}`)).trim();
      // A library the admin preloads in a file of their own: kept.
      await root(
        sb,
        `echo "shared_preload_libraries = 'auto_explain'" > /etc/postgresql/${PG}/main/conf.d/50-admin.conf && ` +
          `systemctl restart postgresql@${PG}-main`,
      );
      const wanted = { work_mem: "32MB" };
      // No such extension, nor a package for it: the job fails at its first change, naming both.
      const before = await dropIn();
      const foreseen = await job(event(wanted, { extensions: ["nosuch_ext"], check: true }));
      expectSucceeded(foreseen);
      expect(foreseen.result.would_change).toContain(
        `package postgresql-${PG}-nosuch-ext installed (for extension nosuch_ext)`,
      );
      expect(foreseen.result.warnings.join("\n")).toContain(
        `postgresql-${PG}-nosuch-ext may fail to install: unknown package`,
      );
      const none = await job(event(wanted, { extensions: ["pg_stat_statements", "nosuch_ext"] }));
      expect(none.phase).toBe("Failed");
      expect(withoutFrames(none.message)).toContain(
        `extensions: nosuch_ext is not available on the server and postgresql-${PG}-nosuch-ext could not be installed`,
      );
      expect(await dropIn()).toBe(before);
      expect(await sql("SHOW shared_preload_libraries")).toBe("auto_explain");
      await expectServing();

      const check = await job(event(wanted, { extensions: ["pg_stat_statements", "plpython3u"], check: true }));
      expectSucceeded(check);
      expect(check.result.would_change).toEqual([
        `package postgresql-plpython3-${PG} installed (for extension plpython3u)`,
        `parameter work_mem '4MB' -> '32MB' (${DROPIN}, reload)`,
        `shared_preload_libraries 'auto_explain' -> 'auto_explain,pg_stat_statements' (${DROPIN}, restart; ` +
          "for pg_stat_statements)",
        "extension pg_stat_statements created in database shop",
        "extension plpython3u created in database shop",
      ]);

      const run = await job(event(wanted, { extensions: ["pg_stat_statements", "plpython3u"] }));
      expectSucceeded(run);
      expect(run.result.changes).toEqual(check.result.would_change);
      expect(run.result.restarted).toBe(true);
      expect(await sql("SHOW shared_preload_libraries")).toBe("auto_explain,pg_stat_statements");
      // Usable: the view answers (it errors when the library is not preloaded).
      expect(await inShop("SELECT count(*) FROM pg_stat_statements")).toMatch(/^[0-9]+$/);
      expect(await inShop("DO LANGUAGE plpython3u $$ plpy.notice('py') $$; SELECT 'ok'")).toBe("DO\nok");
      expect((await root(sb, `dpkg-query -W -f='\${Status}' postgresql-plpython3-${PG}`)).trim()).toBe(
        "install ok installed",
      );
      const inventory = async () => JSON.parse(await root(sb, "cat /var/lib/vm-install/grants.json"));
      expect((await inventory()).postgres.extensions).toEqual({
        [`${PG}/main:shop`]: ["pg_stat_statements", "plpython3u"],
      });

      const again = await job(event(wanted, { extensions: ["pg_stat_statements", "plpython3u"] }));
      expectSucceeded(again);
      expect(again.result.changes).toEqual([]);

      // Removed from the settings: reported, left in place, no longer recorded; its library stays loaded.
      const removed = await job(event(wanted, { extensions: ["plpython3u"] }));
      expectSucceeded(removed);
      expect(removed.result.changes).toEqual([]);
      expect(removed.result.warnings).toContain(
        "extension pg_stat_statements in database shop is no longer in the settings: left in place (dropping " +
          "loses data; DROP EXTENSION pg_stat_statements by hand if it is no longer used), no longer recorded",
      );
      expect(await inShop("SELECT extname FROM pg_extension WHERE extname = 'pg_stat_statements'")).toBe(
        "pg_stat_statements",
      );
      expect((await inventory()).postgres.extensions).toEqual({ [`${PG}/main:shop`]: ["plpython3u"] });
      expect(await sql("SHOW shared_preload_libraries")).toBe("auto_explain,pg_stat_statements");
      const quiet = await job(event(wanted, { extensions: ["plpython3u"] }));
      expectSucceeded(quiet);
      expect(quiet.result.changes).toEqual([]);
      expect(quiet.result.warnings).toEqual([]);

      // A value set by ALTER SYSTEM (postgresql.auto.conf, read after the drop-in) wins: said, not hidden.
      await sql("ALTER SYSTEM SET work_mem = '1MB'");
      await sql("SELECT pg_reload_conf()");
      await until(async () => (await sql("SHOW work_mem")) === "1MB", "work_mem 1MB");
      const over = await job(event(wanted, { extensions: ["plpython3u"] }));
      expectSucceeded(over);
      expect(over.result.warnings).toEqual([
        `parameter work_mem: the server runs with '1MB' from /var/lib/postgresql/${PG}/main/postgresql.auto.conf, ` +
          `read after ${DROPIN}, not with '32MB': remove it there (ALTER SYSTEM RESET work_mem)`,
      ]);
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
