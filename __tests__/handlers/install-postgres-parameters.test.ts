// install-postgres `parameters` and `extensions`: the rules, postgresql.conf quoting (what the drop-in holds
// reads back as written, so a rerun has nothing to do), and the plan's old -> new lines with the restart
// or reload each needs. The server's own judgement is the e2e suite's (postgres-parameters.test.ts).

import {
  type ExtensionFacts,
  libraries,
  planExtensions,
  withPreload,
} from "../../handlers/install-postgres/extensions";
import { withExtensionRecord } from "../../handlers/install-postgres/extensions-server";
import {
  confValue,
  nearestNames,
  ownParameters,
  type ParameterFacts,
  planParameters,
  unknownNames,
} from "../../handlers/install-postgres/parameters";
import { serverWords } from "../../handlers/install-postgres/parameters-server";
import { dropInContent } from "../../handlers/install-postgres/pg";
import { pgExtensions, pgParameters } from "../../lib/shared/pg-parameters";

const DROPIN = "/etc/postgresql/15/main/conf.d/90-vm-install.conf";

function problems(value: unknown): string[] {
  const out: string[] = [];
  pgParameters(value, "parameters", out);
  return out;
}

const facts: ParameterFacts = {
  known: {
    work_mem: { name: "work_mem", value: "4MB", context: "user", pending_restart: false },
    max_connections: { name: "max_connections", value: "100", context: "postmaster", pending_restart: false },
    shared_buffers: { name: "shared_buffers", value: "128MB", context: "postmaster", pending_restart: true },
    datestyle: { name: "DateStyle", value: "ISO, MDY", context: "user", pending_restart: false },
  },
  all: ["work_mem", "maintenance_work_mem", "max_connections", "shared_buffers", "datestyle"],
};

describe("the parameters rule (synth and handler)", () => {
  it("accepts names, dotted module names and string, number and boolean values", () => {
    expect(problems({ work_mem: "64MB", max_connections: 200, jit: false, "pg_stat_statements.max": 5000 })).toEqual(
      [],
    );
  });

  it.each([
    ["listen_addresses", "listenAddresses"],
    ["shared_preload_libraries", "extensions"],
    ["ssl", "TLS"],
    ["ssl_cert_file", "TLS"],
    ["data_directory", "postgresql-common"],
    ["include_dir", "directive"],
  ])("refuses %s, naming its owner", (name, owner) => {
    const found = problems({ [name]: "x" });
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(`parameters.${name}: is not set through parameters`);
    expect(found[0]).toContain(owner);
  });

  it.each([
    ["Work_Mem", "not a parameter name"],
    ["work mem", "not a parameter name"],
    ["a=b", "not a parameter name"],
    ["x.", "not a parameter name"],
  ])("refuses the name %j", (name, words) => {
    expect(problems({ [name]: "1" }).join()).toContain(words);
  });

  it.each([
    ["a newline", "64MB\nlisten_addresses = '*'", "control character"],
    ["a carriage return", "a\rb", "control character"],
    ["an object", { a: 1 }, "expected a string, a number or true/false"],
    ["null", null, "expected a string, a number or true/false"],
    ["a list", ["a"], "expected a string, a number or true/false"],
    ["infinity", Number.POSITIVE_INFINITY, "not a finite number"],
    ["a long string", "x".repeat(4097), "at most 4096"],
  ])("refuses %s as a value", (_what, value, words) => {
    expect(problems({ work_mem: value }).join()).toContain(words);
  });

  it("refuses anything but an object", () => {
    expect(problems(["work_mem"]).join()).toContain("expected an object of postgresql.conf settings");
  });
});

describe("the drop-in's quoting", () => {
  it.each([
    ["64MB", "'64MB'"],
    [200, "'200'"],
    [0.5, "'0.5'"],
    [true, "'on'"],
    [false, "'off'"],
    ["it's", "'it''s'"],
    ["a\\b", "'a\\\\b'"],
    ["'; listen_addresses = '*", "'''; listen_addresses = ''*'"],
  ])("writes %j as %s", (value, text) => {
    expect(confValue(value)).toBe(text);
  });

  it("reads back every value as written: a rerun plans nothing", () => {
    const wanted = { work_mem: "64MB", search_path: '"$user", it\'s \\ public', jit: false, max_connections: 150 };
    const settings = Object.fromEntries(Object.entries(wanted).map(([n, v]) => [n, confValue(v)]));
    const text = dropInContent("*", settings);
    expect(planParameters(wanted, text, facts, DROPIN)).toMatchObject({ changed: false, lines: [], restart: [] });
    // Only one line per name, and listen_addresses is not a parameter of ours.
    expect([...ownParameters(text).keys()].sort()).toEqual(["jit", "max_connections", "search_path", "work_mem"]);
  });

  it("leaves lines other settings own out of the parameters (listen_addresses, ssl*)", () => {
    const text = `${dropInContent("*")}ssl_cert_file = '/x.pem'\n# work_mem = '1MB'\nwork_mem = '8MB'\n`;
    expect([...ownParameters(text)]).toEqual([["work_mem", "'8MB'"]]);
  });
});

