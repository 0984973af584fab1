// A first run on a VM without PostgreSQL, from the distribution's packages: Ubuntu 22.04's 14 with the exact
// commands and the password's whole path (a SCRAM verifier on stdin, the login proven over TCP, never in a
// report), noble's own 16 under /etc/postgresql/16/main, apt's lists only looked at when fresh enough, and no
// guess of a version on a release the installer does not know.
import { dropInContent, HBA_MARKER } from "../../handlers/install-postgres/pg";
import { storedPasswordState } from "../../handlers/install-postgres/scram";
import { UBUNTU_2204, UBUNTU_2404 } from "./support/fixtures";
import { grantsRead, grantsWrite } from "./support/grants-steps";
import { expectNoPasswordOnCommandLines, PW, sentSecret } from "./support/postgres-password";
import {
  aptInstallSteps,
  BASE,
  configStep,
  DROPIN,
  HBA_FILE,
  inspectSqlStep,
  inspectStep,
  installed14,
  loginStep,
  majorState,
  osStep,
  psqlStep,
  run,
  STOCK_HBA,
  serverState,
  settledStep,
  WHO,
} from "./support/postgres-steps";

describe("install-postgres: Ubuntu 22.04, PostgreSQL 14 from the distribution", () => {
  it("installs, creates role and database, configures, restarts, verifies over TCP: exact commands", async () => {
    const { result, error, remote, lines } = await run(
      { ...BASE, listen_addresses: "*", allow_remote: true, allowed_cidrs: ["10.0.0.0/8", "192.168.1.0/24"] },
      [
        osStep(),
        inspectStep(),
        // ensurePackages(["postgresql"]): look, update, candidates, install, verify.
        ...aptInstallSteps("postgresql", "14+238", (_c, o) => expect(o.env?.DEBIAN_FRONTEND).toBe("noninteractive")),
        installed14(),
        grantsRead(),
        inspectSqlStep(serverState()),
        psqlStep(/CREATE ROLE %I LOGIN/, "", {
          check: (_c, o) => {
            const sql = String(o.stdin);
            expect(sql).toMatch(/^DO \$quiet\$/); // logging off before anything else
            expect(sql).toContain("('log_statement', 'none'), ('log_min_error_statement', 'panic')");
            expect(sql).toContain("\\set db_user 'app_user'\n");
            expect(sql).toContain(
              "SELECT format('CREATE ROLE %I LOGIN', :'db_user') WHERE NOT EXISTS (SELECT FROM pg_roles WHERE " +
                "rolname = :'db_user') \\gexec",
            );
            expect(sql).toMatch(
              new RegExp(
                /\\set pw 'SCRAM-SHA-256\$4096:[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+'\n/.source +
                  /ALTER ROLE :"db_user" PASSWORD :'pw';/.source,
              ),
            );
            expect(sql).toContain(
              "SELECT format('CREATE DATABASE %I OWNER %I', :'db_name', :'db_user') WHERE NOT EXISTS (SELECT " +
                "FROM pg_database WHERE datname = :'db_name') \\gexec",
            );
            expect(sql.indexOf("CREATE ROLE")).toBeLessThan(sql.indexOf("CREATE DATABASE"));
          },
        }),
        configStep([
          [DROPIN, (stdin) => expect(stdin).toBe(dropInContent("*"))],
          [
            "/etc/postgresql/14/main/pg_hba.conf",
            (stdin) => {
              expect(stdin.startsWith(STOCK_HBA)).toBe(true);
              expect(stdin.slice(STOCK_HBA.length)).toBe(
                `hostssl    myapp    app_user    10.0.0.0/8    scram-sha-256    ${HBA_MARKER}\nhostssl    myapp    ` +
                  `app_user    192.168.1.0/24    scram-sha-256    ${HBA_MARKER}\n`,
              );
            },
          ],
        ]),
        { match: "systemctl restart postgresql@14-main", sudo: true },
        settledStep("*", [], loginStep()),
        grantsWrite((w) =>
          expect(w).toEqual({
            version: 1,
            about: expect.any(String),
            postgres: {
              hba: {
                [HBA_FILE]: [
                  "hostssl myapp app_user 10.0.0.0/8 scram-sha-256",
                  "hostssl myapp app_user 192.168.1.0/24 scram-sha-256",
                ],
              },
              roles: { "14/main": ["app_user"] },
            },
          }),
        ),
      ],
    );
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(remote.closed).toBe(true);
    // dpkg's word on postgresql rides in the kit's first look; the verify's dpkg-query, the look at packages and
    // clusters and the server look (grants, role, database, settings) in the look after the install, with its
    // record, in the install's own exec; the role and database's SQL, the drop-in, pg_hba.conf and the server's
    // check of them are one exec as postgres; the look after the restart, in its exec, reads who listens, the
    // login's proof; apt's locks, dpkg's health and the candidates are read after apt-get update, in its exec
    // (issue 30): 6 execs, 19 before (the double records nothing, so no inventory is written).
    expect(remote.sent).toHaveLength(6);
    const joined = remote.sent.find((c) => c.startsWith("{ head -c "));
    expect(joined).toMatch(/psql [^\n]* >\/dev\/null \|\| exit \$\(\(100 \+ \$\?\)\); \} && \{ m=0644; /);
    expect(remote.sent.filter((c) => c.includes("printf '%s ' settled; "))).toHaveLength(1);
    expect(remote.implicit).toEqual([]);
    expect(remote.sent.filter((c) => c.startsWith("dpkg-query"))).toEqual([]);
    expect(lines).toContain(
      "[install-postgres] the grants inventory, the role, the database and the settings: " +
        "read with the install's record",
    );
    expect(remote.transactionLooks).toBe(1);
    expect(result).toMatchObject({
      status: "ok",
      pg_version: "14.11",
      pg_major: "14",
      installed_from: "distribution",
      cluster: "14/main",
      port: 5432,
      db_name: "myapp",
      db_user: "app_user",
      listen_addresses: "*",
      allow_remote: true,
      allowed_cidrs: ["10.0.0.0/8", "192.168.1.0/24"],
      restarted: true,
      reloaded: false,
      verified: { host: "127.0.0.1", port: 5432, user: "app_user", database: "myapp" },
      warnings: [],
      os: { id: "ubuntu", codename: "jammy" },
    });
    expect(result!.changes).toEqual([
      "installed postgresql-14",
      "role app_user created (LOGIN, password set)",
      "database myapp created (owner app_user)",
      `listen_addresses 'localhost' -> '*' (${DROPIN})`,
      "pg_hba.conf: hostssl myapp app_user 10.0.0.0/8 scram-sha-256 added",
      "pg_hba.conf: hostssl myapp app_user 192.168.1.0/24 scram-sha-256 added",
    ]);
    expect(Object.keys(result!.timings_ms)).toEqual(
      expect.arrayContaining(["connect", "os", "apt_install", "role_db", "restart", "verify_login", "total"]),
    );
    // The server was read with the install's record (inside apt_install), its listener after the restart.
    expect(result!.timings_ms).not.toHaveProperty("inspect_sql");
    expect(result!.timings_ms).not.toHaveProperty("verify_listener");

    // The secret sent is SCRAM-SHA-256 of exactly PW; PW itself never reaches the VM: the login check
    // proves it knows it to the server, with SCRAM, through a TCP channel.
    const calls = remote.calls;
    expect(storedPasswordState(sentSecret(calls), PW, "app_user")).toBe("same");
    expectNoPasswordOnCommandLines(calls);
    for (const c of calls) expect(String(c.opts.stdin ?? "")).not.toContain(PW);
    expect(remote.tunnels.map((t) => [t.host, t.port, t.server?.proofAccepted])).toEqual([["127.0.0.1", 5432, true]]);
    expect(remote.tunnels[0].server?.received().toString("latin1")).not.toContain(PW);
    // And nothing the job reports carries it.
    expect(JSON.stringify(result)).not.toContain("two  spaces");
    expect(JSON.stringify(result)).not.toContain("SCRAM-SHA-256$");
    for (const l of lines) expect(l).not.toContain("two  spaces");
  });

  it("pg_version omitted on an unknown release: a clear error, nothing installed", async () => {
    const { error, remote } = await run(BASE, [osStep(UBUNTU_2204.replace(/jammy/g, "zesty")), inspectStep()]);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      new RegExp(
        /pg_version is not set and this installer does not know which PostgreSQL Ubuntu 22.04.4 LTS ships /.source +
          /.*; set pg_version/.source,
      ),
    );
  });
});

