// install-postgres with check: true only looks: nothing it sends could change the VM (no apt-get, no service,
// file or changing SQL), and would_change is, in a real run's words, what that run would do; the TCP login runs
// only when nothing would change. From a VM as wanted, hand changes, a missing server package, another major
// from PGDG, a missing or stopped cluster, and ssl off.
import { scramSecret } from "../../handlers/install-postgres/scram";
import { DEBIAN_12 } from "./support/fixtures";
import { grantsRead } from "./support/grants-steps";
import { sourcesFacts } from "./support/look-answers";
import { fetched, pgpKey } from "./support/pgp-fixtures";
import { expectNoPasswordOnCommandLines } from "./support/postgres-password";
import {
  BASE,
  configured,
  DROPIN,
  inspectStep,
  installed14,
  installedLook,
  loginStep,
  OPEN_EVENT,
  osStep,
  PG14_PKG,
  psqlStep,
  RECORDED,
  run,
  STOCK_HBA,
} from "./support/postgres-steps";
import type { Call } from "./support/scripted-remote";

describe("install-postgres: check mode (check: true) looks, reports would_change, changes nothing", () => {
  const event = { ...OPEN_EVENT, check: true };

  /**
   * Nothing the check sent could change the VM: no command marked as a change, no apt-get, service,
   * cluster or file command as root (the login check's pgpass in /dev/shm, unlinked at once, aside; the key
   * fetch's temporary file is the login user's own), no changing SQL.
   */
  function expectLookedOnly(calls: Call[]) {
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.filter((c) => c.opts.mutates).map((c) => c.command)).toEqual([]);
    expect(
      calls
        .filter(
          (c) =>
            /apt-get|systemctl (start|restart|reload|stop)|pg_createcluster/.test(c.command) ||
            (c.opts.sudo && /mktemp (?!-d[ )])|rm -f /.test(c.command)),
        )
        .map((c) => c.command),
    ).toEqual([]);
    expect(
      calls.filter((c) => /CREATE|ALTER|NOLOGIN|pg_reload_conf/.test(String(c.opts.stdin ?? ""))).map((c) => c.command),
    ).toEqual([]);
  }
  const loggedIn = (remote: { tunnels: unknown[] }) => remote.tunnels.length > 0;

  it("all as wanted: would_change is empty, and the TCP login check ran and is reported", async () => {
    const { result, error, remote } = await run(event, [...installedLook(configured(), RECORDED), loginStep()]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expectLookedOnly(remote.calls);
    expect(loggedIn(remote)).toBe(true);
    expect(result).toMatchObject({
      status: "ok",
      changed: false,
      changes: [],
      would_change: [],
      pg_version: "14.11",
      installed_from: "already installed",
      restarted: false,
      reloaded: false,
      revoked: [],
      verified: { host: "127.0.0.1", port: 5432, user: "app_user", database: "myapp" },
    });
    expect(result!.summary).toBe(
      "check: nothing would change; nothing to do: PostgreSQL 14.11 (14/main, port 5432), role app_user and " +
        "database myapp are as wanted",
    );
  });

  it("a TCP login that fails when nothing would change fails the check as it would fail a run", async () => {
    const { error, remote } = await run(event, [
      ...installedLook(configured(), RECORDED),
      loginStep("127.0.0.1", { password: "the password before someone changed it" }),
    ]);
    expect(remote.done).toBe(true);
    expectLookedOnly(remote.calls);
    expect(error?.message).toMatch(
      new RegExp(
        /^install-postgres failed while checking \(check mode: nothing is changed\): /.source +
          /app_user could not log in to myapp over TCP at 127\.0\.0\.1:5432: .*password authentication failed/.source,
      ),
    );
  });

  it(
    "database dropped and password changed by hand: both foreseen in a real run's words; no changing psql, no " +
      "login check",
    async () => {
      const { result, error, remote } = await run(event, [
        ...installedLook(
          configured({
            database: null,
            role: { login: true, superuser: false, secret: scramSecret("set by hand, not PW") },
          }),
          RECORDED,
        ),
      ]);
      expect(error).toBeUndefined();
      expect(remote.done).toBe(true);
      expectLookedOnly(remote.calls);
      expect(loggedIn(remote)).toBe(false);
      expect(result).toMatchObject({
        changed: false,
        changes: [],
        would_change: ["password of app_user updated", "database myapp created (owner app_user)"],
        verified: null,
      });
      expect(result!.summary).toBe(
        "check: 2 changes would be made: password of app_user updated; database myapp created (owner app_user)",
      );
      expectNoPasswordOnCommandLines(remote.calls);
    },
  );

  it(
    "a pg_hba.conf line missing and a recorded role to revoke: those lines and the revocation; no file written, " +
      "no reload, no inventory write",
    async () => {
      const inventory = {
        version: 1,
        postgres: { hba: RECORDED.postgres.hba, roles: { "14/main": ["old_user", "app_user"] } },
      };
      const { result, error, remote } = await run(event, [
        osStep(),
        installed14(),
        grantsRead(inventory),
        psqlStep(/\\set recorded '\["old_user","app_user"\]'/, {
          ...configured({ hba_text: STOCK_HBA }),
          recorded_roles: {
            old_user: { login: true, superuser: false, bootstrap: false, marked: true },
            app_user: { login: true, superuser: false, bootstrap: false, marked: true },
          },
        }),
      ]);
      expect(error).toBeUndefined();
      expect(remote.done).toBe(true);
      expectLookedOnly(remote.calls);
      expect(loggedIn(remote)).toBe(false);
      expect(result!.would_change).toEqual([
        "revoked: role old_user may no longer log in (NOLOGIN, its sessions ended; vm-install had created it or " +
          "given it LOGIN; the role, what it owns and its data are kept)",
        "pg_hba.conf: hostssl myapp app_user 10.0.0.0/8 scram-sha-256 added",
      ]);
      expect(result).toMatchObject({ changes: [], revoked: ["role old_user: LOGIN"], reloaded: false });
    },
  );

  it("our pg_hba.conf line no longer wanted: the revocation a real run would report", async () => {
    const { result, remote } = await run({ ...event, allowed_cidrs: ["10.1.2.3/32"] }, [
      ...installedLook(configured(), RECORDED),
    ]);
    expect(remote.done).toBe(true);
    expectLookedOnly(remote.calls);
    expect(result!.would_change).toEqual([
      "pg_hba.conf: hostssl myapp app_user 10.1.2.3/32 scram-sha-256 added",
      "revoked: pg_hba.conf: hostssl myapp app_user 10.0.0.0/8 scram-sha-256 removed (written by vm-install, " +
        "no longer in the settings)",
    ]);
    expect(result!.revoked).toEqual(["pg_hba.conf: hostssl myapp app_user 10.0.0.0/8 scram-sha-256"]);
  });

  it("listen_addresses differs: the listen line, no drop-in written, no restart", async () => {
    const { result, error, remote } = await run(event, [
      ...installedLook(configured({ listen_addresses: "localhost", dropin_text: null }), RECORDED),
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expectLookedOnly(remote.calls);
    expect(result).toMatchObject({
      would_change: [`listen_addresses 'localhost' -> '*' (${DROPIN})`],
      restarted: false,
      listen_addresses: "*",
    });
  });

  it(
    "server package missing (Debian 12): installed postgresql-15 and what a new cluster always gets; no apt-get, " +
      "lists only read",
    async () => {
      const { result, error, remote } = await run(event, [
        osStep(DEBIAN_12),
        inspectStep(),
        { match: /^dpkg-query -W -f=\S+ postgresql$/, sudo: false, code: 1 },
        {
          match: "apt-cache policy postgresql",
          sudo: false,
          stdout: "postgresql:\n  Installed: (none)\n  Candidate: 15+248\n  Version table:\n     15+248 500\n",
        },
      ]);
      expect(error).toBeUndefined();
      expect(remote.done).toBe(true);
      expectLookedOnly(remote.calls);
      expect(remote.implicit).toHaveLength(1); // dpkg's health looked at: a repair would be a foreseen change
      expect(result!.would_change).toEqual([
        "installed postgresql-15",
        "role app_user created (LOGIN, password set)",
        "database myapp created (owner app_user)",
        "listen_addresses 'localhost' -> '*' (/etc/postgresql/15/main/conf.d/90-vm-install.conf)",
        "pg_hba.conf: hostssl myapp app_user 10.0.0.0/8 scram-sha-256 added",
      ]);
      expect(result).toMatchObject({
        pg_version: "",
        pg_major: "15",
        installed_from: "distribution",
        cluster: "15/main",
        port: 5432,
        verified: null,
        warnings: [],
      });
    },
  );

  it("another major (PGDG): the repository's lines as a run's (key fetched and compared, nothing written), the package", async () => {
    const line =
      "deb [arch=amd64 signed-by=/etc/apt/keyrings/pgdg.gpg] https://apt.postgresql.org/pub/repos/apt bookworm-pgdg main";
    const { result, error, remote } = await run({ ...BASE, pg_version: "16", check: true }, [
      osStep(DEBIAN_12),
      inspectStep(),
      { match: "command -v curl || true", sudo: false, stdout: "/usr/bin/curl\n" },
      {
        match: '-o "$t" https://www.postgresql.org/media/keys/ACCC4CF8.asc',
        sudo: false,
        stdout: fetched(pgpKey("pgdg.asc")),
      },
      {
        match: 'if [ -d /etc/apt/keyrings ]; then :; else echo "changed:created /etc/apt/keyrings"; fi',
        sudo: true,
        stdout:
          "changed:wrote /etc/apt/keyrings/pgdg.gpg (new key)\ncreated:/etc/apt/keyrings/pgdg.gpg\n" +
          "changed:wrote /etc/apt/sources.list.d/pgdg.list (new source)\ncreated:/etc/apt/sources.list.d/pgdg.list\n",
        check: (c, o) => {
          expect([o.mutates, /mv -fT|mktemp/.test(c)]).toEqual([false, false]);
          expect(String(o.stdin).endsWith(`${line}\n`)).toBe(true);
        },
      },
      { match: "for f in /etc/apt/sources.list ", sudo: true, facts: sourcesFacts([]) },
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expectLookedOnly(remote.calls);
    // What a run on this VM says (install-postgres-pgdg.test.ts firstFromPgdg), line for line.
    expect(result!.would_change).toEqual([
      "PGDG repository: wrote /etc/apt/keyrings/pgdg.gpg (new key)",
      "PGDG repository: wrote /etc/apt/sources.list.d/pgdg.list (new source)",
      "installed postgresql-16",
      "role app_user created (LOGIN, password set)",
      "database myapp created (owner app_user)",
    ]);
    expect(result).toMatchObject({ installed_from: "pgdg", cluster: "16/main", listen_addresses: "localhost" });
  });

  it(
    "no cluster: created, then a new cluster's changes; a stopped cluster: started, and a warning that the rest " +
      "was not inspected",
    async () => {
      const none = await run(event, [osStep(), inspectStep(PG14_PKG, "")]);
      expect(none.error).toBeUndefined();
      expectLookedOnly(none.remote.calls);
      expect(none.result!.would_change).toEqual([
        "cluster 14/main created",
        "role app_user created (LOGIN, password set)",
        "database myapp created (owner app_user)",
        `listen_addresses 'localhost' -> '*' (${DROPIN})`,
        "pg_hba.conf: hostssl myapp app_user 10.0.0.0/8 scram-sha-256 added",
      ]);

      const stopped = await run(event, [osStep(), installed14("inactive")]);
      expect(stopped.error).toBeUndefined();
      expect(stopped.remote.done).toBe(true);
      expectLookedOnly(stopped.remote.calls);
      expect(stopped.result).toMatchObject({
        would_change: ["cluster 14/main started (was inactive)"],
        pg_version: "",
        verified: null,
      });
      expect(stopped.result!.warnings).toEqual([
        "postgresql@14-main is inactive, so the role, the database and the configuration files could not be " +
          "inspected (psql needs a running server): " +
          "what a real run would change there is not listed. Run the job (it starts the cluster first), or start " +
          "the cluster and check again",
      ]);
    },
  );

  it("a server with ssl off and hostssl wanted fails the check as it fails a run, before anything else", async () => {
    const { error, remote } = await run(event, [...installedLook(configured({ ssl: "off" }), RECORDED)]);
    expect(remote.done).toBe(true);
    expectLookedOnly(remote.calls);
    expect(error?.message).toMatch(
      /^install-postgres failed while checking \(check mode: nothing is changed\): ssl is off on the server/,
    );
  });
});
