// The server's word on `parameters`, before anything changes (in a check too): pg_settings for the names'
// context and live values, and the postmaster's own parser for the candidate values (`postgres -C`, safe on
// a running server: it reads the configuration and exits before touching the data directory), so units,
// ranges, enums and check hooks are judged exactly as at the next start. Nothing here writes.

import { quote } from "../../lib/shared/shell-quote";
import { takenBackLine } from "./parameter-fallback";
import {
  changedNames,
  namesToRead,
  type ParameterFacts,
  plainValue,
  readOnlyNames,
  type TakenBack,
  unknownNames,
} from "./parameters";
import { type Cluster, clusterUnit, type ServerState } from "./pg";
import type { Run } from "./run";
import { psqlJson } from "./server";

/**
 * pg_settings for `names` (lowercase) with their lines in the configuration files as they are now (what a
 * reload reads), and every name when one of them is unknown; names sent as JSON data.
 */
function parameterFactsSql(names: string[]): string {
  const literal = `'${JSON.stringify(names).replace(/'/g, "''")}'`;
  return `WITH wanted AS (SELECT json_array_elements_text(${literal}::json) AS n)
SELECT json_build_object(
  'known', coalesce((SELECT json_object_agg(lower(s.name), json_build_object('name', s.name,
                       'value', current_setting(s.name), 'context', context, 'pending_restart', pending_restart,
                       'sourcefile', sourcefile, 'source', source, 'vartype', vartype, 'unit', unit,
                       'enumvals', enumvals, 'min_val', min_val, 'max_val', max_val, 'boot_val', boot_val,
                       'lines', (SELECT coalesce(json_agg(json_build_object('setting', f.setting, 'file', f.sourcefile)
                                                          ORDER BY f.seqno), '[]'::json)
                                 FROM pg_file_settings f WHERE lower(f.name) = lower(s.name))))
                     FROM pg_settings s WHERE lower(s.name) IN (SELECT n FROM wanted)), '{}'::json),
  'all', CASE WHEN EXISTS (SELECT FROM wanted WHERE n NOT IN (SELECT lower(name) FROM pg_settings))
              THEN (SELECT json_agg(lower(name) ORDER BY name) FROM pg_settings) END
);
`;
}

/**
 * What the server says of the parameters the settings and the drop-in name; undefined when there are
 * none. Throws, before any change, for names the server does not know or will not let be set, and for
 * values its parser refuses (its own words).
 */
export async function readParameters(
  run: Run,
  cluster: Cluster,
  state: ServerState,
): Promise<ParameterFacts | undefined> {
  const { event, remote, progress } = run;
  const wanted = event.parameters ?? {};
  const names = namesToRead(wanted, state.dropin_text);
  if (!names.length) return undefined;
  const facts = await progress.step(
    "reading the parameters' settings",
    () => psqlJson<ParameterFacts>(remote, cluster.port, parameterFactsSql(names), "psql (reading pg_settings)"),
    "parameters",
  );
  const unknown = unknownNames(wanted, facts);
  if (unknown.length)
    throw new Error(
      `parameters: PostgreSQL ${cluster.major} has no setting ${unknown.join("; ")}; ` +
        "nothing was changed. Correct the names in parameters and run the job again",
    );
  const fixed = readOnlyNames(wanted, facts);
  if (fixed.length)
    throw new Error(
      `parameters: ${fixed.join(", ")} cannot be set (read-only: compiled in or fixed at initdb); ` +
        "nothing was changed. Remove them from parameters",
    );
  const changed = changedNames(wanted, state.dropin_text);
  if (changed.length) await judgeValues(run, cluster, state, changed);
  return facts;
}

/**
 * The postmaster parses the configuration with the changed values on top (`-c`, which wins over the
 * files) and exits: what it refuses is what a restart would refuse. Combinations checked only later in
 * start-up (superuser_reserved_connections below max_connections) are left to the restart's rollback.
 */
async function judgeValues(run: Run, cluster: Cluster, state: ServerState, names: string[]): Promise<void> {
  const wanted = run.event.parameters ?? {};
  const bin = `/usr/lib/postgresql/${cluster.major}/bin/postgres`;
  const confDir = state.config_file.replace(/\/[^/]*$/, "");
  const args = names.map((n) => `-c ${quote(`${n}=${plainValue(wanted[n])}`)}`).join(" ");
  const r = await run.progress.step(
    `asking postgres to parse ${names.join(", ")}`,
    () =>
      run.remote.run(`cd / && ${quote(bin)} -D ${quote(confDir)} -C data_directory ${args}`, {
        user: "postgres",
        env: { LC_MESSAGES: "C" },
        check: false,
        label: "postgres -C (checking parameters)",
        timeoutMs: 60_000,
      }),
    "parameters_check",
  );
  if (r.code === 0) return;
  const asked = names.map((n) => `${n} = ${plainValue(wanted[n])}`).join(", ");
  throw new Error(
    `parameters: PostgreSQL ${cluster.major} refuses ${asked}` +
      `: ${serverWords(r.stderr || r.stdout)}; nothing was changed (${clusterUnit(cluster)} runs as before). ` +
      "Correct the values in parameters and run the job again",
  );
}

/** Reads of pg_settings while new sessions still show the drop-in's value (the reload not yet read). */
const RELOAD_READS = 50;

/**
 * After the reload or restart that applied the drop-in without `removed`: pg_settings' word on each, in the
 * words a check foresaw it (parameter-fallback.ts), or the check's own words where it could not be sure (the
 * value read then is said in the progress). A reload reaches new sessions once the postmaster has read
 * the files again, so the read is repeated (briefly) while one still comes from the drop-in.
 */
export async function takenBack(run: Run, cluster: Cluster, dropIn: string, removed: Record<string, TakenBack>) {
  const names = Object.keys(removed).sort();
  for (let read = 1; names.length; read++) {
    const facts = await psqlJson<ParameterFacts>(
      run.remote,
      cluster.port,
      parameterFactsSql(names),
      "psql (reading the parameters taken back)",
    );
    if (read < RELOAD_READS && names.some((n) => facts.known[n]?.sourcefile === dropIn)) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      continue;
    }
    return names.map((n) => {
      const { text, foreseen } = removed[n];
      const now = facts.known[n];
      if (!foreseen || !("unsure" in foreseen)) return takenBackLine(n, text, now);
      run.progress.info(`${takenBackLine(n, text, now)} (as read after the reload or restart)`);
      return takenBackLine(n, text, foreseen);
    });
  }
  return [];
}

/** The message lines of the postmaster's output, prefixes (time, pid) dropped. */
export function serverWords(output: string): string {
  const lines = output
    .split("\n")
    .map((l) => l.replace(/^.*?\b(FATAL|ERROR|LOG|WARNING|HINT|DETAIL):\s+/, "$1: ").trim())
    .filter((l) => /^(FATAL|ERROR|LOG|WARNING|HINT|DETAIL): /.test(l) || /must be|invalid|outside/.test(l));
  return lines.length ? [...new Set(lines)].slice(0, 4).join("; ") : output.trim().slice(-300);
}
