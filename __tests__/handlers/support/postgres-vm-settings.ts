// The settings side of the stateful double (postgres-vm.ts): a few pg_settings parameters of each context,
// the values the server runs with and those its last reading of the files (a reload or a restart) holds, so
// a postmaster parameter read at a reload waits for a restart as PostgreSQL's does; and pg_file_settings'
// ssl lines. Parameters come from vm-install's drop-in alone (postgresql.conf sets none of these here).

/** pg_settings' rows the double knows: context and built-in default, as PostgreSQL 14 has them. */
const PARAMETERS: Record<string, { context: string; value: string }> = {
  work_mem: { context: "user", value: "4MB" },
  statement_timeout: { context: "user", value: "0" },
  log_min_duration_statement: { context: "superuser", value: "-1" },
  shared_buffers: { context: "postmaster", value: "128MB" },
  max_connections: { context: "postmaster", value: "100" },
};

/** Parameter values by name: `read` at the last reload or restart, `live` what the server runs with. */
export interface PgParams {
  read: Record<string, string>;
  live: Record<string, string>;
}

/** The drop-in's lines of known parameters, name -> value (quotes off), as the server parses them. */
function fileParams(dropIn: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of (dropIn ?? "").matchAll(/^([a-z_]+) = '((?:[^']|'')*)'$/gm))
    if (m[1] in PARAMETERS) out[m[1]] = m[2].replace(/''/g, "'");
  return out;
}

/** A reload (applies all but postmaster parameters) or a start (applies all) reading the drop-in. */
export function readDropIn(state: { params?: PgParams }, dropIn: string | undefined, start: boolean): void {
  const read = fileParams(dropIn);
  const live = { ...state.params?.live };
  for (const [name, p] of Object.entries(PARAMETERS)) {
    if (!start && p.context === "postmaster") continue;
    if (name in read) live[name] = read[name];
    else delete live[name];
  }
  state.params = { read, live };
}

/** pg_settings' pending_restart: postmaster parameters whose value read differs from the one running. */
export function pendingRestart(params: PgParams | undefined): string[] {
  if (!params) return [];
  return Object.keys(PARAMETERS)
    .filter((n) => PARAMETERS[n].context === "postmaster" && params.read[n] !== params.live[n])
    .sort();
}

/** parameters-server.ts parameterFactsSql's answer, for the names the query carries as JSON data. */
export function parameterFacts(sql: string, params: PgParams | undefined, dropIn: string): object {
  const literal = /'(\[.*?\])'::json/.exec(sql)?.[1];
  if (!literal) throw new Error(`PostgresVm: pg_settings SQL without its names:\n${sql}`);
  const names = JSON.parse(literal.replace(/''/g, "'")) as string[];
  const pending = pendingRestart(params);
  const known = Object.fromEntries(
    names
      .filter((n) => PARAMETERS[n])
      .map((n) => {
        const live = params?.live[n];
        const fact = { name: n, value: live ?? PARAMETERS[n].value, context: PARAMETERS[n].context };
        const source = live === undefined ? { sourcefile: null, source: "default" } : { sourcefile: dropIn };
        return [n, { ...fact, pending_restart: pending.includes(n), source: "configuration file", ...source }];
      }),
  );
  return { known, all: names.every((n) => PARAMETERS[n]) ? null : Object.keys(PARAMETERS).sort() };
}

/** pg_file_settings' ssl lines (Debian's postgresql.conf, then the TLS drop-in when there) and the defaults. */
export function sslFileSettings(conf: string, snakeoil: { cert: string; key: string }, tls?: Record<string, string>) {
  const lines = [
    { name: "ssl", setting: "on", file: conf },
    { name: "ssl_cert_file", setting: snakeoil.cert, file: conf },
    { name: "ssl_key_file", setting: snakeoil.key, file: conf },
  ];
  if (tls)
    lines.push(
      { name: "ssl", setting: "on", file: tls.dropIn },
      { name: "ssl_cert_file", setting: tls.cert, file: tls.dropIn },
      { name: "ssl_key_file", setting: tls.key, file: tls.dropIn },
    );
  return { lines, defaults: { ssl: "off", ssl_cert_file: "server.crt", ssl_key_file: "server.key" } };
}
