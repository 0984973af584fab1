// install-postgres and the values it reads from the VM or is given (issue 17): cluster names from
// pg_lsclusters, the paths the server names, a role's stored SCRAM verifier, listen_addresses (the text at
// synth and in the event, and a host name's addresses on the VM), the grants inventory, and where the
// TCP login check keeps the password. Every value is attacked by class, as the VM's own users could: a
// database superuser (owns /etc/postgresql/<major>/<name>), the application's role (sets its own
// password verifier), a hand edit of the root-only inventory.
import * as crypto from "node:crypto";

// PBKDF2 watched: every iteration count the job computes is recorded, and any count above the ceiling
// returns at once (the unfixed code would stall the test for minutes on 2^31-1).
jest.mock("node:crypto", () => {
  const real = jest.requireActual("node:crypto");
  return { ...real, pbkdf2Sync: jest.fn(real.pbkdf2Sync) };
});

import { rootFact } from "../../handlers/common/vm-facts";
import { canonicalIp, listenNameProblems, nameCheckFrom, nameProbes } from "../../handlers/install-postgres/addresses";
import { planRoles } from "../../handlers/install-postgres/grants";
import { handler } from "../../handlers/install-postgres/handler";
import {
  dropInContent,
  HBA_MARKER,
  parseClusters,
  type RecordedRole,
  type ServerState,
  verifyHost,
} from "../../handlers/install-postgres/pg";
import {
  iterationCap,
  MAX_SCRAM_ITERATIONS,
  scramSecret,
  storedPasswordState,
} from "../../handlers/install-postgres/scram";
import { INSTALLATION_LOOK, installationLook } from "../../handlers/install-postgres/server";
import { applySql, inspectSql, revokeLoginSql } from "../../handlers/install-postgres/sql";
import { parseConfig } from "../../lib/construct/config/parse";
import { isCidr, isHostAddress, isIpv6, listenAddresses } from "../../lib/shared/names";
import { context } from "../support/synth";
import { UBUNTU_2204 } from "./support/fixtures";
import { grantsRead, grantsWrite } from "./support/grants-steps";
import { listenerStep, POSTMASTER_PID, ssLine } from "./support/listener-look";
import { type Listing, listingAnswer } from "./support/postgres-listing";
import { runScripted } from "./support/run-scripted";
import type { ScriptedRemote, Step } from "./support/scripted-remote";

const PW = "Tok3n-values 'q' \\ $x";
const BASE = { db_name: "myapp", db_user: "app_user", db_password: PW };
const run = (event: unknown, script: Step[]) => runScripted(handler, event, script);

const STOCK_HBA = "local all postgres peer\nhost all all 127.0.0.1/32 scram-sha-256\n";
const HBA_FILE = "/etc/postgresql/14/main/pg_hba.conf";
const PG14_PKG = "postgresql-14\tinstall ok installed\t14.11-0ubuntu0.22.04.1\n";
const MAIN =
  "14  main    5432 online postgres /var/lib/postgresql/14/main /var/log/postgresql/postgresql-14-main.log\n";
const osStep = (): Step => ({ match: "cat /etc/os-release", sudo: false, facts: { os_release: UBUNTU_2204 } });
/** The installation look (server.ts): `units` is its units probe's output, `hidden` the directories counted. */
const inspectStep = (clusters: string, units: string, hidden = 0): Step => ({
  match: "pg_lsclusters -h",
  sudo: false,
  stdout: listingAnswer(INSTALLATION_LOOK.script, { packages: PG14_PKG, clusters, units, hidden }),
});
const PSQL = "cd / && psql -X -q -A -t -v ON_ERROR_STOP=1 -p 5432 -d postgres -f -";
const psqlStep = (sql: RegExp, stdout: unknown = "", extra: Partial<Step> = {}): Step => ({
  match: PSQL,
  sudo: false,
  stdout: typeof stdout === "string" ? stdout : `${JSON.stringify(stdout)}\n`,
  ...extra,
  check: (c, o) => {
    expect(String(o.stdin)).toMatch(sql);
    extra.check?.(c, o);
  },
});
const WHO = { user: "app_user", database: "myapp", server_version: "14.11" };
/** The login check: the postmaster listens on `host`, and SCRAM with a server whose role has PW. */
const loginStep = (host = "127.0.0.1"): Step =>
  listenerStep(host, { tunnel: { password: PW, who: JSON.stringify(WHO) } });

