// install-postgres' exchanges with the scripted SSH double, as the handler tests script them: what the tools
// print on Ubuntu 22.04 (PostgreSQL 14, the stock pg_hba.conf), the server look's state, and one builder per
// exec the job makes (os, installation look, psql, the configuration exec, the look after a restart, the
// login). Shared so each suite states only how its VM differs.
import type { InstallerDeps } from "../../../handlers/common/handler-kit";
import { handler } from "../../../handlers/install-postgres/handler";
import { dropInContent, HBA_MARKER, type ServerState } from "../../../handlers/install-postgres/pg";
import { scramSecret } from "../../../handlers/install-postgres/scram";
import { INSTALLATION_LOOK } from "../../../handlers/install-postgres/server";
import { configWriteOf } from "./config-write";
import { UBUNTU_2204 } from "./fixtures";
import { grantsRead } from "./grants-steps";
import { listenerStep } from "./listener-look";
import { listingAnswer } from "./postgres-listing";
import { PW } from "./postgres-password";
import { renameOf } from "./remote-writes";
import { runScripted } from "./run-scripted";
import type { Step } from "./scripted-remote";

export const run = (event: unknown, script: Step[], deps: Partial<InstallerDeps> = {}) =>
  runScripted(handler, event, script, deps);

export const STOCK_HBA = `# PostgreSQL Client Authentication Configuration File
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

export const PG14_PKG =
  "postgresql-14\tinstall ok installed\t14.11-0ubuntu0.22.04.1\npostgresql-9.1\tunknown ok not-installed\t\n";
const PG14_CLUSTER =
  "14  main    5432 online postgres /var/lib/postgresql/14/main /var/log/postgresql/postgresql-14-main.log\n";

export function serverState(over: Partial<ServerState> = {}): ServerState {
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

/** The server look of another major's main cluster (`version` as the server names itself), as apt leaves it. */
export const majorState = (major: string, version: string): ServerState =>
  serverState({
    server_version: version,
    hba_file: `/etc/postgresql/${major}/main/pg_hba.conf`,
    config_file: `/etc/postgresql/${major}/main/postgresql.conf`,
  });

export const DROPIN = "/etc/postgresql/14/main/conf.d/90-vm-install.conf";
export const HBA_FILE = "/etc/postgresql/14/main/pg_hba.conf";
export const BASE = { db_name: "myapp", db_user: "app_user", db_password: PW };
export const WHO = { user: "app_user", database: "myapp", server_version: "14.11 (Ubuntu 14.11-0ubuntu0.22.04.1)" };

export const osStep = (text = UBUNTU_2204): Step => ({
  match: "cat /etc/os-release",
  sudo: false,
  facts: { os_release: text },
});
/** inspectInstallation: dpkg-query of the server packages, then clusters and their units when there are any. */
export const inspectStep = (pkgs = "", clusters?: string, units?: string): Step => ({
  match: INSTALLATION_LOOK.script,
  sudo: false,
  stdout: listingAnswer(INSTALLATION_LOOK.script, { packages: pkgs, clusters, units: units ?? "" }),
});
export const installed14 = (unit = "active") => inspectStep(PG14_PKG, PG14_CLUSTER, `postgresql@14-main ${unit}\n`);
/** The installation look of another major's server package (`version`), its main cluster online and active. */
export const majorInstalled = (major: string, version: string) =>
  inspectStep(
    `postgresql-${major}\tinstall ok installed\t${version}\n`,
    `${major} main 5432 online postgres /var/lib/postgresql/${major}/main ` +
      `/var/log/postgresql/postgresql-${major}-main.log\n`,
    `postgresql@${major}-main active\n`,
  );

/**
 * ensurePackages([pkg]) on a VM without it: dpkg's look, apt-get update, the candidate (`version`), the install
 * (with `installCheck` on its call), then dpkg's word that `version` is in.
 */
export function aptInstallSteps(pkg: string, version: string, installCheck?: Step["check"]): Step[] {
  const dpkg = new RegExp(`^dpkg-query -W -f=\\S+ ${pkg}$`);
  const install: Step = { match: new RegExp(`^apt-get install -y -q .*--force-confold ${pkg}$`), sudo: true };
  return [
    { match: dpkg, sudo: false, code: 1 },
    { match: /^apt-get update /, sudo: true },
    {
      match: `apt-cache policy ${pkg}`,
      sudo: false,
      stdout: `${pkg}:\n  Installed: (none)\n  Candidate: ${version}\n  Version table:\n     ${version} 500\n`,
    },
    installCheck ? { ...install, check: installCheck } : install,
    { match: dpkg, sudo: false, stdout: `${pkg}\tinstall ok installed\t${version}\n` },
  ];
}

const PSQL = "cd / && psql -X -q -A -t -v ON_ERROR_STOP=1 -p 5432 -d postgres -f -";
/** A psql run as postgres with SQL on stdin; `sql` must appear in that stdin. */
export const psqlStep = (sql: string | RegExp, stdout: unknown = "", extra: Partial<Step> = {}): Step => ({
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
export const inspectSqlStep = (state: ServerState) =>
  psqlStep(/SELECT json_build_object\(\n {2}'server_version'/, state);

/** The server's check of the files written, all well: the drop-in's listen_addresses is the one in effect. */
const CHECKED = { listen: [{ file: DROPIN, line: 2, setting: "*", error: null }], config_errors: [], hba_errors: [] };
/**
 * The configuration exec (configuration.ts writeConfiguration), one as postgres: `files` written in order, each
 * from its bytes of stdin (its content checked), then the server's check, answering `over`.
 */
export const configStep = (files: [string, ((content: string) => void)?][], over: object = {}): Step => ({
  match: /^\{ (m=|export PGCLIENTENCODING=UTF8 LC_MESSAGES=C; echo )/,
  sudo: false,
  stdout: `${JSON.stringify({ ...CHECKED, ...over })}\n`,
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
export const settledStep = (listen: string, pending: string[], login: Step): Step => ({
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
export const writeStep = (path: string, check?: (stdin: string) => void): Step => ({
  match: renameOf(path),
  sudo: false,
  check: (_c, o) => {
    expect(o.user).toBe("postgres");
    check?.(String(o.stdin));
  },
});
/**
 * The login check: the look at the port's listeners (the postmaster), then SCRAM with a server whose role has
 * `password`.
 */
export const loginStep = (host = "127.0.0.1", opts: { who?: object; password?: string } = {}): Step =>
  listenerStep(host, { tunnel: { password: opts.password ?? PW, who: JSON.stringify(opts.who ?? WHO) } });

// ---------------------------------------------------------------------------------------------------
// A VM where install-postgres already ran with OPEN_EVENT: the reruns', the take-backs' and the checks' start.

/** Open to 10.0.0.0/8 on every address. */
export const OPEN_EVENT = { ...BASE, listen_addresses: "*", allow_remote: true, allowed_cidrs: ["10.0.0.0/8"] };
/** What OPEN_EVENT's first run recorded: its line and the role it created. */
export const RECORDED = {
  version: 1,
  postgres: {
    hba: { [HBA_FILE]: ["hostssl myapp app_user 10.0.0.0/8 scram-sha-256"] },
    roles: { "14/main": ["app_user"] },
  },
};
/** The pg_hba.conf line OPEN_EVENT's run appended. */
const OUR_LINE = `hostssl    myapp    app_user    10.0.0.0/8    scram-sha-256    ${HBA_MARKER}\n`;
/** PW's SCRAM verifier, as the first run stored it. */
export const SECRET = scramSecret(PW);
/** The server as OPEN_EVENT's run left it: listening everywhere, the role with PW, its database, our line. */
export const configured = (over: Partial<ServerState> = {}) =>
  serverState({
    listen_addresses: "*",
    role: { login: true, superuser: false, secret: SECRET },
    database: { owner: "app_user" },
    hba_text: STOCK_HBA + OUR_LINE,
    dropin_text: dropInContent("*"),
    ...over,
  });
/** A run's looks on a VM with 14/main running: os, installation, the inventory (none: no file), the server. */
export const installedLook = (state: ServerState, inventory?: object): Step[] => [
  osStep(),
  installed14(),
  grantsRead(inventory),
  inspectSqlStep(state),
];
