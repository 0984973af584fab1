// A rerun on a VM where install-postgres already ran: nothing asked for again is done again (no CREATE, no
// append, no restart), and what changed since is put right with the least: a new or md5 password re-hashed, LOGIN
// given back, a database handed over, a stopped cluster started, another major kept (reloads and restarts:
// install-postgres-restart-reload.test.ts).
import { psqlMetaQuote } from "../../handlers/install-postgres/pg";
import { storedPasswordState } from "../../handlers/install-postgres/scram";
import { DEBIAN_12 } from "./support/fixtures";
import { grantsRead } from "./support/grants-steps";
import { expectNoPasswordOnCommandLines, PW, sentSecret } from "./support/postgres-password";
import {
  BASE,
  configured,
  inspectSqlStep,
  installed14,
  installedLook,
  loginStep,
  majorInstalled,
  OPEN_EVENT,
  osStep,
  psqlStep,
  RECORDED,
  run,
  SECRET,
  STOCK_HBA,
  WHO,
} from "./support/postgres-steps";

describe("install-postgres: idempotence and updates", () => {
  it("a rerun creates nothing, appends nothing, restarts nothing: four commands and the TCP check", async () => {
    const { result, error, remote, lines } = await run(OPEN_EVENT, [
      ...installedLook(configured(), RECORDED),
      loginStep(),
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(remote.calls.some((c) => /CREATE|ALTER/.test(String(c.opts.stdin ?? "")))).toBe(false);
    expect(remote.calls.some((c) => /systemctl (restart|reload|start)|mktemp .*pg_hba|apt-get/.test(c.command))).toBe(
      false,
    );
    expect(result).toMatchObject({
      changed: false,
      changes: [],
      restarted: false,
      reloaded: false,
      installed_from: "already installed",
    });
    expect(result!.summary).toBe(
      "nothing to do: PostgreSQL 14.11 (14/main, port 5432), role app_user and database myapp are as wanted",
    );
    expect(lines).toContain(
      "[install-postgres] role app_user (password unchanged) and database myapp (owner app_user) are as wanted",
    );
  });

  it("a new password: ALTER ROLE only, no CREATE, no restart", async () => {
    const NEW = "n3w 'pass' \"word\" $PATH \\x";
    const { result, error, remote } = await run({ ...OPEN_EVENT, db_password: NEW }, [
      ...installedLook(configured(), RECORDED),
      psqlStep(/ALTER ROLE :"db_user" PASSWORD :'pw';/, "", {
        check: (_c, o) => {
          expect(String(o.stdin)).not.toMatch(/CREATE (ROLE|DATABASE)/);
          expect(String(o.stdin)).not.toContain(NEW);
        },
      }),
      loginStep("127.0.0.1", { password: NEW }),
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({
      changed: true,
      changes: ["password of app_user updated"],
      restarted: false,
      reloaded: false,
    });
    expect(storedPasswordState(sentSecret(remote.calls), NEW, "app_user")).toBe("same");
    expectNoPasswordOnCommandLines(remote.calls, NEW, ["'pass'", "$PATH \\x"]);
  });

  it("an md5 password (which scram-sha-256 in pg_hba.conf cannot use) is re-hashed", async () => {
    const md5 = `md5${require("node:crypto").createHash("md5").update(`${PW}app_user`).digest("hex")}`;
    const { result, remote } = await run(OPEN_EVENT, [
      ...installedLook(configured({ role: { login: true, superuser: false, secret: md5 } }), RECORDED),
      psqlStep(/ALTER ROLE :"db_user" PASSWORD/),
      loginStep(),
    ]);
    expect(remote.done).toBe(true);
    expect(result?.changes).toEqual(["password of app_user re-hashed as SCRAM-SHA-256 (was md5)"]);
  });

  it("a role that may not log in gets LOGIN; a database of another owner is handed over", async () => {
    const { result, remote } = await run(OPEN_EVENT, [
      ...installedLook(
        configured({ role: { login: false, superuser: false, secret: SECRET }, database: { owner: "olduser" } }),
        RECORDED,
      ),
      psqlStep(
        new RegExp(
          /ALTER ROLE :"db_user" LOGIN;\n\\set mark 'vm-install: LOGIN given by install-postgres[^\n]*\n/.source +
            /[^\n]*COMMENT ON ROLE[^\n]*\n/.source +
            /ALTER DATABASE :"db_name" OWNER TO :"db_user";\n$/.source,
        ),
      ),
      loginStep(),
    ]);
    expect(remote.done).toBe(true);
    expect(result?.changes).toEqual([
      "role app_user may log in now (LOGIN)",
      "database myapp owner changed from olduser to app_user",
    ]);
  });

  it("an hba line the admin wrote with the same fields is not appended again", async () => {
    const adminLine = "hostssl myapp app_user 10.0.0.0/8 scram-sha-256\n";
    const roleOnly = { version: 1, postgres: { hba: {}, roles: { "14/main": ["app_user"] } } };
    const { result, remote } = await run(OPEN_EVENT, [
      ...installedLook(configured({ hba_text: STOCK_HBA + adminLine }), roleOnly),
      loginStep(),
    ]);
    expect(remote.done).toBe(true);
    expect(result?.changes).toEqual([]);
  });

  it("a cluster that is down is started", async () => {
    const { result, remote } = await run(OPEN_EVENT, [
      osStep(),
      installed14("inactive"),
      { match: "systemctl start postgresql@14-main", sudo: true },
      { match: "systemctl is-active postgresql@14-main", stdout: "active\n" },
      grantsRead(RECORDED),
      inspectSqlStep(configured()),
      loginStep(),
    ]);
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({
      changed: true,
      changes: ["cluster 14/main started (was inactive)"],
      restarted: false,
    });
  });

  it(
    "allow_remote with a localhost-only listen_addresses " + "works but warns that remote clients cannot connect",
    async () => {
      const { result, remote } = await run({ ...OPEN_EVENT, listen_addresses: "localhost" }, [
        ...installedLook(configured({ listen_addresses: "localhost", dropin_text: null }), RECORDED),
        loginStep(),
      ]);
      expect(remote.done).toBe(true);
      expect(result?.changes).toEqual([]);
      expect(result?.warnings).toEqual([
        "allow_remote is true but listen_addresses 'localhost' accepts local connections only: set " +
          `listen_addresses to "*" (or the VM's address) for remote clients`,
      ]);
    },
  );

  it("a non-ASCII password SASLprep leaves as it is: its secret made here, the password nowhere on the VM", async () => {
    const UNI = "пароль «ü» 'q' \\ $x";
    const { result, remote } = await run({ ...OPEN_EVENT, db_password: UNI }, [
      ...installedLook(configured(), RECORDED),
      psqlStep(/ALTER ROLE :"db_user" PASSWORD :'pw'/, "", {
        check: (_c, o) => expect(String(o.stdin)).not.toContain("пароль"),
      }),
      loginStep("127.0.0.1", { password: UNI }),
    ]);
    expect(remote.done).toBe(true);
    expect(result?.changes).toEqual(["password of app_user updated"]);
    expect(storedPasswordState(sentSecret(remote.calls), UNI, "app_user")).toBe("same");
  });

  it("a password whose SASLprep is not certain (U+2168) is hashed by the server, never on a command line", async () => {
    const UNI = "пароль \u2168 'q' \\ $x";
    const { result, remote } = await run({ ...OPEN_EVENT, db_password: UNI }, [
      ...installedLook(configured(), RECORDED),
      psqlStep(/ALTER ROLE :"db_user" PASSWORD :'pw'/, "", {
        check: (_c, o) => {
          const sql = String(o.stdin);
          expect(sql.indexOf("DO $quiet$")).toBe(0);
          expect(sql).toContain(`\\set pw ${psqlMetaQuote(UNI)}\n`);
          expect(sql).not.toContain("SCRAM-SHA-256$");
        },
      }),
      // The server's SASLprep: U+2168 is "IX" after NFKC.
      loginStep("127.0.0.1", { password: "пароль IX 'q' \\ $x" }),
    ]);
    expect(remote.done).toBe(true);
    expect(result?.changes).toEqual(["password of app_user updated"]);
    expectNoPasswordOnCommandLines(remote.calls, UNI, ["пароль"]);
  });

  it("another major already installed and pg_version omitted: it is kept, nothing installed", async () => {
    const { result, remote } = await run(BASE, [
      osStep(DEBIAN_12),
      majorInstalled("16", "16.3-1.pgdg120+1"),
      grantsRead(RECORDED),
      inspectSqlStep(
        configured({
          listen_addresses: "localhost",
          hba_text: STOCK_HBA,
          dropin_text: null,
          hba_file: "/etc/postgresql/16/main/pg_hba.conf",
          config_file: "/etc/postgresql/16/main/postgresql.conf",
        }),
      ),
      loginStep("127.0.0.1", { who: { ...WHO, server_version: "16.3" } }),
    ]);
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({
      pg_major: "16",
      installed_from: "already installed",
      changed: false,
      changes: [],
      cluster: "16/main",
    });
  });
});
