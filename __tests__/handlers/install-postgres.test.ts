import type { InstallerDeps } from "../../handlers/common/handler-kit";
import { dearmor } from "../../handlers/common/openpgp";
import { planRoles } from "../../handlers/install-postgres/grants";
import { handler } from "../../handlers/install-postgres/handler";
import {
  dropInContent,
  HBA_MARKER,
  hbaEntry,
  hbaFields,
  hbaLine,
  listenOverride,
  normalizeListen,
  parseClusters,
  parseServerPackages,
  planHba,
  psqlMetaQuote,
  type ServerState,
  verifyHost,
} from "../../handlers/install-postgres/pg";
import { PGDG_KEY_FINGERPRINT, pgdgKeyUrl } from "../../handlers/install-postgres/pgdg";
import {
  parseScramSecret,
  prepareApproximately,
  scramSecret,
  storedPasswordState,
} from "../../handlers/install-postgres/scram";
import { INSTALLATION_LOOK } from "../../handlers/install-postgres/server";
import { configWriteOf } from "./support/config-write";
import { DEBIAN_12, UBUNTU_2204, UBUNTU_2404 } from "./support/fixtures";
import { grantsRead, grantsWrite } from "./support/grants-steps";
import { listenerStep, ssLine } from "./support/listener-look";
import { sourcesFacts } from "./support/look-answers";
import { ALPHA_FPR, BETA_FPR, pgpKey } from "./support/pgp-fixtures";
import { listingAnswer } from "./support/postgres-listing";
import { runScripted } from "./support/run-scripted";
import { type Call, ScriptedRemote, type Step } from "./support/scripted-remote";

/** Quotes of both kinds, $, backslashes (one and two) and runs of spaces: everything a shell or SQL would trip on. */
const PW = `it's "q" $HOME \\back\\\\slash  two  spaces`;
/** Fragments of PW that must not show up in any command line, whatever quoting was applied to them. */
const PW_FRAGMENTS = [PW, `"q" $HOME`, "back\\", "two  spaces", "it''s", "it'\\''s"];

const run = (event: unknown, script: Step[], deps: Partial<InstallerDeps> = {}) =>
  runScripted(handler, event, script, deps);

// ---------------------------------------------------------------------------------------------------
// Fixtures: what the tools print on Ubuntu 22.04 and Debian 12.

const STOCK_HBA = `# PostgreSQL Client Authentication Configuration File
# ===================================================
# TYPE  DATABASE        USER            ADDRESS                 METHOD
local   all             postgres                                peer
# "local" is for Unix domain socket connections only
local   all             all                                     peer
# IPv4 local connections:
host    all             all             127.0.0.1/32            scram-sha-256
# IPv6 local connections:
host    all             all             ::1/128                 scram-sha-256
local   replication     all                                     peer
host    replication     all             127.0.0.1/32            scram-sha-256
host    replication     all             ::1/128                 scram-sha-256
`;

const PG14_PKG =
  "postgresql-14\tinstall ok installed\t14.11-0ubuntu0.22.04.1\npostgresql-9.1\tunknown ok not-installed\t\n";
const PG14_CLUSTER =
  "14  main    5432 online postgres /var/lib/postgresql/14/main /var/log/postgresql/postgresql-14-main.log\n";

function serverState(over: Partial<ServerState> = {}): ServerState {
  return {
    server_version: "14.11 (Ubuntu 14.11-0ubuntu0.22.04.1)",
    hba_file: "/etc/postgresql/14/main/pg_hba.conf",
    config_file: "/etc/postgresql/14/main/postgresql.conf",
    listen_addresses: "localhost",
    pending_restart: [],
    role: null,
    database: null,
    hba_text: STOCK_HBA,
    dropin_text: null,
    ssl: "on",
    ...over,
  };
}

const DROPIN = "/etc/postgresql/14/main/conf.d/90-vm-install.conf";
const BASE = { db_name: "myapp", db_user: "app_user", db_password: PW };