describe("install-postgres: Ubuntu 24.04 (noble), PostgreSQL 16 from the distribution", () => {
  // noble's postgresql metapackage and server (noble-updates).
  const PG16_PKG = "postgresql-16\tinstall ok installed\t16.14-0ubuntu0.24.04.1\n";
  const PG16_CLUSTER =
    "16  main    5432 online postgres /var/lib/postgresql/16/main /var/log/postgresql/postgresql-16-main.log\n";
  const SERVER16 = "16.14 (Ubuntu 16.14-0ubuntu0.24.04.1)";
  const DROPIN16 = "/etc/postgresql/16/main/conf.d/90-vm-install.conf";
  const HBA16 = "/etc/postgresql/16/main/pg_hba.conf";
  const state16 = majorState("16", SERVER16);

  it(
    "pg_version omitted: noble's own 16 (postgresql-16, cluster 16/main, /etc/postgresql/16/main): installs, " +
      "configures, restarts, verifies",
    async () => {
      const { result, error, remote } = await run(
        { ...BASE, listen_addresses: "*", allow_remote: true, allowed_cidrs: ["10.0.0.0/8"] },
        [
          osStep(UBUNTU_2404),
          inspectStep(),
          ...aptInstallSteps("postgresql", "16+257build1.1", (_c, o) =>
            expect(o.env?.DEBIAN_FRONTEND).toBe("noninteractive"),
          ),
          inspectStep(PG16_PKG, PG16_CLUSTER, "postgresql@16-main active\n"),
          grantsRead(),
          inspectSqlStep(state16),
          psqlStep(/CREATE ROLE %I LOGIN/),
          configStep(
            [
              [DROPIN16, (stdin) => expect(stdin).toBe(dropInContent("*"))],
              [
                HBA16,
                (stdin) => {
                  expect(stdin.startsWith(STOCK_HBA)).toBe(true);
                  expect(stdin.slice(STOCK_HBA.length)).toBe(
                    `hostssl    myapp    app_user    10.0.0.0/8    scram-sha-256    ${HBA_MARKER}\n`,
                  );
                },
              ],
            ],
            { listen: [{ file: DROPIN16, line: 2, setting: "*", error: null }] },
          ),
          { match: "systemctl restart postgresql@16-main", sudo: true },
          settledStep("*", [], loginStep("127.0.0.1", { who: { ...WHO, server_version: SERVER16 } })),
          grantsWrite((w) =>
            expect(w.postgres).toEqual({
              hba: { [HBA16]: ["hostssl myapp app_user 10.0.0.0/8 scram-sha-256"] },
              roles: { "16/main": ["app_user"] },
            }),
          ),
        ],
      );
      expect(error).toBeUndefined();
      expect(remote.done).toBe(true);
      expect(result).toMatchObject({
        status: "ok",
        pg_version: "16.14",
        pg_major: "16",
        installed_from: "distribution",
        cluster: "16/main",
        restarted: true,
        listen_addresses: "*",
        warnings: [],
        os: { id: "ubuntu", codename: "noble" },
      });
      expect(result!.changes).toEqual([
        "installed postgresql-16",
        "role app_user created (LOGIN, password set)",
        "database myapp created (owner app_user)",
        `listen_addresses 'localhost' -> '*' (${DROPIN16})`,
        "pg_hba.conf: hostssl myapp app_user 10.0.0.0/8 scram-sha-256 added",
      ]);
      expectNoPasswordOnCommandLines(remote.calls);
    },
  );
});

describe("install-postgres: apt lists freshness", () => {
  it(
    "cache_valid_sec with lists younger than that: the " + "lists are looked at, not refreshed, before installing",
    async () => {
      // The script stops after the install: what comes next is covered above; here only the apt steps matter.
      const { remote } = await run({ ...BASE, cache_valid_sec: 900 }, [
        osStep(),
        inspectStep(),
        { match: /^dpkg-query -W -f=\S+ postgresql$/, sudo: false, code: 1 },
        { match: /apt\/lists/, sudo: false, stdout: "1700000300 1700000000\n" },
        {
          match: "apt-cache policy postgresql",
          sudo: false,
          stdout: "postgresql:\n  Installed: (none)\n  Candidate: 14+238\n  Version table:\n     14+238 500\n",
        },
        { match: /^apt-get install -y -q .*postgresql$/, sudo: true },
      ]);
      const commands = remote.calls.map((c) => c.command);
      expect(commands.filter((c) => /apt\/lists/.test(c))).toHaveLength(1);
      expect(commands.filter((c) => /^apt-get update/.test(c))).toEqual([]);
      expect(commands.filter((c) => /^apt-get install/.test(c))).toHaveLength(1);
    },
  );
});
