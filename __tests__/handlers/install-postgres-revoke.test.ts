// What install-postgres granted it takes back when the settings stop asking for it, and only that: the grants
// inventory (/var/lib/vm-install/grants.json) lists its pg_hba.conf lines and the roles it created or gave LOGIN.
// A line or role the inventory does not list (the admin's, another run's) is never revoked; the previous
// version's marked host line becomes hostssl; a server with ssl off refuses hostssl before any change.
import { planRoles } from "../../handlers/install-postgres/grants";
import { HBA_MARKER, hbaLine, type ServerState } from "../../handlers/install-postgres/pg";
import { grantsRead, grantsWrite } from "./support/grants-steps";
import {
  configStep,
  configured,
  HBA_FILE,
  installed14,
  installedLook,
  loginStep,
  OPEN_EVENT,
  osStep,
  psqlStep,
  run,
  STOCK_HBA,
  settledStep,
} from "./support/postgres-steps";

describe("install-postgres: what it granted, it takes back (inventory in /var/lib/vm-install/grants.json)", () => {
  const oldLine = `hostssl    myapp    old_user    10.0.0.0/8    scram-sha-256    ${HBA_MARKER}\n`;
  const newLine = hbaLine("hostssl", "myapp", "app_user", "10.0.0.0/8");
  /** The server as OPEN_EVENT's run left it, its pg_hba.conf the stock one unless a case says otherwise. */
  const ready = (over: Partial<ServerState> = {}) => configured({ hba_text: STOCK_HBA, ...over });

  it(
    "dbUser changed: the old role's line goes, the old role (created by vm-install) loses LOGIN, the new one is " +
      "recorded",
    async () => {
      const inventory = {
        version: 1,
        docker: { group_members: ["ubuntu"] },
        postgres: {
          hba: { [HBA_FILE]: ["hostssl myapp old_user 10.0.0.0/8 scram-sha-256"] },
          roles: { "14/main": ["old_user"] },
        },
      };
      const { result, error, remote } = await run(OPEN_EVENT, [
        osStep(),
        installed14(),
        grantsRead(inventory),
        psqlStep(/\\set recorded '\["old_user"\]'/, {
          ...ready({ role: null, database: { owner: "old_user" }, hba_text: STOCK_HBA + oldLine }),
          recorded_roles: { old_user: { login: true, superuser: false, bootstrap: false, marked: true } },
        }),
        psqlStep(/CREATE ROLE %I LOGIN[\s\S]*ALTER DATABASE :"db_name" OWNER TO :"db_user"/),
        psqlStep(
          /\\set revoke '\["old_user"\]'\nSELECT format\('ALTER ROLE %I NOLOGIN', r\)[\s\S]*pg_terminate_backend/,
        ),
        configStep([[HBA_FILE, (stdin) => expect(stdin).toBe(`${STOCK_HBA + newLine}\n`)]]),
        { match: "systemctl reload postgresql@14-main", sudo: true },
        settledStep("*", [], loginStep()),
        grantsWrite((w) =>
          expect(w).toMatchObject({
            docker: { group_members: ["ubuntu"] },
            postgres: {
              hba: { [HBA_FILE]: ["hostssl myapp app_user 10.0.0.0/8 scram-sha-256"] },
              roles: { "14/main": ["app_user"] },
            },
          }),
        ),
      ]);
      expect(error).toBeUndefined();
      expect(remote.done).toBe(true);
      expect(result!.revoked).toEqual([
        "role old_user: LOGIN",
        "pg_hba.conf: hostssl myapp old_user 10.0.0.0/8 scram-sha-256",
      ]);
      expect(result!.changes).toEqual([
        "role app_user created (LOGIN, password set)",
        "database myapp owner changed from old_user to app_user",
        "revoked: role old_user may no longer log in (NOLOGIN, its sessions ended; vm-install had created it or " +
          "given it LOGIN; the role, what it owns and its data are kept)",
        "pg_hba.conf: hostssl myapp app_user 10.0.0.0/8 scram-sha-256 added",
        "revoked: pg_hba.conf: hostssl myapp old_user 10.0.0.0/8 scram-sha-256 removed (written by vm-install, " +
          "no longer in the settings)",
      ]);
    },
  );

  it(
    "what the inventory does not list is never revoked: an existing role, the admin's line, a marked line of " +
      "another run",
    async () => {
      const admin = "hostssl myapp old_user 10.0.0.0/8 scram-sha-256\n";
      const inventory = {
        version: 1,
        postgres: { hba: { [HBA_FILE]: ["hostssl myapp app_user 10.0.0.0/8 scram-sha-256"] }, roles: {} },
      };
      const { result, error, remote } = await run(OPEN_EVENT, [
        ...installedLook(ready({ hba_text: `${STOCK_HBA + admin + oldLine + newLine}\n` }), inventory),
        loginStep(),
      ]);
      expect(error).toBeUndefined();
      expect(remote.done).toBe(true);
      expect(
        remote.calls.some(
          (c) => /NOLOGIN/.test(String(c.opts.stdin ?? "")) || /mktemp \S*(pg_hba|grants)/.test(c.command),
        ),
      ).toBe(false);
      expect(result).toMatchObject({ changed: false, changes: [], revoked: [] });
    },
  );

  it(
    "the previous version's host line (no inventory yet) " + "becomes hostssl; the role it had is not adopted",
    async () => {
      const { result, error, remote } = await run(OPEN_EVENT, [
        ...installedLook(
          ready({
            hba_text: `${STOCK_HBA}host    myapp    app_user    10.0.0.0/8    scram-sha-256    ${HBA_MARKER}\n`,
          }),
        ),
        configStep([[HBA_FILE, (stdin) => expect(stdin).toBe(`${STOCK_HBA + newLine}\n`)]]),
        { match: "systemctl reload postgresql@14-main", sudo: true },
        settledStep("*", [], loginStep()),
        grantsWrite((w) =>
          expect(w.postgres).toEqual({
            hba: { [HBA_FILE]: ["hostssl myapp app_user 10.0.0.0/8 scram-sha-256"] },
            roles: {},
          }),
        ),
      ]);
      expect(error).toBeUndefined();
      expect(remote.done).toBe(true);
      expect(result!.revoked).toEqual(["pg_hba.conf: host myapp app_user 10.0.0.0/8 scram-sha-256"]);
    },
  );

  it("remote_ssl false writes host; a server with ssl off and remote_ssl true fails before any change", async () => {
    const plain = await run({ ...OPEN_EVENT, remote_ssl: false }, [
      ...installedLook(ready()),
      configStep([
        [
          HBA_FILE,
          (stdin) => expect(stdin).toBe(`${STOCK_HBA}${hbaLine("host", "myapp", "app_user", "10.0.0.0/8")}\n`),
        ],
      ]),
      { match: "systemctl reload postgresql@14-main", sudo: true },
      settledStep("*", [], loginStep()),
      grantsWrite(() => undefined),
    ]);
    expect(plain.error).toBeUndefined();
    expect(plain.remote.done).toBe(true);

    const off = await run(OPEN_EVENT, [...installedLook(ready({ role: null, ssl: "off" }))]);
    expect(off.remote.done).toBe(true);
    expect(off.error?.message).toMatch(
      new RegExp(
        /ssl is off on the server, so hostssl entries .* would admit no remote client: /.source +
          /turn SSL on .* or set remoteSsl false.*Nothing was changed/.source,
      ),
    );
  });

  it(
    "role decisions: only recorded roles that may still log in lose LOGIN; the record follows what this run " +
      "granted",
    () => {
      const may = (login: boolean) => ({ login, superuser: false, bootstrap: false, marked: true });
      expect(planRoles(["a", "b", "c"], "b", false, { a: may(true), b: may(true), c: may(false) })).toEqual({
        revoke: ["a"],
        record: ["b"],
        skipped: [],
      });
      expect(planRoles([], "b", false, {})).toEqual({ revoke: [], record: [], skipped: [] });
      expect(planRoles([], "b", true, {})).toEqual({ revoke: [], record: ["b"], skipped: [] });
    },
  );
});