const osStep = (text = UBUNTU_2204): Step => ({
  match: "cat /etc/os-release",
  sudo: false,
  facts: { os_release: text },
});
/** inspectInstallation: dpkg-query of the server packages, then clusters and their units when there are any. */
const inspectStep = (pkgs = "", clusters?: string, units?: string): Step => ({
  match: INSTALLATION_LOOK.script,
  sudo: false,
  stdout: listingAnswer(INSTALLATION_LOOK.script, { packages: pkgs, clusters, units: units ?? "" }),
});
const installed14 = (unit = "active") => inspectStep(PG14_PKG, PG14_CLUSTER, `postgresql@14-main ${unit}\n`);
const PSQL = "cd / && psql -X -q -A -t -v ON_ERROR_STOP=1 -p 5432 -d postgres -f -";
/** A psql run as postgres with SQL on stdin; `sql` must appear in that stdin. */
const psqlStep = (sql: string | RegExp, stdout: unknown = "", extra: Partial<Step> = {}): Step => ({
  match: PSQL,
  sudo: false,
  stdout: typeof stdout === "string" ? stdout : `${JSON.stringify(stdout)}\n`,
  ...extra,
  check: (c, o) => {
    expect(o.user).toBe("postgres");
    expect(String(o.stdin)).toMatch(sql);
    extra.check?.(c, o);
  },
});
const inspectSqlStep = (state: ServerState) => psqlStep(/SELECT json_build_object\(\n {2}'server_version'/, state);
/**
 * The configuration exec (configuration.ts writeConfiguration), one as postgres: `files` written in order, each
 * from its bytes of stdin (its content checked), then the server's check, answering `over`.
 */
const configStep = (files: [string, ((content: string) => void)?][], over: object = {}): Step => ({
  match: /^\{ (t=\$\(mktemp |export PGCLIENTENCODING=UTF8 LC_MESSAGES=C; echo )/,
  sudo: false,
  stdout: `${JSON.stringify({ listen: [{ file: DROPIN, line: 2, setting: "*", error: null }], config_errors: [], hba_errors: [], ...over })}\n`,
  check: (c, o) => {
    expect(o.user).toBe("postgres");
    const written = configWriteOf(c, String(o.stdin ?? ""));
    expect(written?.files.map((f) => f.path)).toEqual(files.map(([path]) => path));
    expect(written?.sql).toMatch(/FROM pg_hba_file_rules WHERE error IS NOT NULL/);
    for (const [i, [, check]] of files.entries()) check?.(written?.files[i].content ?? "");
  },
});
/**
 * The look after a restart or reload (configuration.ts settledLook), as root: what the server runs with, and
 * who listens on its port, answered as `login`'s listener look would be; the login's TCP channel follows it.
 */
const settledStep = (listen: string, pending: string[], login: Step): Step => ({
  match: "printf '%s ' settled; ",
  sudo: true,
  facts: {
    settled: `${JSON.stringify({ listen_addresses: listen, pending_restart: pending })}\n`,
    ...Object.fromEntries(
      (login.stdout ?? "")
        .split("\n")
        .filter(Boolean)
        .map((line) => {
          const [name, b64] = line.split(" ");
          const text = Buffer.from(b64, "base64").toString();
          const cut = text.lastIndexOf("\n");
          return [name, { text: text.slice(0, cut), code: Number(text.slice(cut + 1)) }];
        }),
    ),
  },
  check: (_c, o) => expect(o.env?.LC_ALL).toBe("C"),
  tunnel: login.tunnel,
});
const writeStep = (path: string, check?: (stdin: string) => void): Step => ({
  match: `t=$(mktemp ${path}.XXXXXX)`,
  sudo: false,
  check: (_c, o) => {
    expect(o.user).toBe("postgres");
    check?.(String(o.stdin));
  },
});
const HBA_FILE = "/etc/postgresql/14/main/pg_hba.conf";
const WHO = { user: "app_user", database: "myapp", server_version: "14.11 (Ubuntu 14.11-0ubuntu0.22.04.1)" };
/** The login check: the look at the port's listeners (the postmaster), then SCRAM with a server whose role has `password`. */
const loginStep = (host = "127.0.0.1", opts: { who?: object; password?: string } = {}): Step =>
  listenerStep(host, { tunnel: { password: opts.password ?? PW, who: JSON.stringify(opts.who ?? WHO) } });

/** No command line and no exported variable of any call carries the password in any form. */
function expectNoPasswordOnCommandLines(calls: Call[], pw = PW, fragments = PW_FRAGMENTS) {
  expect(calls.length).toBeGreaterThan(0);
  for (const call of calls) {
    for (const f of [pw, ...fragments]) {
      expect(call.command).not.toContain(f);
      for (const v of Object.values(call.opts.env ?? {})) expect(v).not.toContain(f);
      if (call.opts.label) expect(call.opts.label).not.toContain(f);
    }
  }
}

/** The SCRAM secret sent in an apply script (`\set pw '...'`). */
function sentSecret(calls: Call[]): string | undefined {
  for (const c of calls) {
    const m = /\\set pw '(SCRAM-SHA-256\$[^']+)'/.exec(String(c.opts.stdin ?? ""));
    if (m) return m[1];
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------

describe("install-postgres: event validation (before any SSH)", () => {
  const invalid: [string, unknown, RegExp][] = [
    [
      "shell syntax in db_name",
      { ...BASE, db_name: "myapp; rm -rf /" },
      /event db_name: "myapp; rm -rf \/" is not allowed/,
    ],
    [
      "command substitution in db_user",
      { ...BASE, db_user: "$(reboot)" },
      /event db_user: "\$\(reboot\)" is not allowed/,
    ],
    [
      "SQL syntax in db_name",
      { ...BASE, db_name: `x"; DROP ROLE postgres; --` },
      /event db_name: .* is not allowed; expected a PostgreSQL name/,
    ],
    ["SQL quote in db_user", { ...BASE, db_user: "o'brien" }, /event db_user: "o'brien" is not allowed/],
    ["uppercase name", { ...BASE, db_name: "MyApp" }, /event db_name: "MyApp" is not allowed/],
    ["a name longer than 63", { ...BASE, db_user: "a".repeat(64) }, /event db_user: .* is not allowed/],
    ["the postgres role", { ...BASE, db_user: "postgres" }, /event db_user: "postgres" is reserved by PostgreSQL/],
    ["a pg_ role", { ...BASE, db_user: "pg_monitor" }, /event db_user: "pg_monitor" is reserved/],
    [
      "pg_hba keyword as database",
      { ...BASE, db_name: "all" },
      /event db_name: "all" is a reserved word for a database/,
    ],
    ["public as role", { ...BASE, db_user: "public" }, /event db_user: "public" is a reserved word for a role/],
    ["template1 as database", { ...BASE, db_name: "template1" }, /event db_name: "template1" is a reserved word/],
    ["missing password", { db_name: "myapp", db_user: "app_user" }, /event db_password: required key is missing/],
    ["empty password", { ...BASE, db_password: "" }, /event db_password: is empty/],
    [
      "password not a string",
      { ...BASE, db_password: 12345678 },
      /event db_password: expected a string \(the role's password\), got number/,
    ],
    ["missing db_name", { db_user: "app_user", db_password: PW }, /event db_name: required key is missing/],
    [
      "bad CIDR (bits)",
      { ...BASE, allow_remote: true, allowed_cidrs: ["10.0.0.0/33"] },
      /event allowed_cidrs\[0\]: "10.0.0.0\/33" is not a network in CIDR form/,
    ],
    [
      "bad CIDR (no bits)",
      { ...BASE, allowed_cidrs: ["10.0.0.1"] },
      /event allowed_cidrs\[0\]: "10.0.0.1" is not a network in CIDR form/,
    ],
    ["shell in a CIDR", { ...BASE, allowed_cidrs: ["0.0.0.0/0; id"] }, /event allowed_cidrs\[0\]/],
    ["empty CIDR list", { ...BASE, allowed_cidrs: [] }, /event allowed_cidrs: expected at least 1 item/],
    [
      "the same CIDR twice",
      { ...BASE, allowed_cidrs: ["10.0.0.0/8", "10.0.0.0/8"] },
      /event allowed_cidrs\[1\]: "10.0.0.0\/8" appears twice/,
    ],
    [
      "bad listen_addresses",
      { ...BASE, listen_addresses: "*'; x" },
      /event listen_addresses: .* is not "\*" or a comma-separated list/,
    ],
    [
      "pg_version with a minor",
      { ...BASE, pg_version: "15.4" },
      /event pg_version: "15.4" is not allowed; expected a PostgreSQL major/,
    ],
    ["pg_version as a number", { ...BASE, pg_version: 15 }, /event pg_version: expected a string/],
    [
      "repo_url with a quote",
      { ...BASE, repo_url: "https://mirror.example/pg'x" },
      /event repo_url: .* is not allowed; expected an http\(s\) URL/,
    ],
    [
      "repo_key_fingerprint malformed",
      { ...BASE, repo_key_fingerprint: "ACCC4CF8" },
      /event repo_key_fingerprint: "ACCC4CF8" is not an OpenPGP key fingerprint/,
    ],
    ["allow_remote not a boolean", { ...BASE, allow_remote: "yes" }, /event allow_remote: expected true or false/],
    [
      "an unknown key",
      { ...BASE, db_pasword: "x" },
      /event db_pasword: unknown key; did you mean "db_password"\? allowed here: pg_version, db_name, db_user, db_password, listen_addresses, allow_remote, remote_ssl, allowed_cidrs, repo_url, repo_key_url, repo_key_fingerprint, parameters, extensions, tls, tls_names, tls_renew_days, tls_valid_days, tls_ca_cert, tls_ca_key, tls_cert, tls_key, update, cache_valid_sec, state, purge_data, apt, ssh/,
    ],
  ];

  it.each(invalid)("rejects %s with no command run", async (_what, event, message) => {
    const { error, connects, remote } = await run(event, []);
    expect(error?.message).toMatch(/^install-postgres: invalid input, nothing was done on the VM: /);
    expect(error?.message).toMatch(message);
    expect(connects).toBe(0);
    expect(remote.calls).toHaveLength(0);
  });

  it("a password with a newline is rejected without being quoted back", async () => {
    const secret = "first line\nsecond line s3cr3t";
    const { error, connects } = await run({ ...BASE, db_password: secret }, []);
    expect(error?.message).toMatch(/event db_password: contains a control character/);
    expect(error?.message).not.toContain("s3cr3t");
    expect(error?.message).not.toContain("first line");
    expect(connects).toBe(0);
  });

  it("a password shorter than 12 characters is refused before connecting, and never quoted back", async () => {
    const { error, connects } = await run({ ...BASE, db_password: "Sh0rt-pw!" }, []);
    expect(error?.message).toMatch(
      /event db_password: is too short \(9 characters\); at least 12 are required \(the value is not shown\)/,
    );
    expect(error?.message).not.toContain("Sh0rt-pw!");
    expect(connects).toBe(0);
  });

  it("lists every problem at once", async () => {
    const { error } = await run({ db_name: "bad name", db_user: "x;y", allowed_cidrs: ["nope"] }, []);
    expect(error?.message).toMatch(/db_name/);
    expect(error?.message).toMatch(/db_user/);
    expect(error?.message).toMatch(/db_password: required key is missing/);
    expect(error?.message).toMatch(/allowed_cidrs\[0\]/);
  });
});

describe("install-postgres: Ubuntu 22.04, PostgreSQL 14 from the distribution", () => {
  it("installs, creates role and database, configures, restarts, verifies over TCP: exact commands", async () => {
    const { result, error, remote, lines } = await run(
      { ...BASE, listen_addresses: "*", allow_remote: true, allowed_cidrs: ["10.0.0.0/8", "192.168.1.0/24"] },
      [
        osStep(),
        inspectStep(),
        // ensurePackages(["postgresql"]): look, update, candidates, install, verify.
        { match: /^dpkg-query -W -f=\S+ postgresql$/, sudo: false, code: 1 },
        { match: /^apt-get update /, sudo: true },
        {
          match: "apt-cache policy postgresql",
          sudo: false,
          stdout: "postgresql:\n  Installed: (none)\n  Candidate: 14+238\n  Version table:\n     14+238 500\n",
        },
        {
          match: /^apt-get install -y -q .*--force-confold postgresql$/,
          sudo: true,
          check: (_c, o) => expect(o.env?.DEBIAN_FRONTEND).toBe("noninteractive"),
        },
        {
          match: /^dpkg-query -W -f=\S+ postgresql$/,
          sudo: false,
          stdout: "postgresql\tinstall ok installed\t14+238\n",
        },
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
              /\\set pw 'SCRAM-SHA-256\$4096:[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+'\nALTER ROLE :"db_user" PASSWORD :'pw';/,
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
    // record, in the install's own exec; the role and database's SQL, the drop-in, pg_hba.conf and the server's check of them are one exec
    // as postgres; the look after the restart, in its exec, reads who listens, the login's proof; apt's locks,
    // dpkg's health and the candidates are read after apt-get update, in its exec (issue 30): 6 execs, 19
    // before (the double records nothing, so no inventory is written).
    expect(remote.sent).toHaveLength(6);
    const joined = remote.sent.find((c) => c.startsWith("{ head -c "));
    expect(joined).toMatch(/psql [^\n]* >\/dev\/null \|\| exit \$\(\(100 \+ \$\?\)\); \} && \{ t=\$\(mktemp /);
    expect(remote.sent.filter((c) => c.includes("printf '%s ' settled; "))).toHaveLength(1);
    expect(remote.implicit).toEqual([]);
    expect(remote.sent.filter((c) => c.startsWith("dpkg-query"))).toEqual([]);
    expect(lines).toContain(
      "[install-postgres] the grants inventory, the role, the database and the settings: read with the install's record",
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
      "installed postgresql-14 14.11-0ubuntu0.22.04.1",
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

  it("another major comes from PGDG: <repo_url> jammy-pgdg main, signed by the key in /etc/apt/keyrings", async () => {
    const armoured = pgpKey("pgdg.asc"); // the real PGDG key: the default repo_key_fingerprint accepts it
    const state16 = serverState({
      server_version: "16.3 (Ubuntu 16.3-1.pgdg22.04+1)",
      hba_file: "/etc/postgresql/16/main/pg_hba.conf",
      config_file: "/etc/postgresql/16/main/postgresql.conf",
    });
    const { result, error, remote } = await run({ ...BASE, pg_version: "16" }, [
      osStep(),
      inspectStep(),
      { match: "command -v curl || true", sudo: false, stdout: "/usr/bin/curl\n" },
      {
        match:
          "curl -fsSL --proto '=http,https' --retry 3 --connect-timeout 20 --max-time 120 -o \"$t\" " +
          "https://www.postgresql.org/media/keys/ACCC4CF8.asc",
        sudo: false,
        stdout: `amd64\n${armoured.toString("base64")}`,
      },
      {
        match:
          "printf '%s\\n' 'deb [arch=amd64 signed-by=/etc/apt/keyrings/pgdg.gpg] " +
          "https://apt.postgresql.org/pub/repos/apt jammy-pgdg main'",
        sudo: true,
        stdout:
          "changed:wrote /etc/apt/keyrings/pgdg.gpg (new key)\nchanged:wrote /etc/apt/sources.list.d/pgdg.list " +
          "(new source)\n",
        // The binary keyring rebuilt from the checked packets, not the served armour.
        check: (_c, o) => expect(Buffer.from(o.stdin as Buffer).equals(dearmor(armoured))).toBe(true),
      },
      {
        match: "for f in /etc/apt/sources.list ",
        sudo: true,
        facts: sourcesFacts([
          {
            path: "/etc/apt/sources.list.d/pgdg.list",
            text:
              "deb [arch=amd64 signed-by=/etc/apt/keyrings/pgdg.gpg] " +
              "https://apt.postgresql.org/pub/repos/apt jammy-pgdg main\n",
          },
        ]),
      },
      { match: /^dpkg-query -W -f=\S+ postgresql-16$/, sudo: false, code: 1 },
      { match: /^apt-get update /, sudo: true },
      {
        match: "apt-cache policy postgresql-16",
        sudo: false,
        stdout:
          "postgresql-16:\n  Installed: (none)\n  Candidate: 16.3-1.pgdg22.04+1\n  Version table:\n     " +
          "16.3-1.pgdg22.04+1 500\n",
      },
      { match: /^apt-get install -y -q .*--force-confold postgresql-16$/, sudo: true },
      {
        match: /^dpkg-query -W -f=\S+ postgresql-16$/,
        sudo: false,
        stdout: "postgresql-16\tinstall ok installed\t16.3-1.pgdg22.04+1\n",
      },
      inspectStep(
        "postgresql-16\tinstall ok installed\t16.3-1.pgdg22.04+1\n",
        "16 main 5432 online postgres /var/lib/postgresql/16/main /var/log/postgresql/postgresql-16-main.log\n",
        "postgresql@16-main active\n",
      ),
      grantsRead(),
      inspectSqlStep(state16),
      psqlStep(/CREATE ROLE/),
      grantsWrite((w) => expect(w.postgres).toEqual({ hba: {}, roles: { "16/main": ["app_user"] } })),
      loginStep("127.0.0.1", { who: { ...WHO, server_version: state16.server_version } }),
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({
      pg_version: "16.3",
      pg_major: "16",
      installed_from: "pgdg",
      cluster: "16/main",
      restarted: false,
      reloaded: false,
      listen_addresses: "localhost",
      allowed_cidrs: [],
    });
    expect(result!.changes).toEqual([
      "PGDG repository: wrote /etc/apt/keyrings/pgdg.gpg (new key)",
      "PGDG repository: wrote /etc/apt/sources.list.d/pgdg.list (new source)",
      "installed postgresql-16 16.3-1.pgdg22.04+1",
      "role app_user created (LOGIN, password set)",
      "database myapp created (owner app_user)",
    ]);
    expectNoPasswordOnCommandLines(remote.calls);
  });

  it("a mirror's key is taken from the mirror unless repo_key_url says otherwise", () => {
    expect(pgdgKeyUrl("https://apt.postgresql.org/pub/repos/apt")).toBe(
      "https://www.postgresql.org/media/keys/ACCC4CF8.asc",
    );
    expect(pgdgKeyUrl("https://apt.postgresql.org/pub/repos/apt/")).toBe(
      "https://www.postgresql.org/media/keys/ACCC4CF8.asc",
    );
    expect(pgdgKeyUrl("https://mirror.example.org/postgresql/repos/apt")).toBe(
      "https://mirror.example.org/postgresql/repos/apt/ACCC4CF8.asc",
    );
    expect(pgdgKeyUrl("https://mirror.example.org/pg", "https://keys.example.org/pgdg.asc")).toBe(
      "https://keys.example.org/pgdg.asc",
    );
  });

  it(
    "a mirror's key that is not PGDG's fails before anything is written, naming both fingerprints, with or " +
      "without gpg on the VM",
    async () => {
      const { error, remote } = await run({ ...BASE, pg_version: "16", repo_url: "http://mirror.example.org/pg" }, [
        osStep(),
        inspectStep(),
        { match: "command -v curl", stdout: "/usr/bin/curl\n" },
        {
          match: "http://mirror.example.org/pg/ACCC4CF8.asc",
          stdout: `amd64\n${pgpKey("alpha.gpg").toString("base64")}`,
        },
      ]);
      expect(remote.done).toBe(true);
      expect(remote.calls.filter((c) => c.opts.sudo)).toEqual([]);
      expect(error?.message).toContain(
        "the key at http://mirror.example.org/pg/ACCC4CF8.asc for apt repository pgdg is not the expected key: " +
          `expected ${PGDG_KEY_FINGERPRINT}, served ${ALPHA_FPR}`,
      );
      expect(error?.message).toContain("nothing was written to the VM");
      expect(error?.message).toMatch(/point repo_key_url at the repository's own key, or set repo_key_fingerprint/);
    },
  );

  it("repo_key_fingerprint admits a mirror's own key(s), given as a list", async () => {
    const both = Buffer.concat([pgpKey("alpha.gpg"), pgpKey("beta.gpg")]); // one keyring of two keys
    const { error, remote } = await run(
      {
        ...BASE,
        pg_version: "16",
        repo_url: "http://mirror.example.org/pg",
        repo_key_fingerprint: [BETA_FPR, ALPHA_FPR],
      },
      [
        osStep(),
        inspectStep(),
        { match: "command -v curl", stdout: "/usr/bin/curl\n" },
        { match: "http://mirror.example.org/pg/ACCC4CF8.asc", stdout: `amd64\n${both.toString("base64")}` },
        {
          match: "http://mirror.example.org/pg jammy-pgdg main",
          sudo: true,
          stdout: "changed:wrote /etc/apt/keyrings/pgdg.gpg (new key)\n",
        },
        { match: "for f in /etc/apt/sources.list ", sudo: true, facts: sourcesFacts([]) },
        { match: /^dpkg-query -W -f=\S+ postgresql-16$/, sudo: false, code: 1 },
        { match: /^apt-get update /, sudo: true, code: 100, stderr: "E: stop here\n" },
      ],
    );
    expect(remote.done).toBe(true);
    expect(error?.message).not.toMatch(/not the expected key/);
  });

  it("pg_version omitted on an unknown release: a clear error, nothing installed", async () => {
    const { error, remote } = await run(BASE, [osStep(UBUNTU_2204.replace(/jammy/g, "zesty")), inspectStep()]);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      /pg_version is not set and this installer does not know which PostgreSQL Ubuntu 22.04.4 LTS ships .*; set pg_version/,
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
  const state16 = serverState({
    server_version: SERVER16,
    hba_file: HBA16,
    config_file: "/etc/postgresql/16/main/postgresql.conf",
  });

  it(
    "pg_version omitted: noble's own 16 (postgresql-16, cluster 16/main, /etc/postgresql/16/main): installs, " +
      "configures, restarts, verifies",
    async () => {
      const { result, error, remote } = await run(
        { ...BASE, listen_addresses: "*", allow_remote: true, allowed_cidrs: ["10.0.0.0/8"] },
        [
          osStep(UBUNTU_2404),
          inspectStep(),
          { match: /^dpkg-query -W -f=\S+ postgresql$/, sudo: false, code: 1 },
          { match: /^apt-get update /, sudo: true },
          {
            match: "apt-cache policy postgresql",
            sudo: false,
            stdout:
              "postgresql:\n  Installed: (none)\n  Candidate: 16+257build1.1\n  Version table:\n     " +
              "16+257build1.1 500\n",
          },
          {
            match: /^apt-get install -y -q .*--force-confold postgresql$/,
            sudo: true,
            check: (_c, o) => expect(o.env?.DEBIAN_FRONTEND).toBe("noninteractive"),
          },
          {
            match: /^dpkg-query -W -f=\S+ postgresql$/,
            sudo: false,
            stdout: "postgresql\tinstall ok installed\t16+257build1.1\n",
          },
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
        "installed postgresql-16 16.14-0ubuntu0.24.04.1",
        "role app_user created (LOGIN, password set)",
        "database myapp created (owner app_user)",
        `listen_addresses 'localhost' -> '*' (${DROPIN16})`,
        "pg_hba.conf: hostssl myapp app_user 10.0.0.0/8 scram-sha-256 added",
      ]);
      expectNoPasswordOnCommandLines(remote.calls);
    },
  );

  it("another major comes from PGDG: <repo_url> noble-pgdg main (PostgreSQL 17)", async () => {
    const armoured = pgpKey("pgdg.asc");
    const line =
      "deb [arch=amd64 signed-by=/etc/apt/keyrings/pgdg.gpg] https://apt.postgresql.org/pub/repos/apt noble-pgdg main";
    const state17 = serverState({
      server_version: "17.11 (Ubuntu 17.11-1.pgdg24.04+2)",
      hba_file: "/etc/postgresql/17/main/pg_hba.conf",
      config_file: "/etc/postgresql/17/main/postgresql.conf",
    });
    const { result, error, remote } = await run({ ...BASE, pg_version: "17" }, [
      osStep(UBUNTU_2404),
      inspectStep(),
      { match: "command -v curl || true", sudo: false, stdout: "/usr/bin/curl\n" },
      {
        match:
          "curl -fsSL --proto '=http,https' --retry 3 --connect-timeout 20 --max-time 120 -o \"$t\" " +
          "https://www.postgresql.org/media/keys/ACCC4CF8.asc",
        sudo: false,
        stdout: `amd64\n${armoured.toString("base64")}`,
      },
      {
        match: `printf '%s\\n' '${line}'`,
        sudo: true,
        stdout:
          "changed:wrote /etc/apt/keyrings/pgdg.gpg (new key)\nchanged:wrote /etc/apt/sources.list.d/pgdg.list " +
          "(new source)\n",
        check: (_c, o) => expect(Buffer.from(o.stdin as Buffer).equals(dearmor(armoured))).toBe(true),
      },
      {
        match: "for f in /etc/apt/sources.list ",
        sudo: true,
        facts: sourcesFacts([{ path: "/etc/apt/sources.list.d/pgdg.list", text: `${line}\n` }]),
      },
      { match: /^dpkg-query -W -f=\S+ postgresql-17$/, sudo: false, code: 1 },
      { match: /^apt-get update /, sudo: true },
      {
        match: "apt-cache policy postgresql-17",
        sudo: false,
        stdout:
          "postgresql-17:\n  Installed: (none)\n  Candidate: 17.11-1.pgdg24.04+2\n  Version table:\n     " +
          "17.11-1.pgdg24.04+2 500\n",
      },
      { match: /^apt-get install -y -q .*--force-confold postgresql-17$/, sudo: true },
      {
        match: /^dpkg-query -W -f=\S+ postgresql-17$/,
        sudo: false,
        stdout: "postgresql-17\tinstall ok installed\t17.11-1.pgdg24.04+2\n",
      },
      inspectStep(
        "postgresql-17\tinstall ok installed\t17.11-1.pgdg24.04+2\n",
        "17 main 5432 online postgres /var/lib/postgresql/17/main /var/log/postgresql/postgresql-17-main.log\n",
        "postgresql@17-main active\n",
      ),
      grantsRead(),
      inspectSqlStep(state17),
      psqlStep(/CREATE ROLE/),
      grantsWrite((w) => expect(w.postgres).toEqual({ hba: {}, roles: { "17/main": ["app_user"] } })),
      loginStep("127.0.0.1", { who: { ...WHO, server_version: state17.server_version } }),
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({
      pg_version: "17.11",
      pg_major: "17",
      installed_from: "pgdg",
      cluster: "17/main",
      os: { id: "ubuntu", codename: "noble" },
    });
    expect(result!.changes).toEqual([
      "PGDG repository: wrote /etc/apt/keyrings/pgdg.gpg (new key)",
      "PGDG repository: wrote /etc/apt/sources.list.d/pgdg.list (new source)",
      "installed postgresql-17 17.11-1.pgdg24.04+2",
      "role app_user created (LOGIN, password set)",
      "database myapp created (owner app_user)",
    ]);
  });
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

describe("install-postgres: idempotence and updates", () => {
  const secret = scramSecret(PW);
  const done = (over: Partial<ServerState> = {}) =>
    serverState({
      listen_addresses: "*",
      role: { login: true, superuser: false, secret },
      database: { owner: "app_user" },
      hba_text: `${STOCK_HBA}hostssl    myapp    app_user    10.0.0.0/8    scram-sha-256    ${HBA_MARKER}\n`,
      dropin_text: dropInContent("*"),
      ...over,
    });
  const event = { ...BASE, listen_addresses: "*", allow_remote: true, allowed_cidrs: ["10.0.0.0/8"] };
  /** What the first run recorded: its line and the role it created. */
  const RECORDED = {
    version: 1,
    postgres: {
      hba: { [HBA_FILE]: ["hostssl myapp app_user 10.0.0.0/8 scram-sha-256"] },
      roles: { "14/main": ["app_user"] },
    },
  };

  it("a rerun creates nothing, appends nothing, restarts nothing: four commands and the TCP check", async () => {
    const { result, error, remote, lines } = await run(event, [
      osStep(),
      installed14(),
      grantsRead(RECORDED),
      inspectSqlStep(done()),
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
    const { result, error, remote } = await run({ ...event, db_password: NEW }, [
      osStep(),
      installed14(),
      grantsRead(RECORDED),
      inspectSqlStep(done()),
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
    const { result, remote } = await run(event, [
      osStep(),
      installed14(),
      grantsRead(RECORDED),
      inspectSqlStep(done({ role: { login: true, superuser: false, secret: md5 } })),
      psqlStep(/ALTER ROLE :"db_user" PASSWORD/),
      loginStep(),
    ]);
    expect(remote.done).toBe(true);
    expect(result?.changes).toEqual(["password of app_user re-hashed as SCRAM-SHA-256 (was md5)"]);
  });

  it("a role that may not log in gets LOGIN; a database of another owner is handed over", async () => {
    const { result, remote } = await run(event, [
      osStep(),
      installed14(),
      grantsRead(RECORDED),
      inspectSqlStep(done({ role: { login: false, superuser: false, secret }, database: { owner: "olduser" } })),
      psqlStep(
        /ALTER ROLE :"db_user" LOGIN;\n\\set mark 'vm-install: LOGIN given by install-postgres[^\n]*\n[^\n]*COMMENT ON ROLE[^\n]*\nALTER DATABASE :"db_name" OWNER TO :"db_user";\n$/,
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
    const { result, remote } = await run(event, [
      osStep(),
      installed14(),
      grantsRead(roleOnly),
      inspectSqlStep(done({ hba_text: STOCK_HBA + adminLine })),
      loginStep(),
    ]);
    expect(remote.done).toBe(true);
    expect(result?.changes).toEqual([]);
  });

  it("narrowing allowed_cidrs: our old line goes, the new one comes, reload (no restart)", async () => {
    const { result, remote } = await run({ ...event, allowed_cidrs: ["10.1.2.3/32"] }, [
      osStep(),
      installed14(),
      grantsRead(RECORDED),
      inspectSqlStep(done()),
      configStep([
        [
          "/etc/postgresql/14/main/pg_hba.conf",
          (stdin) => {
            expect(stdin).not.toContain("10.0.0.0/8");
            expect(
              stdin.endsWith(`hostssl    myapp    app_user    10.1.2.3/32    scram-sha-256    ${HBA_MARKER}\n`),
            ).toBe(true);
          },
        ],
      ]),
      { match: "systemctl reload postgresql@14-main", sudo: true },
      settledStep("*", [], loginStep()),
      grantsWrite((w) =>
        expect((w.postgres as { hba: object }).hba).toEqual({
          [HBA_FILE]: ["hostssl myapp app_user 10.1.2.3/32 scram-sha-256"],
        }),
      ),
    ]);
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({
      restarted: false,
      reloaded: true,
      revoked: ["pg_hba.conf: hostssl myapp app_user 10.0.0.0/8 scram-sha-256"],
    });
    expect(result!.changes).toEqual([
      "pg_hba.conf: hostssl myapp app_user 10.1.2.3/32 scram-sha-256 added",
      "revoked: pg_hba.conf: hostssl myapp app_user 10.0.0.0/8 scram-sha-256 removed (written by vm-install, " +
        "no longer in the settings)",
    ]);
  });

  it("a cluster that is down is started", async () => {
    const { result, remote } = await run(event, [
      osStep(),
      installed14("inactive"),
      { match: "systemctl start postgresql@14-main", sudo: true },
      { match: "systemctl is-active postgresql@14-main", stdout: "active\n" },
      grantsRead(RECORDED),
      inspectSqlStep(done()),
      loginStep(),
    ]);
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({
      changed: true,
      changes: ["cluster 14/main started (was inactive)"],
      restarted: false,
    });
  });

  /** A rerun whose listen_addresses waits for a restart: the restart, then `after` (the look after it). */
  const pendingListen = (after: Step): Step[] => [
    osStep(),
    installed14(),
    grantsRead(RECORDED),
    inspectSqlStep(done({ listen_addresses: "localhost", pending_restart: ["listen_addresses"] })),
    configStep([]),
    { match: "systemctl restart postgresql@14-main", sudo: true },
    after,
  ];

  it("a listen_addresses change that is still waiting for a restart is applied", async () => {
    const { result, remote } = await run(event, pendingListen(settledStep("*", [], loginStep())));
    expect(remote.done).toBe(true);
    expect(result).toMatchObject({
      restarted: true,
      changed: true,
      changes: [`listen_addresses 'localhost' -> '*' (${DROPIN})`],
    });
  });

  it("the database's SQL fails in the exec it shares with the configuration: named as its own step, nothing written", async () => {
    const { error, remote } = await run(event, [
      osStep(),
      installed14(),
      grantsRead(RECORDED),
      inspectSqlStep(done({ database: null, hba_text: STOCK_HBA })),
      // One exec: the SQL first (it fails), then pg_hba.conf and the check, which never run.
      psqlStep(/CREATE DATABASE/, "", { code: 3, stderr: "ERROR:  permission denied to create database\n" }),
    ]);
    expect(remote.done).toBe(true);
    expect(remote.sent.filter((c) => c.startsWith("{ head -c "))).toHaveLength(1);
    expect(error?.message).toMatch(
      /psql \(role and database\) failed \(exit 3\):\nERROR: {2}permission denied to create database/,
    );
  });

  it("the look after the restart rides in the restart's exec; cut off, it is made on its own (issue 30)", async () => {
    const steps = () => pendingListen(settledStep("*", [], loginStep()));
    const whole = await run(event, steps());
    expect(whole.remote.done).toBe(true);
    const restart = whole.remote.sent.filter((c) => c.includes("systemctl restart postgresql@14-main"));
    expect(restart).toHaveLength(1);
    expect(restart[0]).toMatch(/\n\); vmi_status=\$\?; echo\nprintf '%s ' settled; /);
    expect(whole.remote.sent.some((c) => c.startsWith("printf '%s ' settled; "))).toBe(false);
    // A restart whose output came back without the look's frames (a lost connection followed again): its own exec.
    const remote = new ScriptedRemote([...steps(), settledStep("*", [], loginStep())]);
    const cutOff = Object.assign(Object.create(remote), {
      run: async (command: string, opts = {}) => {
        const r = await remote.run(command, opts);
        return command.includes("systemctl restart") ? { ...r, stdout: "" } : r;
      },
    });
    const cut = await runScripted(handler, event, [], { connect: async () => cutOff });
    expect(cut.error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(remote.sent.filter((c) => c.startsWith("printf '%s ' settled; "))).toHaveLength(1);
    expect(cut.result).toMatchObject({ restarted: true, changed: true });
  });

  // The look after the restart is the login's proof (issue 30: no look of its own before the login): a process
  // that took the port while the server restarted is named there, and nothing is sent to it.
  it("another process on the port right after the restart: the job fails naming it, no TCP channel opened", async () => {
    const squatter = listenerStep("127.0.0.1", {
      ss: [ssLine("127.0.0.1", 4242, "nc")],
      holders: "   4242 mallory nc -lk 127.0.0.1 5432\n",
      tunnel: { password: PW },
    });
    const { error, remote } = await run(event, pendingListen(settledStep("*", [], squatter)));
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      /127\.0\.0\.1:5432 is not held by the cluster's server: pid 4242, user mallory: nc -lk 127\.0\.0\.1 5432 listens there/,
    );
    expect(remote.tunnels).toEqual([]);
  });

  it("settings someone else left pending are reported, not restarted", async () => {
    const { result, remote } = await run({ ...event, allowed_cidrs: ["10.0.0.0/8", "10.9.0.0/16"] }, [
      osStep(),
      installed14(),
      grantsRead(RECORDED),
      inspectSqlStep(done()),
      configStep([["/etc/postgresql/14/main/pg_hba.conf"]]),
      { match: "systemctl reload postgresql@14-main", sudo: true },
      settledStep("*", ["shared_buffers"], loginStep()),
      grantsWrite(() => undefined),
    ]);
    expect(remote.done).toBe(true);
    expect(result?.restarted).toBe(false);
    expect(result?.warnings).toEqual([
      "settings changed by someone else wait for a restart of postgresql@14-main: shared_buffers (not " +
        "restarted by this job)",
    ]);
  });

  it(
    "allow_remote with a localhost-only listen_addresses " + "works but warns that remote clients cannot connect",
    async () => {
      const { result, remote } = await run({ ...event, listen_addresses: "localhost" }, [
        osStep(),
        installed14(),
        grantsRead(RECORDED),
        inspectSqlStep(done({ listen_addresses: "localhost", dropin_text: null })),
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

  it("a non-ASCII password is hashed by the server, in the quiet session, never on a command line", async () => {
    const UNI = "пароль «ü» 'q' \\ $x";
    const { result, remote } = await run({ ...event, db_password: UNI }, [
      osStep(),
      installed14(),
      grantsRead(RECORDED),
      inspectSqlStep(done()),
      psqlStep(/ALTER ROLE :"db_user" PASSWORD :'pw'/, "", {
        check: (_c, o) => {
          const sql = String(o.stdin);
          expect(sql.indexOf("DO $quiet$")).toBe(0);
          expect(sql).toContain(`\\set pw ${psqlMetaQuote(UNI)}\n`);
          expect(psqlMetaQuote(UNI)).toBe("'пароль «ü» ''q'' \\\\ $x'");
          expect(sql).not.toContain("SCRAM-SHA-256$");
        },
      }),
      loginStep("127.0.0.1", { password: UNI }),
    ]);
    expect(remote.done).toBe(true);
    expect(result?.changes).toEqual(["password of app_user updated"]);
    expectNoPasswordOnCommandLines(remote.calls, UNI, ["пароль"]);
  });

  it("another major already installed and pg_version omitted: it is kept, nothing installed", async () => {
    const { result, remote } = await run(BASE, [
      osStep(DEBIAN_12),
      inspectStep(
        "postgresql-16\tinstall ok installed\t16.3-1.pgdg120+1\n",
        "16 main 5432 online postgres /var/lib/postgresql/16/main /var/log/postgresql/postgresql-16-main.log\n",
        "postgresql@16-main active\n",
      ),
      grantsRead(RECORDED),
      inspectSqlStep(
        done({
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

describe("install-postgres: what it granted, it takes back (inventory in /var/lib/vm-install/grants.json)", () => {
  const secret = scramSecret(PW);
  const event = { ...BASE, listen_addresses: "*", allow_remote: true, allowed_cidrs: ["10.0.0.0/8"] };
  const oldLine = `hostssl    myapp    old_user    10.0.0.0/8    scram-sha-256    ${HBA_MARKER}\n`;
  const newLine = hbaLine("hostssl", "myapp", "app_user", "10.0.0.0/8");
  const ready = (over: Partial<ServerState> = {}) =>
    serverState({
      listen_addresses: "*",
      dropin_text: dropInContent("*"),
      role: { login: true, superuser: false, secret },
      database: { owner: "app_user" },
      ...over,
    });

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
      const { result, error, remote } = await run(event, [
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
      const { result, error, remote } = await run(event, [
        osStep(),
        installed14(),
        grantsRead(inventory),
        inspectSqlStep(ready({ hba_text: `${STOCK_HBA + admin + oldLine + newLine}\n` })),
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
      const { result, error, remote } = await run(event, [
        osStep(),
        installed14(),
        grantsRead(),
        inspectSqlStep(
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
    const plain = await run({ ...event, remote_ssl: false }, [
      osStep(),
      installed14(),
      grantsRead(),
      inspectSqlStep(ready()),
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

    const off = await run(event, [
      osStep(),
      installed14(),
      grantsRead(),
      inspectSqlStep(ready({ role: null, ssl: "off" })),
    ]);
    expect(off.remote.done).toBe(true);
    expect(off.error?.message).toMatch(
      /ssl is off on the server, so hostssl entries .* would admit no remote client: turn SSL on .* or set remoteSsl false.*Nothing was changed/,
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

describe("install-postgres: failures say what, where and what to do", () => {
  const event = { ...BASE, allow_remote: true, allowed_cidrs: ["10.0.0.0/8"] };

  it("a pg_hba.conf the server would reject is put back and nothing is reloaded", async () => {
    const { error, remote } = await run(event, [
      osStep(),
      installed14(),
      grantsRead(),
      inspectSqlStep(
        serverState({
          role: { login: true, superuser: false, secret: scramSecret(PW) },
          database: { owner: "app_user" },
        }),
      ),
      configStep([["/etc/postgresql/14/main/pg_hba.conf"]], {
        hba_errors: [{ line: 98, error: 'invalid IP mask "255.0.0.x"' }],
      }),
      writeStep("/etc/postgresql/14/main/pg_hba.conf", (stdin) => expect(stdin).toBe(STOCK_HBA)),
    ]);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      /^install-postgres failed while installing: the server would not accept its configuration files: \/etc\/postgresql\/14\/main\/pg_hba.conf line 98: invalid IP mask/,
    );
    expect(error?.message).toMatch(
      /nothing was reloaded, and \/etc\/postgresql\/14\/main\/pg_hba.conf was put back as it was/,
    );
  });

  it("listen_addresses overridden by postgresql.auto.conf: named, with the fix", async () => {
    const { error, remote } = await run({ ...BASE, listen_addresses: "*" }, [
      osStep(),
      installed14(),
      grantsRead(),
      inspectSqlStep(
        serverState({
          role: { login: true, superuser: false, secret: scramSecret(PW) },
          database: { owner: "app_user" },
        }),
      ),
      configStep([[DROPIN]], {
        listen: [
          { file: DROPIN, line: 2, setting: "*", error: null },
          { file: "/var/lib/postgresql/14/main/postgresql.auto.conf", line: 3, setting: "localhost", error: null },
        ],
      }),
    ]);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      /listen_addresses is also set in \/var\/lib\/postgresql\/14\/main\/postgresql.auto.conf line 3 \('localhost'\), which is read after .*90-vm-install.conf and wins: remove it there \(ALTER SYSTEM RESET listen_addresses\)/,
    );
  });

  it("a failed TCP login names the host, the reason and a hint, never the password", async () => {
    const { error, remote } = await run(BASE, [
      osStep(),
      installed14(),
      grantsRead(),
      inspectSqlStep(
        serverState({
          role: { login: true, superuser: false, secret: scramSecret(PW) },
          database: { owner: "app_user" },
        }),
      ),
      loginStep("127.0.0.1", { password: "the password before someone changed it" }),
    ]);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      /app_user could not log in to myapp over TCP at 127.0.0.1:5432: .*password authentication failed .*\(the password stored for the role does not match/,
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
});

describe("install-postgres: pure parts", () => {
  it("SCRAM-SHA-256 secrets match what PostgreSQL 15 stored for the same passwords", () => {
    // Read back from pg_authid after CREATE ROLE ... PASSWORD on the sandbox (Debian 12, PostgreSQL 15.20).
    const pencil =
      "SCRAM-SHA-256$4096:xLT7FwwkS3/LQ3ZnHrdwFA==$Z6a80ul5T2+bLHSXhHsnFE+UcWIuIz3A4E7fJJhH+dg=:" +
      "8BP6quHfW3OxDUtEK1sYUXdRQFQGPCqye6rioI6LUQc=";
    expect(scramSecret("pencil", Buffer.from("xLT7FwwkS3/LQ3ZnHrdwFA==", "base64"))).toBe(pencil);
    expect(storedPasswordState(pencil, "pencil", "vec1")).toBe("same");
    expect(storedPasswordState(pencil, "pencil ", "vec1")).toBe("different");
    const quoted =
      "SCRAM-SHA-256$4096:kEa+cMwCTh/Lk4ZqXE3Seg==$wjeh1/7LJJpw9ljnxbGfrPACRa6ZclQxeUpbtni0u70=:" +
      "IbHbDsnSelZjtYEhtDT2mypLGdj+Bqwykw8uVU9VdDw=";
    expect(storedPasswordState(quoted, `it's "q" \\ $x`, "vec2")).toBe("same");
    // Non-ASCII: NBSP -> space, the fi ligature -> "fi" (NFKC), soft hyphen dropped, as the server's SASLprep did.
    const cyrillic =
      "SCRAM-SHA-256$4096:y607y+be9RAcU1+FWhF55A==$qcfvVIX9kfbrIBNrIlrGT1RK8i6LB9SJ4QtSxdl7Um0=:" +
      "9vOb9DK7AJUBpg6/vkUWhZyv0xjTpULqmgJRmVgX9Gk=";
    expect(prepareApproximately("пароль\u00a0\ufb01\u00adü")).toBe("пароль fiü");
    expect(storedPasswordState(cyrillic, "пароль\u00a0\ufb01\u00adü", "vec4")).toBe("same");
    expect(storedPasswordState("md535ff36c156bd993074a924c264a32f68", "pencil", "vec3")).toBe("md5");
    expect(storedPasswordState("md535ff36c156bd993074a924c264a32f68", "other", "vec3")).toBe("unset-or-other");
    expect(storedPasswordState(null, "pencil", "x")).toBe("unset-or-other");
    const fresh = parseScramSecret(scramSecret("x"));
    expect(fresh?.iterations).toBe(4096);
    expect(fresh?.salt).toHaveLength(16);
  });

  it("dpkg and pg_lsclusters output", () => {
    expect(
      parseServerPackages(
        `${PG14_PKG}postgresql-14-postgis-3\tinstall ok installed\t3.2\npostgresql-16\tdeinstall ok ` +
          `config-files\t16.1\n`,
      ),
    ).toEqual([{ major: "14", version: "14.11-0ubuntu0.22.04.1" }]);
    expect(
      parseClusters(
        "15 main 5432 down postgres /var/lib/postgresql/15/main /var/log/postgresql/postgresql-15-main.log\n16 " +
          "other 5433 online postgres /srv/pg <unknown>\n",
      ).clusters,
    ).toEqual([
      {
        major: "15",
        name: "main",
        port: 5432,
        status: "down",
        owner: "postgres",
        dataDir: "/var/lib/postgresql/15/main",
        logFile: "/var/log/postgresql/postgresql-15-main.log",
      },
      { major: "16", name: "other", port: 5433, status: "online", owner: "postgres", dataDir: "/srv/pg" },
    ]);
  });

  it("pg_hba.conf planning: add, keep, remove only our own lines", () => {
    const e = (c: string, type: "host" | "hostssl" = "hostssl", db = "myapp", user = "app_user") =>
      hbaEntry(type, db, user, c);
    const ours = (c: string, type: "host" | "hostssl" = "hostssl") => hbaLine(type, "myapp", "app_user", c);
    const p1 = planHba(STOCK_HBA, [e("10.0.0.0/8")], undefined);
    expect(p1).toEqual({
      content: `${STOCK_HBA + ours("10.0.0.0/8")}\n`,
      added: [e("10.0.0.0/8")],
      removed: [],
      duplicates: [],
      owned: [e("10.0.0.0/8")],
      copies: [],
    });
    expect(planHba(p1.content, [e("10.0.0.0/8")], [e("10.0.0.0/8")])).toMatchObject({
      content: p1.content,
      added: [],
      removed: [],
      owned: [e("10.0.0.0/8")],
    });
    // allow_remote off: our recorded line goes, the admin's identical-looking line without the marker stays.
    const mixed = `${p1.content}hostssl myapp app_user 172.16.0.0/12 scram-sha-256\n`;
    expect(planHba(mixed, [], [e("10.0.0.0/8")])).toMatchObject({
      content: `${STOCK_HBA}hostssl myapp app_user 172.16.0.0/12 scram-sha-256\n`,
      added: [],
      removed: [e("10.0.0.0/8")],
      owned: [],
    });
    // The admin's line with the wanted fields counts as present and is not ours (not recorded).
    expect(
      planHba(`${STOCK_HBA}hostssl myapp app_user 10.0.0.0/8 scram-sha-256\n`, [e("10.0.0.0/8")], []),
    ).toMatchObject({ added: [], owned: [] });
    // Another database's or role's line of ours goes once the inventory lists it (dbName or dbUser changed)...
    const other = `${STOCK_HBA}hostssl    olddb    olduser    10.0.0.0/8    scram-sha-256    ${HBA_MARKER}\n`;
    expect(planHba(other, [e("10.0.0.0/8")], [e("10.0.0.0/8", "hostssl", "olddb", "olduser")])).toMatchObject({
      content: `${STOCK_HBA + ours("10.0.0.0/8")}\n`,
      removed: [e("10.0.0.0/8", "hostssl", "olddb", "olduser")],
    });
    // ...but a marked line the inventory does not list is left alone once there is an inventory.
    expect(planHba(other, [e("10.0.0.0/8")], [])).toMatchObject({
      content: `${other + ours("10.0.0.0/8")}\n`,
      removed: [],
    });
    // Before any inventory (the previous version's host lines): the marker alone makes them ours, so they
    // are replaced by hostssl.
    const old = `${STOCK_HBA}${ours("10.0.0.0/8", "host")}\n`;
    expect(planHba(old, [e("10.0.0.0/8")], undefined)).toMatchObject({
      content: `${STOCK_HBA + ours("10.0.0.0/8")}\n`,
      added: [e("10.0.0.0/8")],
      removed: [e("10.0.0.0/8", "host")],
    });
    // Before any inventory a second marked copy is dropped, not revoked; with one, the inventory's one line per
    // entry makes the other the admin's copy, which stays (install-postgres-hba-copy.test.ts).
    const twice = `${STOCK_HBA + ours("10.0.0.0/8")}\n${ours("10.0.0.0/8")}\n`;
    expect(planHba(twice, [e("10.0.0.0/8")], undefined)).toMatchObject({
      content: p1.content,
      duplicates: [e("10.0.0.0/8")],
      removed: [],
    });
    expect(planHba(twice, [e("10.0.0.0/8")], [e("10.0.0.0/8")])).toMatchObject({ content: twice, duplicates: [] });
    // A file without a final newline gets one.
    expect(planHba("local all all peer", [hbaEntry("host", "db", "u", "::1/128")], undefined).content).toBe(
      `local all all peer\nhost    db    u    ::1/128    scram-sha-256    ${HBA_MARKER}\n`,
    );
    expect(hbaFields(`host "my db" all 10.0.0.0/8 md5 # x`)).toEqual(["host", `"my db"`, "all", "10.0.0.0/8", "md5"]);
  });

  it("listen_addresses: comparison, override detection, where to verify", () => {
    expect(normalizeListen(" localhost , 10.0.0.5,")).toBe("localhost,10.0.0.5");
    expect(
      listenOverride(
        [
          { file: "/a/postgresql.conf", line: 60, setting: "localhost", error: null },
          { file: "/a/conf.d/90-vm-install.conf", line: 2, setting: "*", error: "setting could not be applied" },
        ],
        "/a/conf.d/90-vm-install.conf",
      ),
    ).toBeUndefined();
    expect(
      listenOverride(
        [
          { file: "/a/conf.d/90-vm-install.conf", line: 2, setting: "*", error: null },
          { file: "/d/postgresql.auto.conf", line: 3, setting: "x", error: null },
        ],
        "/a/conf.d/90-vm-install.conf",
      )?.file,
    ).toBe("/d/postgresql.auto.conf");
    expect(verifyHost("*")).toBe("127.0.0.1");
    expect(verifyHost("localhost,10.0.0.5")).toBe("127.0.0.1");
    expect(verifyHost("::1")).toBe("::1");
    expect(verifyHost("10.0.0.5, 10.0.0.6")).toBe("10.0.0.5");
  });

  it("quoting for psql variables", () => {
    expect(psqlMetaQuote(`a'b\\c`)).toBe(`'a''b\\\\c'`);
  });
});

describe("install-postgres: check mode (check: true) looks, reports would_change, changes nothing", () => {
  const secret = scramSecret(PW);
  const event = { ...BASE, listen_addresses: "*", allow_remote: true, allowed_cidrs: ["10.0.0.0/8"], check: true };
  const LINE = `hostssl    myapp    app_user    10.0.0.0/8    scram-sha-256    ${HBA_MARKER}\n`;
  const asWanted = (over: Partial<ServerState> = {}) =>
    serverState({
      listen_addresses: "*",
      role: { login: true, superuser: false, secret },
      database: { owner: "app_user" },
      hba_text: STOCK_HBA + LINE,
      dropin_text: dropInContent("*"),
      ...over,
    });
  const RECORDED = {
    version: 1,
    postgres: {
      hba: { [HBA_FILE]: ["hostssl myapp app_user 10.0.0.0/8 scram-sha-256"] },
      roles: { "14/main": ["app_user"] },
    },
  };

  /**
   * Nothing the check sent could change the VM: no command marked as a change, no apt-get, service,
   * cluster or file command (the login check's pgpass in /dev/shm, unlinked at once, aside), no changing SQL.
   */
  function expectLookedOnly(calls: Call[]) {
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.filter((c) => c.opts.mutates).map((c) => c.command)).toEqual([]);
    expect(
      calls
        .filter((c) =>
          /apt-get|systemctl (start|restart|reload|stop)|pg_createcluster|mktemp (?!-d[ )])|rm -f /.test(c.command),
        )
        .map((c) => c.command),
    ).toEqual([]);
    expect(
      calls.filter((c) => /CREATE|ALTER|NOLOGIN|pg_reload_conf/.test(String(c.opts.stdin ?? ""))).map((c) => c.command),
    ).toEqual([]);
  }
  const loggedIn = (remote: { tunnels: unknown[] }) => remote.tunnels.length > 0;

  it("all as wanted: would_change is empty, and the TCP login check ran and is reported", async () => {
    const { result, error, remote } = await run(event, [
      osStep(),
      installed14(),
      grantsRead(RECORDED),
      inspectSqlStep(asWanted()),
      loginStep(),
    ]);
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
      osStep(),
      installed14(),
      grantsRead(RECORDED),
      inspectSqlStep(asWanted()),
      loginStep("127.0.0.1", { password: "the password before someone changed it" }),
    ]);
    expect(remote.done).toBe(true);
    expectLookedOnly(remote.calls);
    expect(error?.message).toMatch(
      /^install-postgres failed while checking \(check mode: nothing is changed\): app_user could not log in to myapp over TCP at 127\.0\.0\.1:5432: .*password authentication failed/,
    );
  });

  it(
    "database dropped and password changed by hand: both foreseen in a real run's words; no changing psql, no " +
      "login check",
    async () => {
      const { result, error, remote } = await run(event, [
        osStep(),
        installed14(),
        grantsRead(RECORDED),
        inspectSqlStep(
          asWanted({
            database: null,
            role: { login: true, superuser: false, secret: scramSecret("set by hand, not PW") },
          }),
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
          ...asWanted({ hba_text: STOCK_HBA }),
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
      osStep(),
      installed14(),
      grantsRead(RECORDED),
      inspectSqlStep(asWanted()),
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
      osStep(),
      installed14(),
      grantsRead(RECORDED),
      inspectSqlStep(asWanted({ listen_addresses: "localhost", dropin_text: null })),
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

  it("another major (PGDG): the repository line and the package, with nothing fetched or written", async () => {
    const { result, error, remote } = await run({ ...BASE, pg_version: "16", check: true }, [
      osStep(DEBIAN_12),
      inspectStep(),
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expectLookedOnly(remote.calls);
    expect(remote.calls.some((c) => /curl/.test(c.command))).toBe(false);
    expect(result!.would_change).toEqual([
      "PGDG repository: https://apt.postgresql.org/pub/repos/apt bookworm-pgdg main set up where it differs " +
        "(its key from https://www.postgresql.org/media/keys/ACCC4CF8.asc, checked against repo_key_fingerprint; " +
        "a check neither fetches the key nor reads the files it would write)",
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
    const { error, remote } = await run(event, [
      osStep(),
      installed14(),
      grantsRead(RECORDED),
      inspectSqlStep(asWanted({ ssl: "off" })),
    ]);
    expect(remote.done).toBe(true);
    expectLookedOnly(remote.calls);
    expect(error?.message).toMatch(
      /^install-postgres failed while checking \(check mode: nothing is changed\): ssl is off on the server/,
    );
  });
});
