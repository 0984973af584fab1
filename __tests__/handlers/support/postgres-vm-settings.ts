// The settings side of the stateful double (postgres-vm.ts): a few pg_settings parameters of each context,
// the values the server runs with and those its last reading of the files (a reload or a restart) holds, so
// a postmaster parameter read at a reload waits for a restart as PostgreSQL's does; pg_file_settings' lines
// (Debian's postgresql.conf, then vm-install's drop-in) and the ssl ones. Values are shown as SHOW prints
// them, from a table of PostgreSQL 14's own words for the texts the states write (not from the handler's code).

/** pg_settings' rows the double knows, as PostgreSQL 14 has them; `conf`: Debian's postgresql.conf line. */
const PARAMETERS: Record<
  string,
  { context: string; unit: string | null; boot_val: string; min_val: string; max_val: string; conf?: string }
> = {
  work_mem: { context: "user", unit: "kB", boot_val: "4096", min_val: "64", max_val: "2147483647" },
  statement_timeout: { context: "user", unit: "ms", boot_val: "0", min_val: "0", max_val: "2147483647" },
  log_min_duration_statement: {
    context: "superuser",
    unit: "ms",
    boot_val: "-1",
    min_val: "-1",
    max_val: "2147483647",
  },
  shared_buffers: {
    context: "postmaster",
    unit: "8kB",
    boot_val: "16384",
    min_val: "16",
    max_val: "1073741823",
    conf: "128MB",
  },
  max_connections: {
    context: "postmaster",
    unit: null,
    boot_val: "100",
    min_val: "1",
    max_val: "262143",
    conf: "100",
  },
};

/** SHOW's words (PostgreSQL 14) for the texts a state or an event sets, where they differ from the text. */
const SHOWN: Record<string, Record<string, string>> = {
  work_mem: { "4096": "4MB" },
  statement_timeout: { "512": "512ms" },
  log_min_duration_statement: { "250": "250ms", "1000": "1s", "512": "512ms" },
  shared_buffers: { "512": "4MB", "16384": "128MB" },
};
const shown = (name: string, text: string) => SHOWN[name]?.[text] ?? text;

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

/**
 * parameters-server.ts parameterFactsSql's answer, for the names the query carries as JSON data: the value
 * running (the drop-in's as last read, else postgresql.conf's, else the default) and the files' lines now.
 */
export function parameterFacts(
  sql: string,
  params: PgParams | undefined,
  files: { dropIn: string; conf: string; dropInText?: string },
): object {
  const literal = /'(\[.*?\])'::json/.exec(sql)?.[1];
  if (!literal) throw new Error(`PostgresVm: pg_settings SQL without its names:\n${sql}`);
  const names = JSON.parse(literal.replace(/''/g, "'")) as string[];
  const pending = pendingRestart(params);
  const inDropIn = fileParams(files.dropInText);
  const known = Object.fromEntries(
    names
      .filter((n) => PARAMETERS[n])
      .map((n) => {
        const { context, unit, boot_val, min_val, max_val, conf } = PARAMETERS[n];
        const live = params?.live[n];
        const text = live ?? conf ?? boot_val;
        const from = live !== undefined ? files.dropIn : conf !== undefined ? files.conf : null;
        const lines = [
          ...(conf === undefined ? [] : [{ setting: conf, file: files.conf }]),
          ...(n in inDropIn ? [{ setting: inDropIn[n], file: files.dropIn }] : []),
        ];
        const fact = { name: n, value: shown(n, text), context, pending_restart: pending.includes(n) };
        const type = { vartype: "integer", unit, enumvals: null, min_val, max_val, boot_val, lines };
        return [n, { ...fact, sourcefile: from, source: from ? "configuration file" : "default", ...type }];
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
