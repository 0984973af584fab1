// The role and database's SQL and the configuration files in one exec as postgres (issue 30): the SQL takes
// exactly its bytes of stdin, a failure of it stops the exec before any file is written and is named as its
// own step, and the plan joins the two changes only where they come one right after the other.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { CommandError } from "../../handlers/common/exec";
import type { PostgresChange } from "../../handlers/install-postgres/plan-change";
import { joinAdjacent } from "../../handlers/install-postgres/plan-joins";
import { joinedFailure, sqlFromStdin } from "../../handlers/install-postgres/sql-first";

describe("SQL first on stdin, then the rest of the exec", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "sql-first-"));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  // A psql that keeps what it was given and exits as told.
  fs.writeFileSync(path.join(dir, "psql"), '#!/bin/sh\ncat > "$SQL_OUT"; echo said; exit "${PSQL_EXIT:-0}"\n', {
    mode: 0o755,
  });
  const run = (sql: string, rest: string, psqlExit = 0) => {
    const sqlOut = path.join(dir, "sql.out");
    const restOut = path.join(dir, "rest.out");
    fs.rmSync(restOut, { force: true });
    const script = `${sqlFromStdin(5432, sql)} && head -c ${Buffer.byteLength(rest)} > '${restOut}'`;
    const env = { ...process.env, PATH: `${dir}:${process.env.PATH}`, SQL_OUT: sqlOut, PSQL_EXIT: String(psqlExit) };
    let code = 0;
    let stdout = "";
    try {
      stdout = execFileSync("sh", ["-c", script], { input: sql + rest, env }).toString();
    } catch (e) {
      code = (e as { status: number }).status;
    }
    const read = (f: string) => (fs.existsSync(f) ? fs.readFileSync(f, "utf8") : undefined);
    return { code, stdout, sql: read(sqlOut), rest: read(restOut) };
  };

  test("each part gets exactly its bytes (multibyte text, SQL-looking files), psql's output dropped", () => {
    const sql = "ALTER ROLE x PASSWORD 'pä$$wörd';\n\\set q 'é'\n";
    const rest = "listen_addresses = '*'\nSELECT 1; -- not SQL to run\n";
    expect(run(sql, rest)).toEqual({ code: 0, stdout: "", sql, rest });
  });

  test("the SQL fails: the exec exits 100 + psql's status and nothing after it runs", () => {
    expect(run("SELECT 1;\n", "file\n", 3)).toMatchObject({ code: 103, rest: undefined });
  });

  test("its error is named after the SQL's own step, with psql's own status; another failure after the exec", () => {
    const label = "psql (role and database), writing /etc/x, psql (checking the configuration files)";
    const first = { sql: "", label: "psql (role and database)", step: "" };
    const result = (code: number, stderr: string) => ({ code, stdout: "", stderr, durationMs: 5 });
    const named = joinedFailure(result(103, "ERROR: no"), "c", label, first);
    expect(named).toBeInstanceOf(CommandError);
    expect({ message: named?.message, code: named?.code }).toEqual({
      message: "psql (role and database) failed (exit 3):\nERROR: no",
      code: 3,
    });
    const writeFailed = joinedFailure(result(1, "mv: no"), "c", label, first);
    expect({ message: writeFailed?.message, code: writeFailed?.code }).toEqual({
      message: `${label} failed (exit 1):\nmv: no`,
      code: 1,
    });
    expect(joinedFailure(result(0, ""), "c", label, first)).toBeUndefined();
  });
});

describe("joinAdjacent", () => {
  const applied: string[] = [];
  const change = (kind: PostgresChange["kind"], joined?: PostgresChange["joined"]): PostgresChange => ({
    kind,
    what: [`${kind} line`],
    why: `${kind} differs`,
    apply: async () => {
      applied.push(kind);
      return undefined;
    },
    ...(joined ? { joined } : {}),
  });
  const sqlGiver = () =>
    change("role-database", { sql: () => ({ sql: "SQL", label: "psql (role and database)", step: "role" }) });
  const taker = () =>
    change("configuration", {
      after: async (_run, first) => {
        applied.push(`configuration after ${first.sql}`);
        return undefined;
      },
    });

  test("next to each other: one change, both changes' words in order, applied as one", async () => {
    const joined = joinAdjacent([sqlGiver(), taker(), change("restart")]);
    expect(joined.map((c) => [c.kind, c.what])).toEqual([
      ["role-database", ["role-database line", "configuration line"]],
      ["restart", ["restart line"]],
    ]);
    applied.length = 0;
    await joined[0].apply({} as never);
    expect(applied).toEqual(["configuration after SQL"]);
  });

  test("anything between them, or either alone: nothing joined", () => {
    const between = [sqlGiver(), change("revoke-login"), taker()];
    expect(joinAdjacent(between).map((c) => c.kind)).toEqual(["role-database", "revoke-login", "configuration"]);
    expect(joinAdjacent([taker(), sqlGiver()]).map((c) => c.kind)).toEqual(["configuration", "role-database"]);
  });
});
