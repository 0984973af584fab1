// `extensions`: created in the application database, their package installed when the distribution ships
// it apart from the server, their library added to shared_preload_libraries (in the drop-in, with the
// restart that needs) when they work only preloaded. Pure: what the server has -> the changes' lines. One
// removed from the settings is reported, never dropped (DROP EXTENSION loses the data its objects hold).

import { confValue, type ParameterPlan, parseDropIn } from "./parameters";

/**
 * Extensions that work only when their library is loaded at postmaster start: pg_stat_statements sets up
 * its shared hash table then (the view fails otherwise), pg_cron and pg_squeeze start background workers,
 * timescaledb refuses to load later, pgaudit's hooks must be in every backend from its start.
 */
const PRELOAD: Record<string, string> = {
  pg_stat_statements: "pg_stat_statements",
  pg_cron: "pg_cron",
  pg_squeeze: "pg_squeeze",
  timescaledb: "timescaledb",
  pgaudit: "pgaudit",
};

/**
 * Debian/PGDG packages of extensions not in postgresql-<major> (contrib is in it); others are looked for
 * as postgresql-<major>-<name> (underscores as hyphens), the Debian naming.
 */
const PACKAGES: Record<string, (major: string) => string> = {
  vector: (m) => `postgresql-${m}-pgvector`,
  postgis: (m) => `postgresql-${m}-postgis-3`,
  postgis_raster: (m) => `postgresql-${m}-postgis-3`,
  postgis_topology: (m) => `postgresql-${m}-postgis-3`,
  postgis_tiger_geocoder: (m) => `postgresql-${m}-postgis-3`,
  address_standardizer: (m) => `postgresql-${m}-postgis-3`,
  pg_cron: (m) => `postgresql-${m}-cron`,
  pg_repack: (m) => `postgresql-${m}-repack`,
  pg_partman: (m) => `postgresql-${m}-partman`,
  pg_squeeze: (m) => `postgresql-${m}-squeeze`,
  pg_hint_plan: (m) => `postgresql-${m}-pg-hint-plan`,
  plpython3u: (m) => `postgresql-plpython3-${m}`,
  plperl: (m) => `postgresql-plperl-${m}`,
  plperlu: (m) => `postgresql-plperl-${m}`,
  pltcl: (m) => `postgresql-pltcl-${m}`,
};

function extensionPackage(name: string, major: string): string {
  return PACKAGES[name]?.(major) ?? `postgresql-${major}-${name.replace(/_/g, "-")}`;
}

/** What the server has (extensions-server.ts readExtensions). */
export interface ExtensionFacts {
  /** Extensions whose control file the server has (pg_available_extensions), of those wanted. */
  available: string[];
  /** Extensions in the application database (none when it does not exist yet). */
  installed: string[];
  /** shared_preload_libraries as the server runs it, and waiting for a restart. */
  preload: string;
  preload_pending: boolean;
}

export interface ExtensionPlan {
  /** Packages to install, with the extensions each is for. */
  packages: { name: string; for: string[] }[];
  /** To CREATE EXTENSION in the database. */
  create: string[];
  /** The inventory's list for this database afterwards. */
  record: string[];
  /** Recorded, no longer wanted, still there: reported, left in place. */
  left: string[];
}

/** Pure. `facts` undefined: no server to read (a check predicting a new cluster): packages are not foreseen. */
export function planExtensions(
  wanted: string[],
  major: string,
  facts: ExtensionFacts | undefined,
  recorded: string[],
): ExtensionPlan {
  const installed = facts?.installed ?? [];
  const missing = facts ? wanted.filter((e) => !facts.available.includes(e)) : [];
  const packages: ExtensionPlan["packages"] = [];
  for (const e of missing) {
    const name = extensionPackage(e, major);
    const found = packages.find((p) => p.name === name);
    if (found) found.for.push(e);
    else packages.push({ name, for: [e] });
  }
  const create = wanted.filter((e) => !installed.includes(e));
  const record = [...new Set([...recorded.filter((e) => wanted.includes(e)), ...create])].sort();
  // One dropped since (by the admin) is only forgotten: saying it is left in place would act on a stale record.
  const left = recorded.filter((e) => !wanted.includes(e) && (!facts || installed.includes(e)));
  return { packages, create, record, left };
}

/** The libraries of a shared_preload_libraries value (names may be double-quoted). */
export function libraries(value: string): string[] {
  return value
    .split(",")
    .map((s) => s.trim().replace(/^"(.*)"$/, "$1"))
    .filter(Boolean);
}

/**
 * The parameters' plan with shared_preload_libraries added for `wanted` extensions that need it: the
 * running value (what the admin set elsewhere included) plus the missing libraries, written to the drop-in,
 * which is read last and so must carry them all; a restart loads them. A line already there is kept.
 */
export function withPreload(
  params: ParameterPlan,
  wanted: string[],
  facts: ExtensionFacts | undefined,
  dropInText: string | null,
  dropIn: string,
): ParameterPlan {
  const name = "shared_preload_libraries";
  const written = parseDropIn(dropInText).get(name);
  const live = libraries(facts?.preload ?? "");
  const needed = wanted.flatMap((e) => (PRELOAD[e] ? [PRELOAD[e]] : []));
  const missing = needed.filter((l) => !live.includes(l));
  if (!missing.length) {
    if (written === undefined) return params;
    const waiting = facts?.preload_pending && needed.length > 0;
    return {
      ...params,
      settings: { ...params.settings, [name]: written },
      restart: waiting ? [...params.restart, name] : params.restart,
      lines: waiting ? [...params.lines, `${name} ${written} applied (it was waiting for a restart)`] : params.lines,
    };
  }
  const text = confValue([...live, ...missing].join(","));
  const line =
    text === written
      ? `${name} ${text} applied (it was waiting for a restart)`
      : `${name} '${live.join(",")}' -> ${text} (${dropIn}, restart; for ${missing.join(", ")})`;
  return {
    ...params,
    settings: { ...params.settings, [name]: text },
    changed: params.changed || text !== written,
    restart: [...params.restart, name],
    lines: [...params.lines, line],
  };
}

export function createdLine(extension: string, db: string): string {
  return `extension ${extension} created in database ${db}`;
}

export function leftLine(extension: string, db: string): string {
  return (
    `extension ${extension} in database ${db} is no longer in the settings: left in place (dropping loses ` +
    `data; DROP EXTENSION ${extension} by hand if it is no longer used), no longer recorded`
  );
}