describe("planParameters", () => {
  it("says each old and new value, and which needs a restart", () => {
    const plan = planParameters({ work_mem: "64MB", max_connections: 150 }, dropInContent("localhost"), facts, DROPIN);
    expect(plan.lines).toEqual([
      `parameter max_connections '100' -> '150' (${DROPIN}, restart)`,
      `parameter work_mem '4MB' -> '64MB' (${DROPIN}, reload)`,
    ]);
    expect(plan).toMatchObject({ changed: true, restart: ["max_connections"], reload: ["work_mem"] });
    expect(plan.settings).toEqual({ max_connections: "'150'", work_mem: "'64MB'" });
  });

  it("restarts for a value written earlier that still waits for a restart", () => {
    const text = dropInContent("localhost", { shared_buffers: "'256MB'" });
    const plan = planParameters({ shared_buffers: "256MB" }, text, facts, DROPIN);
    expect(plan.lines).toEqual(["parameter shared_buffers '256MB' applied (it was waiting for a restart)"]);
    expect(plan).toMatchObject({ changed: false, restart: ["shared_buffers"] });
  });

  it("removes a name no longer in the settings, with what that needs", () => {
    const text = dropInContent("localhost", { work_mem: "'64MB'", max_connections: "'150'" });
    const plan = planParameters({}, text, facts, DROPIN);
    expect(plan.lines).toEqual([
      `parameter work_mem '64MB' removed from ${DROPIN} (no longer in the settings; ` +
        "the server's other files or its default apply, reload)",
      `parameter max_connections '150' removed from ${DROPIN} (no longer in the settings; ` +
        "the server's other files or its default apply, restart)",
    ]);
    expect(plan).toMatchObject({ changed: true, restart: ["max_connections"], reload: ["work_mem"], settings: {} });
  });

  it("warns when a file read after the drop-in sets the same name (ALTER SYSTEM)", () => {
    const text = dropInContent("localhost", { work_mem: "'64MB'" });
    const auto = "/var/lib/postgresql/15/main/postgresql.auto.conf";
    const over = { ...facts.known.work_mem, value: "1MB", sourcefile: auto };
    const plan = planParameters({ work_mem: "64MB" }, text, { ...facts, known: { work_mem: over } }, DROPIN);
    expect(plan.lines).toEqual([]);
    expect(plan.warnings).toEqual([
      `parameter work_mem: the server runs with '1MB' from ${auto}, read after ${DROPIN}, not with '64MB': ` +
        "remove it there (ALTER SYSTEM RESET work_mem)",
    ]);
    const ours = { ...over, value: "64MB", sourcefile: DROPIN };
    expect(
      planParameters({ work_mem: "64MB" }, text, { ...facts, known: { work_mem: ours } }, DROPIN).warnings,
    ).toEqual([]);
  });

  it("assumes a restart where no server could be read (a check predicting a new cluster)", () => {
    const plan = planParameters({ work_mem: "64MB" }, null, undefined, DROPIN);
    expect(plan.lines).toEqual([`parameter work_mem (not set) -> '64MB' (${DROPIN}, restart)`]);
  });

  it("matches pg_settings' mixed-case names by their lowercase form", () => {
    const plan = planParameters({ datestyle: "ISO, DMY" }, null, facts, DROPIN);
    expect(plan.lines).toEqual([`parameter datestyle 'ISO, MDY' -> 'ISO, DMY' (${DROPIN}, reload)`]);
  });
});

describe("names the server does not know", () => {
  it("names the nearest for a typo", () => {
    expect(nearestNames("work_mme", facts.all ?? [])[0]).toBe("work_mem");
    expect(unknownNames({ work_mme: "1MB", work_mem: "1MB" }, facts)).toEqual(["work_mme (nearest: work_mem)"]);
  });

  it("says so when no known name is close", () => {
    expect(unknownNames({ zzzzzzzzzz: "1" }, facts)).toEqual(["zzzzzzzzzz (nearest: none)"]);
  });

  it("lets a module's dotted name through (unknown until its library loads)", () => {
    expect(unknownNames({ "pg_stat_statements.max": 5000 }, facts)).toEqual([]);
  });
});

describe("serverWords", () => {
  it("keeps the postmaster's message lines without their prefix", () => {
    const out =
      '2026-12-05 02:00:00.000 UTC [123] FATAL:  invalid value for parameter "wal_level": "bogus"\n' +
      "2026-12-05 02:00:00.000 UTC [123] HINT:  Available values: minimal, replica, logical.\n";
    expect(serverWords(out)).toBe(
      'FATAL: invalid value for parameter "wal_level": "bogus"; HINT: Available values: minimal, replica, logical.',
    );
  });
});