function state(over: Partial<ServerState> = {}): ServerState {
  return {
    server_version: "14.11 (Ubuntu 14.11-0ubuntu0.22.04.1)",
    hba_file: HBA_FILE,
    config_file: "/etc/postgresql/14/main/postgresql.conf",
    listen_addresses: "localhost",
    pending_restart: [],
    role: { login: true, superuser: false, secret: scramSecret(PW) },
    database: { owner: "app_user" },
    hba_text: STOCK_HBA,
    dropin_text: null,
    ssl: "on",
    ...over,
  };
}
const inspectSqlStep = (s: ServerState) => psqlStep(/SELECT json_build_object\(\n {2}'server_version'/, s);

// ---------------------------------------------------------------------------------------------------
// Cluster names (and the other columns) of pg_lsclusters.

/**
 * Names a database superuser can give /etc/postgresql/<major>/main by renaming it; none is one
 * pg_createcluster accepts.
 */
const HOSTILE_TOKENS = [
  "x$(id)",
  "x$(touch${IFS}/tmp/pwned)",
  "x;id",
  "x`id`",
  "x'y",
  'x"y',
  "x|id",
  "x&id",
  "x>y",
  "x*",
  "ü",
  "x\\y",
  "$HOME",
];
/** Names that break the columns (blanks, line breaks): the listing itself cannot be trusted then. */
const HOSTILE_SHAPES = [
  "x$(touch /tmp/pwned)",
  "x;touch /tmp/pwned",
  "x y",
  "x\ny",
  "x\ty",
  "x\n14 main 5432 online postgres /var/lib/postgresql/14/main /etc/shadow",
];
const line = (name: string) =>
  `14  ${name}    5432 online postgres /var/lib/postgresql/14/main /var/log/postgresql/postgresql-14-main.log\n`;
const unitLine = (name: string) => `postgresql@14-${name} active\n`;

describe("install-postgres: cluster names read from the VM", () => {
  it.each(HOSTILE_TOKENS)(
    "the only cluster renamed to %j: refused, naming it, before any other command",
    async (name) => {
      const { error, remote } = await run(BASE, [osStep(), inspectStep(line(name), unitLine(name))]);
      expect(remote.done).toBe(true);
      // One exec: the kit's first look, which reads the installation look's probes (postgresFirstLook).
      expect(remote.calls).toHaveLength(1);
      expect(error?.message).toContain("refusing the PostgreSQL 14 cluster pg_lsclusters lists");
      expect(error?.message).toContain(`name ${JSON.stringify(name)} is not one pg_createcluster accepts`);
      expect(error?.message).toMatch(
        /rename the directory under \/etc\/postgresql\/<version>\/ back to such a name .*Nothing was changed/,
      );
    },
  );

  it.each(HOSTILE_SHAPES)("a name with blanks or line breaks (%j): the whole listing is refused", async (name) => {
    for (const clusters of [line(name), MAIN + line(name)]) {
      const { error, remote } = await run(BASE, [osStep(), inspectStep(clusters, unitLine(name) + unitLine("main"))]);
      expect(remote.calls).toHaveLength(1);
      expect(error?.message).toMatch(
        /pg_lsclusters printed (a line|lines) this installer cannot read as a cluster: .*no line of the listing can be trusted/,
      );
    }
  });

  it.each(HOSTILE_TOKENS)(
    "a cluster %j beside main: main is used, the other skipped with a warning, never named in a command",
    async (name) => {
      const { result, error, remote } = await run({ ...BASE, listen_addresses: "*" }, [
        osStep(),
        inspectStep(MAIN + line(name), unitLine("main") + unitLine(name)),
        grantsRead(),
        inspectSqlStep(state({ listen_addresses: "*", dropin_text: dropInContent("*") })),
        loginStep(),
      ]);
      expect(error).toBeUndefined();
      expect(remote.done).toBe(true);
      expect(result?.cluster).toBe("14/main");
      expect(result?.warnings[0]).toContain(`: name ${JSON.stringify(name)} is not one pg_createcluster accepts`);
      expect(result?.warnings).toEqual([
        expect.stringMatching(/^skipped a cluster pg_lsclusters lists, never used by this installer: "14 {2}/),
      ]);
      for (const c of remote.calls.slice(2)) expect(c.command).not.toContain(name);
    },
  );

  it(
    "a cluster directory pg_lsclusters does not list (a line break in its name) is still found: the run is " +
      "refused, no cluster created beside it",
    async () => {
      for (const clusters of ["", MAIN]) {
        const { error, remote } = await run(BASE, [
          osStep(),
          inspectStep(clusters, clusters ? unitLine("main") : "", 1),
        ]);
        expect(remote.calls).toHaveLength(1);
        expect(remote.calls[0].command).toContain(
          `for f in /etc/postgresql/*/*/postgresql.conf; do [ -e "$f" ] || [ -L "$f" ] || ` +
            `continue; n=\${f%/postgresql.conf}; n=\${n##*/}; case "$n" in *[[:space:][:cntrl:]]*) echo hidden;; ` +
            "esac; done",
        );
        expect(error?.message).toMatch(
          /a cluster directory under \/etc\/postgresql\/<version>\/ has a name with blanks, tabs or line breaks, .*no cluster is created beside it.*Nothing was changed/,
        );
      }
    },
  );

  it("check mode refuses and skips the same way", async () => {
    const name = "x$(id)";
    const refused = await run({ ...BASE, check: true }, [osStep(), inspectStep(line(name), unitLine(name))]);
    expect(refused.error?.message).toMatch(
      /^install-postgres failed while checking .*refusing the PostgreSQL 14 cluster/,
    );
    const skipped = await run({ ...BASE, check: true }, [
      osStep(),
      inspectStep(MAIN + line(name), unitLine("main")),
      grantsRead(),
      inspectSqlStep(state()),
      loginStep(),
    ]);
    expect(skipped.error).toBeUndefined();
    expect(skipped.result?.warnings).toEqual([expect.stringContaining("skipped a cluster pg_lsclusters lists")]);
  });

  it("names pg_createcluster accepts (dashes, dots, digits, capitals) are used, their unit quoted-safe", async () => {
    const { result, error, remote } = await run({ ...BASE, listen_addresses: "*" }, [
      osStep(),
      inspectStep(line("My-cluster.2"), "postgresql@14-My-cluster.2 inactive\n"),
      { match: "(systemctl start postgresql@14-My-cluster.2 & p=$!", sudo: true },
      { match: "systemctl is-active postgresql@14-My-cluster.2", stdout: "active\n" },
      grantsRead(),
      inspectSqlStep(state({ listen_addresses: "*", dropin_text: dropInContent("*") })),
      loginStep(),
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(result?.cluster).toBe("14/My-cluster.2");
  });

  it(
    "every column has its rule: version, port, status, " + "owner, data directory; an unusable log path is not used",
    () => {
      const row = (f: Partial<Record<"v" | "n" | "p" | "s" | "o" | "d" | "l", string>>) =>
        `${f.v ?? "15"} ${f.n ?? "main"} ${f.p ?? "5432"} ${f.s ?? "online"} ${f.o ?? "postgres"} ` +
        `${f.d ?? "/var/lib/postgresql/15/main"} ${f.l ?? "/var/log/postgresql/postgresql-15-main.log"}\n`;
      const refused = (f: Parameters<typeof row>[0]) => parseClusters(row(f)).refused.map((r) => r.reason);
      expect(parseClusters(row({})).clusters).toHaveLength(1);
      for (const v of ["15x", "1", "115", "15.", "$(id)"]) expect(parseClusters(row({ v })).clusters).toEqual([]);
      for (const p of ["0", "65536", "05432", "<unknown>", "5432;id"])
        expect(refused({ p })).toEqual([expect.stringMatching(/^port .* is not a TCP port$/)]);
      for (const n of [".", "..", "x:y", "x/y"])
        expect(refused({ n })).toEqual([expect.stringMatching(/^name .* is not one pg_createcluster accepts/)]);
      expect(refused({ s: "online;id" })).toEqual([expect.stringMatching(/^status/)]);
      expect(refused({ o: "$(id)" })).toEqual([expect.stringMatching(/^owner/)]);
      for (const d of ["relative/dir", "/var/lib/$(id)", "/var/lib/../../etc"])
        expect(refused({ d })).toEqual([expect.stringMatching(/^data directory/)]);
      // The log column: Debian's place is used; "<unknown>", syslog, a relative logging_collector path or
      // any other file (root reads it when the server fails) are not, and the cluster is still usable.
      for (const l of [
        "<unknown>",
        "syslog",
        "log/postgresql-%Y-%m-%d_%H%M%S.log",
        "/etc/shadow",
        "/var/log/postgresql/../../../etc/shadow",
        "/var/log/postgresql/$(id)",
      ]) {
        const { clusters } = parseClusters(row({ l }));
        expect(clusters).toHaveLength(1);
        expect(clusters[0].logFile).toBeUndefined();
      }
      // A version 9.x cluster reads too.
      expect(parseClusters(row({ v: "9.6" })).clusters[0].major).toBe("9.6");
    },
  );

  it(
    "a path the server names that is not plain (ALTER " + "SYSTEM SET hba_file) stops the run before any change",
    async () => {
      for (const bad of [
        { hba_file: "/etc/postgresql/14/main/pg_hba.conf; id" },
        { config_file: "/etc/$(id)/postgresql.conf" },
        { hba_file: "relative.conf" },
      ]) {
        const { error, remote } = await run({ ...BASE, allow_remote: true, allowed_cidrs: ["10.0.0.0/8"] }, [
          osStep(),
          inspectStep(MAIN, unitLine("main")),
          grantsRead(),
          inspectSqlStep(state({ role: null, ...bad })),
        ]);
        expect(remote.done).toBe(true);
        expect(error?.message).toMatch(
          /the server reports (hba_file|config_file) .*, not a plain absolute path .*Nothing was changed/,
        );
      }
    },
  );
});

// ---------------------------------------------------------------------------------------------------
// The stored SCRAM verifier: any role may set its own.

describe("install-postgres: a stored SCRAM verifier is read before any of it is computed", () => {
  const salt = Buffer.alloc(16, 7).toString("base64");
  const key = Buffer.alloc(32, 9).toString("base64");
  const verifier = (iterations: string, s = salt, k1 = key, k2 = key) => `SCRAM-SHA-256$${iterations}:${s}$${k1}:${k2}`;
  const pbkdf2 = crypto.pbkdf2Sync as unknown as jest.Mock;
  const counts = () => pbkdf2.mock.calls.map((c) => c[2] as number);
  beforeEach(() => {
    const real = jest.requireActual("node:crypto").pbkdf2Sync;
    pbkdf2.mockReset();
    // A literal, not MAX_SCRAM_ITERATIONS: the watch must hold against code that has no such constant.
    pbkdf2.mockImplementation((pw, s, n, len, digest) =>
      n > 1_000_000 ? Buffer.alloc(len) : real(pw, s, n, len, digest),
    );
  });

  it.each([
    ["2^31-1", "2147483647"],
    ["2^53", "9007199254740992"],
    ["beyond any integer", "99999999999999999999999"],
    ["just above the cap", "4097"],
    ["zero", "0"],
    ["negative", "-1"],
    ["not numeric", "abc"],
    ["empty", ""],
    ["a fraction", "4096.5"],
    ["an exponent", "4e3"],
    ["leading blank", " 4096"],
    ["leading zero", "04096"],
    ["hex", "0x1000"],
  ])("iterations %s (%j): never computed, 'different', so the password is set again", (_what, iterations) => {
    expect(storedPasswordState(verifier(iterations), PW, "app_user")).toBe("different");
    expect(counts()).toEqual([]);
  });

  it.each([
    ["a salt that is not base64", verifier("4096", "not*base64")],
    ["an empty salt", verifier("4096", "")],
    ["a salt without its padding", verifier("4096", salt.replace(/=+$/, ""))],
    ["a non-canonical salt", verifier("4096", "QR==")],
    ["a salt of 65 bytes", verifier("4096", Buffer.alloc(65).toString("base64"))],
    ["a StoredKey of 31 bytes", verifier("4096", salt, Buffer.alloc(31).toString("base64"))],
    ["a ServerKey of 33 bytes", verifier("4096", salt, key, Buffer.alloc(33).toString("base64"))],
    ["a missing ServerKey", `SCRAM-SHA-256$4096:${salt}$${key}`],
    ["a 100 kB verifier", verifier("4096", Buffer.alloc(75_000).toString("base64"))],
    ["a newline in it", verifier("4096", salt, key, `${key}\n`)],
  ])("%s: never computed, 'different'", (_what, text) => {
    expect(storedPasswordState(text, PW, "app_user")).toBe("different");
    expect(counts()).toEqual([]);
  });

  it("a verifier within the cap is still checked: same and different as before", () => {
    const mine = scramSecret(PW);
    expect(storedPasswordState(mine, PW, "app_user")).toBe("same");
    expect(storedPasswordState(scramSecret(PW, Buffer.alloc(16, 1), 1), PW, "app_user")).toBe("same");
    expect(storedPasswordState(scramSecret("other", Buffer.alloc(16, 1)), PW, "app_user")).toBe("different");
    expect(counts().length).toBeGreaterThan(0); // the watch sees PBKDF2 (control)
    expect(counts().every((n) => n <= 4096)).toBe(true);
  });

  it("the cap follows the server's scram_iterations (PostgreSQL 16+) between 4096 and the ceiling", () => {
    expect([
      iterationCap(undefined),
      iterationCap(null),
      iterationCap("1000"),
      iterationCap("10000"),
      iterationCap("2147483647"),
      iterationCap("x"),
    ]).toEqual([4096, 4096, 4096, 10000, MAX_SCRAM_ITERATIONS, 4096]);
    const tenK = scramSecret(PW, Buffer.alloc(16, 2), 10000);
    expect(storedPasswordState(tenK, PW, "app_user", iterationCap("10000"))).toBe("same");
    expect(storedPasswordState(tenK, PW, "app_user", iterationCap(null))).toBe("different");
  });

  it("a run that finds 2^31-1 iterations sets the password again, says why, and takes no time over it", async () => {
    const started = Date.now();
    const { result, error, remote } = await run(BASE, [
      osStep(),
      inspectStep(MAIN, unitLine("main")),
      grantsRead(),
      inspectSqlStep(state({ role: { login: true, superuser: false, secret: verifier("2147483647") } })),
      psqlStep(/\\set pw 'SCRAM-SHA-256\$4096:/),
      loginStep(),
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(result?.changes).toEqual([
      "password of app_user set again: its stored SCRAM-SHA-256 verifier was not checked (its iteration count " +
        "2147483647 is above the 4096 this installer computes), so it is replaced",
    ]);
    expect(counts().every((n) => n <= 4096)).toBe(true);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(inspectSql("d", "u", "x")).toContain("'scram_iterations', current_setting('scram_iterations', true)");
  });
});

// ---------------------------------------------------------------------------------------------------
// listen_addresses: the text (synth and event), then a name's addresses on the VM.

describe("install-postgres: listen_addresses are IP literals or names that are the VM's own", () => {
  const accepted = [
    "*",
    "localhost",
    "10.0.0.5",
    "0.0.0.0",
    "255.255.255.255",
    "::",
    "::1",
    "2001:db8::1",
    "1:2:3:4:5:6:7:8",
    "1::8",
    "1:2:3:4:5:6:7::",
    "::ffff:10.0.0.5",
    "1:2:3:4:5:6:10.0.0.5",
    "FE80::ABCD",
    "db.internal",
    "db-1.example.com",
    "localhost,10.0.0.5, ::1",
  ];
  const refused: [string, string, RegExp][] = [
    ["integer", "0", /is not a dotted-quad IPv4 address/],
    ["integer", "2130706433", /is not a dotted-quad IPv4 address/],
    ["hex", "0x7f000001", /is not a dotted-quad IPv4 address/],
    ["hex parts", "0x7f.0.0.1", /is not a dotted-quad IPv4 address/],
    ["octal", "0177.0.0.1", /is not a dotted-quad IPv4 address/],
    ["leading zero", "10.0.0.05", /is not a dotted-quad IPv4 address/],
    ["short form", "127.1", /is not a dotted-quad IPv4 address/],
    ["short form", "10.1.2", /is not a dotted-quad IPv4 address/],
    ["out of range", "256.0.0.1", /is not a dotted-quad IPv4 address/],
    ["five parts", "1.2.3.4.5", /is not a dotted-quad IPv4 address/],
    ["CIDR", "10.0.0.0/8", /is a network \(CIDR\)/],
    ["IPv6 CIDR", ":::/64", /is a network \(CIDR\)/],
    ["IPv6 CIDR", "2001:db8::/32", /is a network \(CIDR\)/],
    ["zone id", "fe80::1%eth0", /has a zone id/],
    ["three colons", ":::", /is not an IPv6 address/],
    ["two ::", "1::2::3", /is not an IPv6 address/],
    ["nine groups", "1:2:3:4:5:6:7:8:9", /is not an IPv6 address/],
    ["seven groups", "1:2:3:4:5:6:7", /is not an IPv6 address/],
    ["five hex digits", "12345::1", /is not an IPv6 address/],
    ["not hex", "gggg::1", /is not an IPv6 address/],
    ["a leading single colon", ":1:2:3:4:5:6:7", /is not an IPv6 address/],
    ["IPv4 not last", "::1.2.3.4:5", /is not an IPv6 address/],
    ["IPv4 before ::", "1.2.3.4::", /is not an IPv6 address/],
    ["all-numeric last label", "db.123", /is not a dotted-quad IPv4 address|is not an IP address or a host name/],
    ["a name ending in a digit label", "host.0x10", /is not an IP address or a host name/],
    ["an empty item", "localhost,,10.0.0.5", /an empty item/],
    ["a trailing comma", "localhost,", /an empty item/],
    ["shell", "*'; x", /is not an IP address or a host name/],
    ["blank inside", "db internal", /is not an IP address or a host name/],
    ["a quoted item", '"localhost"', /is not an IP address or a host name/],
  ];

  it.each(accepted)("%j is accepted at synth and in the event", (v) => {
    const problems: string[] = [];
    listenAddresses(v, "listen_addresses", problems);
    expect(problems).toEqual([]);
  });

  it.each(refused)("%s %j is refused at synth (config) and in the event, saying why", async (_what, v, why) => {
    const cfg = (() => {
      try {
        parseConfig(context({ installers: { postgres: { listenAddresses: v } } }));
        return [];
      } catch (err) {
        return (err as { problems?: string[] }).problems ?? [String(err)];
      }
    })();
    expect(cfg).toEqual([
      expect.stringMatching(
        /^installers\.postgres\.listenAddresses: .* is not "\*" or a comma-separated list of IP addresses and host names: /,
      ),
    ]);
    expect(cfg[0]).toMatch(why);
    const { error, connects } = await run({ ...BASE, listen_addresses: v }, []);
    expect(connects).toBe(0);
    expect(error?.message).toMatch(/event listen_addresses: .* is not "\*" or a comma-separated list/);
    expect(error?.message).toMatch(why);
  });

  it("the same IPv6 rule holds for allowed_cidrs and VM addresses", () => {
    expect([isCidr(":::/64"), isCidr("1::2::3/64"), isCidr("::/0"), isCidr("2001:db8::/32")]).toEqual([
      false,
      false,
      true,
      true,
    ]);
    expect([isIpv6("::"), isIpv6("::ffff:1.2.3.4"), isIpv6("1:2:3:4:5:6:7:8:9"), isIpv6(":::")]).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect([isHostAddress("vm1.example.com"), isHostAddress("2130706433"), isHostAddress("0x7f000001")]).toEqual([
      true,
      false,
      false,
    ]);
  });

  it("addresses compare in one form: IPv6 expanded, IPv4-mapped as IPv4", () => {
    expect(canonicalIp("2001:DB8::1")).toBe("2001:0db8:0000:0000:0000:0000:0000:0001");
    expect(canonicalIp("::ffff:10.0.0.5")).toBe("10.0.0.5");
    expect(canonicalIp("::ffff:a00:5")).toBe("10.0.0.5");
    expect(canonicalIp("1:2:3:4:5:6:10.0.0.5")).toBe("0001:0002:0003:0004:0005:0006:0a00:0005");
    expect(canonicalIp("2130706433")).toBeUndefined();
  });

  const IP_ADDR = [
    "1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever",
    "1: lo    inet6 ::1/128 scope host \\       valid_lft forever preferred_lft forever",
    "2: eth0    inet 10.0.0.5/24 brd 10.0.0.255 scope global eth0\\       valid_lft forever preferred_lft forever",
    "2: eth0    inet6 2001:db8::5/64 scope global \\       valid_lft forever preferred_lft forever",
  ].join("\n");
  /** The installation look with `names`, answered: each name's addresses (getent ahosts), the VM's own. */
  const answer = (names: Record<string, string[]>, own = IP_ADDR, over: Partial<Listing> = {}) =>
    listingAnswer(installationLook(Object.keys(names)).script, { packages: "", resolved: names, own, ...over });
  const nameCheck = (names: Record<string, string[]>, own?: string) => {
    const look = installationLook(Object.keys(names));
    const facts = look.parse(answer(names, own));
    return nameCheckFrom((n) => rootFact(facts.get(n), "the test"), Object.keys(names));
  };

  const PG14 = { packages: PG14_PKG, clusters: MAIN, units: unitLine("main") };

  it(
    "a name is the VM's own only when every address it " + "resolves to is (loopback counts; hostname -I works too)",
    () => {
      const check = (names: Record<string, string[]>, own?: string) => listenNameProblems(nameCheck(names, own));
      expect(check({ "db.internal": ["10.0.0.5", "10.0.0.5", "2001:db8:0::5"] })).toEqual([]);
      expect(check({ "lo.internal": ["127.0.1.1", "::1"] })).toEqual([]);
      expect(check({ "db.internal": ["10.0.0.5"] }, "10.0.0.5 2001:db8::5")).toEqual([]);
      expect(check({ "db.internal": ["10.0.0.5", "203.0.113.9"] })).toEqual([
        "db.internal resolves on the VM to 203.0.113.9, which is not an address of the VM (its own: 127.0.0.1, " +
          "::1, 10.0.0.5, 2001:db8::5)",
      ]);
      expect(check({ "gone.internal": [] })).toEqual([
        "gone.internal does not resolve on the VM (getent ahosts gone.internal found no address)",
      ]);
      expect(nameProbes(["db.internal", "x-1.internal"])).toEqual([
        expect.objectContaining({ name: "name:0", command: "getent ahosts db.internal", writer: "root" }),
        expect.objectContaining({ name: "name:1", command: "getent ahosts x-1.internal", writer: "root" }),
        expect.objectContaining({ name: "own", command: "ip -o addr show || hostname -I", writer: "root" }),
      ]);
    },
  );

  it(
    "a name that resolves elsewhere: refused before anything " + "is installed or changed, and no password is sent",
    async () => {
      const { error, remote } = await run({ ...BASE, listen_addresses: "localhost,db.internal" }, [
        osStep(),
        { match: "getent ahosts", sudo: false, stdout: answer({ "db.internal": ["203.0.113.9"] }, IP_ADDR, PG14) },
      ]);
      expect(remote.done).toBe(true);
      expect(error?.message).toMatch(
        /listen_addresses: db\.internal resolves on the VM to 203\.0\.113\.9, which is not an address of the VM .*nothing was changed and no password was sent/,
      );
      for (const c of remote.calls) expect(String(c.opts.stdin ?? "")).not.toContain("Tok3n");
    },
  );

  it("a name that is the VM's own: the login goes to the address found, never to the name", async () => {
    const { result, error, remote } = await run({ ...BASE, listen_addresses: "db.internal" }, [
      osStep(),
      {
        match: "getent ahosts",
        sudo: false,
        stdout: answer({ "db.internal": ["2001:db8::5", "10.0.0.5"] }, IP_ADDR, PG14),
      },
      grantsRead(),
      inspectSqlStep(state({ listen_addresses: "db.internal", dropin_text: dropInContent("db.internal") })),
      loginStep("10.0.0.5"),
    ]);
    expect(error).toBeUndefined();
    expect(remote.done).toBe(true);
    expect(result?.verified).toMatchObject({ host: "10.0.0.5" });
    expect(remote.calls.some((c) => c.command.includes("-h db.internal"))).toBe(false);
    expect(() => verifyHost("db.internal")).toThrow(
      /was not resolved on the VM before the TCP login check; nothing is sent to it/,
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// The grants inventory, hand-edited.

describe("install-postgres: the grants inventory is not taken on its word", () => {
  const role = (over: Partial<RecordedRole> = {}): RecordedRole => ({
    login: true,
    superuser: false,
    bootstrap: false,
    marked: true,
    ...over,
  });

  it(
    "only roles vm-install marked, not superusers, under a name it creates, lose LOGIN; every other is skipped " +
      "with why",
    () => {
      const plan = planRoles(
        [
          "postgres",
          "admin",
          "outsider",
          "old_user",
          "x; DROP ROLE y",
          "Upper",
          "pg_monitor",
          "all",
          "gone",
          "nologin",
          "app_user",
          "old_user",
        ],
        "app_user",
        false,
        {
          postgres: role({ superuser: true, bootstrap: true, marked: false }),
          admin: role({ superuser: true }),
          outsider: role({ marked: false }),
          old_user: role(),
          nologin: role({ login: false }),
          app_user: role(),
        },
      );
      expect(plan.revoke).toEqual(["old_user"]);
      expect(plan.record).toEqual(["app_user"]);
      const why = (r: string) => plan.skipped.find((s) => s.startsWith(`LOGIN of role ${JSON.stringify(r)} `));
      expect(why("postgres")).toMatch(/not a role name vm-install creates/);
      expect(why("admin")).toMatch(/it is a superuser, never revoked/);
      expect(why("outsider")).toMatch(
        /it carries no vm-install mark, so vm-install did not create it or give it LOGIN/,
      );
      for (const r of ["x; DROP ROLE y", "Upper", "pg_monitor", "all"])
        expect(why(r)).toMatch(/not a role name vm-install creates/);
      expect(plan.skipped).toHaveLength(7); // gone and nologin have nothing to take back: no line
      // The bootstrap superuser under another name (initdb -U) is recognised by the server's oid 10.
      expect(
        planRoles(["dba"], "app_user", false, { dba: role({ superuser: true, bootstrap: true }) }).skipped,
      ).toEqual([expect.stringMatching(/"dba" .*the bootstrap superuser, never revoked/)]);
    },
  );

  it(
    "the server checks again: the NOLOGIN and the session " + "ends touch only marked non-superusers other than oid 10",
    () => {
      const sql = revokeLoginSql(["old_user"]);
      expect(
        sql.match(
          /NOT rolsuper AND oid <> 10 AND coalesce\(shobj_description\(oid, 'pg_authid'\) LIKE 'vm-install: %', false\)/g,
        ),
      ).toHaveLength(2);
      expect(
        applySql({ createRole: true, grantLogin: false, createDatabase: false, changeOwner: false }, "db", "u"),
      ).toMatch(
        /\\set mark 'vm-install: created by install-postgres[^']*'\nSELECT format\('COMMENT ON ROLE %I IS %L', :'db_user', :'mark'\) WHERE shobj_description\(.*\) IS NULL \\gexec/,
      );
      expect(
        applySql({ createRole: false, grantLogin: true, createDatabase: false, changeOwner: false }, "db", "u"),
      ).toContain("\\set mark 'vm-install: LOGIN given by");
      expect(
        applySql({ createRole: false, grantLogin: false, createDatabase: false, changeOwner: true }, "db", "u"),
      ).not.toContain("COMMENT ON ROLE");
    },
  );

  it(
    "a hand-edited inventory naming postgres and a role vm-install did not create: both keep LOGIN, the run says " +
      "why, the record drops them",
    async () => {
      const inventory = {
        version: 1,
        postgres: { hba: {}, roles: { "14/main": ["postgres", "outsider", "app_user"] } },
      };
      const { result, error, remote } = await run(BASE, [
        osStep(),
        inspectStep(MAIN, unitLine("main")),
        grantsRead(inventory),
        psqlStep(/\\set recorded '\["outsider","app_user"\]'/, {
          ...state(),
          recorded_roles: { outsider: role({ marked: false }), app_user: role() },
        }),
        grantsWrite((w) => expect(w.postgres).toEqual({ hba: {}, roles: { "14/main": ["app_user"] } })),
        loginStep(),
      ]);
      expect(error).toBeUndefined();
      expect(remote.done).toBe(true);
      expect(remote.calls.some((c) => /NOLOGIN/.test(String(c.opts.stdin ?? "")))).toBe(false);
      expect(result?.revoked).toEqual([]);
      expect(result?.warnings).toEqual([
        expect.stringMatching(
          /^LOGIN of role "postgres" not taken back although \/var\/lib\/vm-install\/grants.json lists it: not a role name vm-install creates/,
        ),
        expect.stringMatching(/^LOGIN of role "outsider" not taken back .*: it carries no vm-install mark/),
      ]);
    },
  );

  it("db_user naming an existing superuser is refused with the reason, before any change", async () => {
    const { error, remote } = await run(BASE, [
      osStep(),
      inspectStep(MAIN, unitLine("main")),
      grantsRead(),
      inspectSqlStep(state({ role: { login: true, superuser: true, secret: null } })),
    ]);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      /db_user app_user is an existing superuser role on the server: .*Choose another dbUser .*Nothing was changed/,
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// The TCP login check: the password (or any proof of it) only to the cluster's own postmaster, with
// SCRAM-SHA-256, and never on the VM (issue 30, finding 1).

describe("install-postgres: the login check sends nothing to a peer that has not proved itself", () => {
  const look = () => [osStep(), inspectStep(MAIN, unitLine("main")), grantsRead(), inspectSqlStep(state())];
  /** Nothing of the password in any command, stdin or environment, nor in any byte sent through a channel. */
  const expectPasswordKept = (remote: ScriptedRemote) => {
    for (const c of remote.calls) {
      expect(`${c.command}\n${String(c.opts.stdin ?? "")}\n${JSON.stringify(c.opts.env ?? {})}`).not.toContain(PW);
    }
    for (const t of remote.tunnels) expect(t.server?.received().toString("latin1") ?? "").not.toContain(PW);
  };

  it("another process on 127.0.0.1, the server on ::1 only: fails naming its pid, user and command; no channel", async () => {
    const { error, remote } = await run(BASE, [
      ...look(),
      listenerStep("127.0.0.1", {
        ss: [ssLine("127.0.0.1", 4321, "python3"), ssLine("::1")],
        holders: `  ${POSTMASTER_PID} postgres /usr/lib/postgresql/14/bin/postgres\n 4321 mallory python3 /tmp/squat.py\n`,
        tunnel: { password: PW, mode: "cleartext" },
      }),
    ]);
    expect(remote.done).toBe(true);
    expect(error?.message).toMatch(
      /127\.0\.0\.1:5432 is not held by the cluster's server: pid 4321, user mallory: python3 \/tmp\/squat\.py listens there, not postgresql@14-main \(MainPID 812\); nothing was sent to it .* stop it \(kill 4321\)/,
    );
    expect(remote.tunnels).toEqual([]);
    expectPasswordKept(remote);
  });

  it("the look runs as root, in one exec, and reads the unit systemd runs", async () => {
    const { remote } = await run(BASE, [...look(), loginStep()]);
    // The first look carries it too, through sudo -n; this double does not answer it there.
    expect(remote.calls[0].command).toMatch(/timeout -k 2 20 sudo -n sh -c '.*ss -Hltnp/);
    const call = remote.calls.find((c) => c.opts.sudo && c.command.includes("ss -Hltnp"));
    expect(call?.command).toContain('systemctl show -p MainPID --value "$VMI_UNIT")');
    // The port and the unit are bound in the look itself, each probe exporting them (vm-facts.ts Probe.env).
    expect(call?.command).toContain("export VMI_PORT=5432 VMI_UNIT=postgresql@14-main; ");
    expect(call?.opts.env).toEqual({ LC_ALL: "C" });
  });

  it("the postmaster's own socket, but it asks for a cleartext password (a password rule): refused, nothing sent", async () => {
    const { error, remote } = await run(BASE, [
      ...look(),
      listenerStep("127.0.0.1", { tunnel: { password: PW, mode: "cleartext" } }),
    ]);
    expect(error?.message).toMatch(
      /app_user could not log in to myapp over TCP at 127\.0\.0\.1:5432: the server asked for a cleartext password, not SCRAM-SHA-256: nothing derived from the password was sent/,
    );
    expect(remote.tunnels).toHaveLength(1);
    expectPasswordKept(remote);
  });

  it("a server that cannot show it holds the verifier: refused after SCRAM, before the query", async () => {
    const { error, remote } = await run(BASE, [
      ...look(),
      listenerStep("127.0.0.1", { tunnel: { password: PW, mode: "bad-signature" } }),
    ]);
    expect(error?.message).toMatch(/the server's signature is wrong/);
    expectPasswordKept(remote);
  });

  it("a good exchange: verified with auth scram-sha-256, the password nowhere on the VM", async () => {
    const { result, error, remote, lines } = await run(BASE, [...look(), loginStep()]);
    expect(error).toBeUndefined();
    expect(result?.verified).toEqual({
      host: "127.0.0.1",
      port: 5432,
      user: "app_user",
      database: "myapp",
      auth: "scram-sha-256",
    });
    expect(lines.some((l) => /over TCP \(127\.0\.0\.1:5432, SCRAM-SHA-256, postmaster pid 812\)/.test(l))).toBe(true);
    expect(remote.tunnels[0].server?.proofAccepted).toBe(true);
    expectPasswordKept(remote);
  });

  it("to a loopback address the login asks for no TLS (two round trips less); TLS once when the rules ask for it", async () => {
    const plain = await run(BASE, [...look(), loginStep()]);
    expect(plain.error).toBeUndefined();
    expect(plain.remote.tunnels.map((t) => t.server?.askedSsl())).toEqual([false]);
    const hostssl = await run(BASE, [
      ...look(),
      listenerStep("127.0.0.1", { tunnel: { password: PW, who: JSON.stringify(WHO), mode: "ssl-required" } }),
    ]);
    expect(hostssl.error).toBeUndefined();
    expect(hostssl.remote.tunnels.map((t) => t.server?.askedSsl())).toEqual([false, true]);
    expect(hostssl.remote.tunnels[1].server?.proofAccepted).toBe(true);
  });

  it("to another address of the VM the login asks for TLS first (remote rules are hostssl)", async () => {
    const event = { ...BASE, listen_addresses: "10.0.0.5" };
    const { error, remote } = await run(event, [
      osStep(),
      inspectStep(MAIN, unitLine("main")),
      grantsRead(),
      inspectSqlStep(state({ listen_addresses: "10.0.0.5", dropin_text: dropInContent("10.0.0.5") })),
      listenerStep("10.0.0.5", { tunnel: { password: PW, who: JSON.stringify(WHO) } }),
    ]);
    expect(error).toBeUndefined();
    expect(remote.tunnels.map((t) => [t.host, t.server?.askedSsl()])).toEqual([["10.0.0.5", true]]);
  });

  it("TCP forwarding off on the VM: nothing sent, the run succeeds with a warning saying why and how", async () => {
    const { result, error, remote } = await run(BASE, [
      ...look(),
      listenerStep("127.0.0.1", { tunnel: { refused: "forwarding" } }),
    ]);
    expect(error).toBeUndefined();
    expect(result?.verified).toBeNull();
    expect(result?.warnings).toEqual([
      expect.stringMatching(
        /^the TCP login check \(app_user to myapp at 127\.0\.0\.1:5432\) was not run, and nothing of the password was sent: .*AllowTcpForwarding local/,
      ),
    ]);
    expectPasswordKept(remote);
  });

  it("nothing listening (the channel's connect refused): fails asking whether the server listens", async () => {
    const { error } = await run(BASE, [...look(), listenerStep("127.0.0.1", { tunnel: { refused: "connect" } })]);
    expect(error?.message).toMatch(/Connection refused \(is the server listening on 127\.0\.0\.1:5432\?\)/);
  });
});

// Fixture sanity: the marker the pg_hba lines of these tests would carry.
test("fixtures", () => expect(HBA_MARKER).toBe("# vm-install:install-postgres"));
