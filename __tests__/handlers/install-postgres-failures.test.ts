// A failing install-postgres says what failed, where, and what to do, and leaves the VM as it was: a pg_hba.conf
// the server rejects is put back unreloaded, a listen_addresses overridden elsewhere is named with its fix, the
// role and database's SQL is named as its own step, and no error carries the password, even one the VM echoes.
import { grantsRead } from "./support/grants-steps";
import {
  BASE,
  configStep,
  configured,
  DROPIN,
  installed14,
  installedLook,
  loginStep,
  OPEN_EVENT,
  osStep,
  psqlStep,
  RECORDED,
  run,
  SECRET,
  STOCK_HBA,
  serverState,
  writeStep,
} from "./support/postgres-steps";

describe("install-postgres: failures say what, where and what to do", () => {
  const event = { ...BASE, allow_remote: true, allowed_cidrs: ["10.0.0.0/8"] };
  /** A server with the role (PW its password) and the database, nothing else of the event's. */
  const roleAndDatabase = () =>
    serverState({ role: { login: true, superuser: false, secret: SECRET }, database: { owner: "app_user" } });

  it("a pg_hba.conf the server would reject is put back and nothing is reloaded", async () => {
    const { error, remote } = await run(event, [
      ...installedLook(roleAndDatabase()),
      configStep([["/etc/postgresql/14/main/pg_hba.conf"]], {
        hba_errors: [{ line: 98, error: 'invalid IP mask "255.0.0.x"' }],
      }),
      writeStep("/etc/postgresql/14/main/pg_hba.conf", (stdin) => expect(stdin).toBe(STOCK_HBA)),
    ]);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      new RegExp(
        /^install-postgres failed while installing: the server would not accept its configuration files: /.source +
          /\/etc\/postgresql\/14\/main\/pg_hba.conf line 98: invalid IP mask/.source,
      ),
    );
    expect(error?.message).toMatch(
      /nothing was reloaded, and \/etc\/postgresql\/14\/main\/pg_hba.conf was put back as it was/,
    );
  });

  it("listen_addresses overridden by postgresql.auto.conf: named, with the fix", async () => {
    const { error, remote } = await run({ ...BASE, listen_addresses: "*" }, [
      ...installedLook(roleAndDatabase()),
      configStep([[DROPIN]], {
        listen: [
          { file: DROPIN, line: 2, setting: "*", error: null },
          { file: "/var/lib/postgresql/14/main/postgresql.auto.conf", line: 3, setting: "localhost", error: null },
        ],
      }),
    ]);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      new RegExp(
        /listen_addresses is also set in \/var\/lib\/postgresql\/14\/main\/postgresql.auto.conf line 3 /.source +
          /\('localhost'\), which is read after .*90-vm-install.conf and wins: /.source +
          /remove it there \(ALTER SYSTEM RESET listen_addresses\)/.source,
      ),
    );
  });

  it("a failed TCP login names the host, the reason and a hint, never the password", async () => {
    const { error, remote } = await run(BASE, [
      ...installedLook(roleAndDatabase()),
      loginStep("127.0.0.1", { password: "the password before someone changed it" }),
    ]);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      new RegExp(
        /app_user could not log in to myapp over TCP at 127.0.0.1:5432: .*password authentication failed /.source +
          /.*\(the password stored for the role does not match/.source,
      ),
    );
    expect(error?.message).not.toContain("two  spaces");
  });

  it("psql errors are scrubbed of the password even when the VM echoes it", async () => {
    const { error } = await run({ ...BASE, db_password: "UniqueSecret-9f2c" }, [
      osStep(),
      installed14(),
      grantsRead(),
      // The server look's psql fails (exit 3); it is run again alone, and that one's error is the job's.
      psqlStep(/json_build_object/, "", { code: 3 }),
      psqlStep(/json_build_object/, "", { code: 3, stderr: "psql:<stdin>:9: ERROR:  oops near 'UniqueSecret-9f2c'\n" }),
    ]);
    expect(error?.message).toMatch(
      /psql \(reading the role, the database and the settings\) failed on ubuntu@192.0.2.10:22 \(exit 3\)/,
    );
    expect(error?.message).not.toContain("UniqueSecret-9f2c");
    expect(error?.message).toContain("[redacted:db_password]");
  });

  it(
    "the database's SQL fails in the exec it shares with the configuration: " +
      "named as its own step, nothing written",
    async () => {
      const { error, remote } = await run(OPEN_EVENT, [
        ...installedLook(configured({ database: null, hba_text: STOCK_HBA }), RECORDED),
        // One exec: the SQL first (it fails), then pg_hba.conf and the check, which never run.
        psqlStep(/CREATE DATABASE/, "", { code: 3, stderr: "ERROR:  permission denied to create database\n" }),
      ]);
      expect(remote.done).toBe(true);
      expect(remote.sent.filter((c) => c.startsWith("{ head -c "))).toHaveLength(1);
      expect(error?.message).toMatch(
        /psql \(role and database\) failed \(exit 3\):\nERROR: {2}permission denied to create database/,
      );
    },
  );
});
