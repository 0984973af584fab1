// Issue 32: a parameter taken out of vm-install's drop-in says in `changes` what is in effect after the reload
// or restart, from pg_settings read then: the admin's value and its file, or the server's default. A reload
// reaches new sessions once the postmaster has read the files again, so a read that still shows the drop-in's
// value is made again; the plan's own line (what the file loses) is unchanged.
import type { RunOptions, RunResult } from "../../handlers/common/exec";
import type { ParameterFact } from "../../handlers/install-postgres/parameters";
import { planParameters } from "../../handlers/install-postgres/parameters";
import { takenBack, takenBackLine } from "../../handlers/install-postgres/parameters-server";
import type { Run } from "../../handlers/install-postgres/run";

const DROPIN = "/etc/postgresql/15/main/conf.d/90-vm-install.conf";
const CONF = "/etc/postgresql/15/main/postgresql.conf";
const fact = (value: string, sourcefile: string | null, source = "configuration file"): ParameterFact => ({
  name: "work_mem",
  value,
  context: "user",
  pending_restart: false,
  sourcefile,
  source,
});

describe("the words of a parameter taken back", () => {
  it("the admin's value and its file, the default, another source, a name the server no longer has", () => {
    expect(takenBackLine("work_mem", "'64MB'", fact("8MB", CONF))).toBe(
      `parameter work_mem: vm-install's '64MB' taken back; '8MB' from ${CONF} in effect`,
    );
    expect(takenBackLine("work_mem", "'64MB'", fact("4MB", null, "default"))).toBe(
      "parameter work_mem: vm-install's '64MB' taken back; '4MB' (default) in effect",
    );
    expect(takenBackLine("work_mem", "'64MB'", fact("16MB", null, "user"))).toBe(
      "parameter work_mem: vm-install's '64MB' taken back; '16MB' (user) in effect",
    );
    expect(takenBackLine("pg_x.y", "'1'", undefined)).toBe(
      "parameter pg_x.y: vm-install's '1' taken back; no value in effect",
    );
  });

  it("the plan keeps each removed name with its drop-in text, for the words after the reload", () => {
    const plan = planParameters({}, "work_mem = '64MB'\nmax_connections = '150'\n", undefined, DROPIN);
    expect(plan.removed).toEqual({ work_mem: "'64MB'", max_connections: "'150'" });
  });
});

describe("takenBack: pg_settings read after the reload", () => {
  /** A remote whose psql answers each read in turn with pg_settings' work_mem. */
  const remoteAnswering = (...seen: ParameterFact[]) => {
    const sent: string[] = [];
    const remote = {
      run: async (command: string, opts: RunOptions = {}): Promise<RunResult> => {
        sent.push(String(opts.stdin ?? command));
        const now = seen[Math.min(sent.length, seen.length) - 1];
        return {
          code: 0,
          stdout: `${JSON.stringify({ known: { work_mem: now }, all: null })}\n`,
          stderr: "",
          durationMs: 0,
        };
      },
    };
    return { run: { remote } as unknown as Run, sent };
  };
  const cluster = { major: "15", name: "main", port: 5432 } as Parameters<typeof takenBack>[1];

  it("read again while a new session still shows the drop-in's value; then the admin's, in changes' words", async () => {
    const { run, sent } = remoteAnswering(fact("64MB", DROPIN), fact("64MB", DROPIN), fact("8MB", CONF));
    expect(await takenBack(run, cluster, DROPIN, { work_mem: "'64MB'" })).toEqual([
      `parameter work_mem: vm-install's '64MB' taken back; '8MB' from ${CONF} in effect`,
    ]);
    expect(sent).toHaveLength(3);
    expect(sent[0]).toContain("json_array_elements_text('[\"work_mem\"]'::json)");
  });

  it("nothing taken back: no read", async () => {
    const { run, sent } = remoteAnswering(fact("8MB", CONF));
    expect(await takenBack(run, cluster, DROPIN, {})).toEqual([]);
    expect(sent).toHaveLength(0);
  });
});