describe("extensions", () => {
  const ext = (over: Partial<ExtensionFacts> = {}): ExtensionFacts => ({
    available: ["pg_stat_statements", "hstore"],
    installed: [],
    preload: "",
    preload_pending: false,
    ...over,
  });
  const none = planParameters({}, null, facts, DROPIN);

  it("installs a package only for what the server lacks, named by the table or postgresql-<major>-<name>", () => {
    const plan = planExtensions(["hstore", "vector", "postgis", "postgis_topology", "pg_foo_bar"], "15", ext(), []);
    expect(plan.packages).toEqual([
      { name: "postgresql-15-pgvector", for: ["vector"] },
      { name: "postgresql-15-postgis-3", for: ["postgis", "postgis_topology"] },
      { name: "postgresql-15-pg-foo-bar", for: ["pg_foo_bar"] },
    ]);
    expect(plan.create).toEqual(["hstore", "vector", "postgis", "postgis_topology", "pg_foo_bar"]);
  });

  it("creates what the database lacks; records what it created or had recorded; reports a removed one", () => {
    const plan = planExtensions(["hstore", "pg_stat_statements"], "15", ext({ installed: ["hstore", "citext"] }), [
      "hstore",
      "citext",
    ]);
    expect(plan).toMatchObject({ create: ["pg_stat_statements"], left: ["citext"] });
    expect(plan.record).toEqual(["hstore", "pg_stat_statements"]);
    // One the admin had created before is not recorded: a later removal says nothing of it.
    expect(planExtensions(["hstore"], "15", ext({ installed: ["hstore"] }), []).record).toEqual([]);
  });

  it("a recorded extension the admin dropped since: forgotten when no longer wanted (not said to be left in place), created and recorded again when still wanted", () => {
    const dropped = planExtensions(["hstore"], "15", ext({ installed: ["hstore"] }), ["hstore", "citext"]);
    expect(dropped).toMatchObject({ create: [], record: ["hstore"], left: [] });
    const wanted = planExtensions(["citext"], "15", ext({ installed: [] }), ["citext"]);
    expect(wanted).toMatchObject({ create: ["citext"], record: ["citext"], left: [] });
  });

  it("adds the missing library to the running shared_preload_libraries, with a restart", () => {
    const plan = withPreload(none, ["pg_stat_statements", "hstore"], ext({ preload: "auto_explain" }), null, DROPIN);
    expect(plan.settings).toEqual({ shared_preload_libraries: "'auto_explain,pg_stat_statements'" });
    expect(plan.restart).toEqual(["shared_preload_libraries"]);
    expect(plan.lines).toEqual([
      `shared_preload_libraries 'auto_explain' -> 'auto_explain,pg_stat_statements' (${DROPIN}, restart; ` +
        "for pg_stat_statements)",
    ]);
  });

  it("keeps its line and changes nothing once loaded; restarts for one written but waiting", () => {
    const text = dropInContent("localhost", { shared_preload_libraries: "'pg_stat_statements'" });
    const loaded = withPreload(none, ["pg_stat_statements"], ext({ preload: "pg_stat_statements" }), text, DROPIN);
    expect(loaded).toMatchObject({ changed: false, restart: [], lines: [] });
    expect(loaded.settings.shared_preload_libraries).toBe("'pg_stat_statements'");
    const waiting = withPreload(none, ["pg_stat_statements"], ext(), text, DROPIN);
    expect(waiting).toMatchObject({ changed: false, restart: ["shared_preload_libraries"] });
    expect(waiting.lines).toEqual([
      "shared_preload_libraries 'pg_stat_statements' applied (it was waiting for a restart)",
    ]);
    // No longer wanted: the library stays (the extension is left in place too).
    expect(withPreload(none, [], ext({ preload: "pg_stat_statements" }), text, DROPIN).settings).toEqual({
      shared_preload_libraries: "'pg_stat_statements'",
    });
  });

  it("reads quoted library names", () => {
    expect(libraries(' "auto_explain" , pg_stat_statements,')).toEqual(["auto_explain", "pg_stat_statements"]);
  });

  it("replaces one database's record, dropping the key when empty", () => {
    const section = { hba: {}, roles: {}, extensions: { "15/main:a": ["x"] } };
    expect(withExtensionRecord(section, "15/main:b", ["y"]).extensions).toEqual({
      "15/main:a": ["x"],
      "15/main:b": ["y"],
    });
    expect(withExtensionRecord(section, "15/main:a", [])).toEqual({ hba: {}, roles: {} });
  });

  it("refuses a name CREATE EXTENSION would not take from us", () => {
    const out: string[] = [];
    pgExtensions(["pg_stat_statements", "uuid-ossp", "Bad;", "x y"], "extensions", out);
    expect(out).toHaveLength(2);
  });
});
