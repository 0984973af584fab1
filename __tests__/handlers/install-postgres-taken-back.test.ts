// Issue 32: a parameter taken out of vm-install's drop-in says in `changes` what is in effect after the reload
// or restart, from pg_settings read then: the admin's value and its file, or the server's default (a check
// foresees it, parameter-fallback.ts; where it could not be sure the run says the check's words). A reload
// reaches new sessions once the postmaster has read the files again, so a read that still shows the drop-in's
// value is made again; the plan's own line (what the file loses) is unchanged.
import type { RunOptions, RunResult } from "../../handlers/common/exec";
import { takenBackLine } from "../../handlers/install-postgres/parameter-fallback";
import type { ParameterFact } from "../../handlers/install-postgres/parameters";
import { planParameters } from "../../handlers/install-postgres/parameters";
import { takenBack } from "../../handlers/install-postgres/parameters-server";
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
    expect(takenBackLine("port", "'5433'", { unsure: "its default is set when the server starts" })).toBe(
      "parameter port: vm-install's '5433' taken back; the server's other files or its default in effect " +
        "(its default is set when the server starts)",
    );
  });

  it("the plan keeps each removed name with its drop-in text and what it foresees, for the words after", () => {
    const plan = planParameters({}, "work_mem = '64MB'\nmax_connections = '150'\n", undefined, DROPIN);
    expect(plan.removed).toEqual({
      work_mem: { text: "'64MB'", foreseen: undefined },
      max_connections: { text: "'150'", foreseen: undefined },
    });
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
    const foreseen = { value: "8MB", sourcefile: CONF, source: "configuration file" };
    expect(await takenBack(run, cluster, DROPIN, { work_mem: { text: "'64MB'", foreseen } })).toEqual([
      `parameter work_mem: vm-install's '64MB' taken back; '8MB' from ${CONF} in effect`,
    ]);
    expect(sent).toHaveLength(3);
    expect(sent[0]).toContain("json_array_elements_text('[\"work_mem\"]'::json)");
  });

  it("where the check could not be sure, the run says the check's words and the value it read in the progress", async () => {
    const { run } = remoteAnswering(fact("8MB", CONF));
    const said: string[] = [];
    Object.assign(run, { progress: { info: (line: string) => said.push(line) } });
    const foreseen = { unsure: `${CONF} sets it to '8 MB', which may not apply` };
    expect(await takenBack(run, cluster, DROPIN, { work_mem: { text: "'64MB'", foreseen } })).toEqual([
      `parameter work_mem: vm-install's '64MB' taken back; the server's other files or its default in effect ` +
        `(${CONF} sets it to '8 MB', which may not apply)`,
    ]);
    expect(said).toEqual([
      expect.stringContaining(`'8MB' from ${CONF} in effect (as read after the reload or restart)`),
    ]);
  });

  it("nothing taken back: no read", async () => {
    const { run, sent } = remoteAnswering(fact("8MB", CONF));
    expect(await takenBack(run, cluster, DROPIN, {})).toEqual([]);
    expect(sent).toHaveLength(0);
  });
});
