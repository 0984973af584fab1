// What the server has of `extensions` (read before any change), and the two changes made for them: the
// packages installed, CREATE EXTENSION in the application database. Names go to psql as JSON data in a
// psql variable and are quoted by the server (format %I); nothing user-given is pasted into SQL.

import type { ExtensionFacts } from "./extensions";
import type { PostgresGrants } from "./grants";
import { psqlMetaQuote, type ServerState } from "./pg";
import type { Run } from "./run";
import { installPackages, psql, psqlJson } from "./server";

const NAMES = (names: string[]) => `\\set ext ${psqlMetaQuote(JSON.stringify(names))}\n`;

/** Of `wanted`, those the server has a control file for; shared_preload_libraries and whether it waits. */
const AVAILABLE_SQL = `SELECT json_build_object(
  'available', coalesce((SELECT json_agg(name ORDER BY name) FROM pg_available_extensions
                         WHERE name IN (SELECT json_array_elements_text(:'ext'::json))), '[]'::json),
  'preload', current_setting('shared_preload_libraries'),
  'preload_pending', (SELECT pending_restart FROM pg_settings WHERE name = 'shared_preload_libraries')
);
`;

const INSTALLED_SQL =
  "SELECT json_build_object('installed', coalesce(json_agg(extname ORDER BY extname), '[]'::json)) " +
  "FROM pg_extension;\n";

/** The extensions this installer created in `db` of `cluster`, per the inventory. */
export function recordedExtensions(recorded: PostgresGrants | undefined, cluster: string, db: string): string[] {
  return recorded?.extensions?.[`${cluster}:${db}`] ?? [];
}

/** undefined when no extension is wanted or recorded: nothing to read. */
export async function readExtensions(
  run: Run,
  port: number,
  state: ServerState,
  recorded: string[],
): Promise<ExtensionFacts | undefined> {
  const { event, remote, progress } = run;
  const wanted = event.extensions ?? [];
  if (!wanted.length && !recorded.length) return undefined;
  return progress.step(
    "reading the extensions",
    async () => {
      const seen = await psqlJson<Omit<ExtensionFacts, "installed">>(
        remote,
        port,
        NAMES(wanted) + AVAILABLE_SQL,
        "psql (reading pg_available_extensions)",
      );
      const installed = state.database
        ? (
            await psqlJson<Pick<ExtensionFacts, "installed">>(
              remote,
              port,
              INSTALLED_SQL,
              `psql (reading the extensions in ${event.db_name})`,
              event.db_name,
            )
          ).installed
        : [];
      return { ...seen, installed };
    },
    "extensions",
  );
}

/** The packages, then a look that the server now has every extension they were for. */
export async function installExtensionPackages(
  run: Run,
  port: number,
  packages: { name: string; for: string[] }[],
): Promise<undefined> {
  const { event } = run;
  const wanted = packages.flatMap((p) => p.for);
  const names = packages.map((p) => p.name);
  try {
    await installPackages(run.apt, names, `the packages of extension(s) ${wanted.join(", ")}`, {
      update: event.update,
      cacheValidSec: event.cache_valid_sec,
    });
  } catch (err) {
    throw new Error(
      `extensions: ${wanted.join(", ")} ${wanted.length === 1 ? "is" : "are"} not available on the server and ` +
        `${names.join(", ")} could not be installed (${(err as Error).message}); check the extension names, or ` +
        "install their package by hand",
    );
  }
  const seen = await psqlJson<{ available: string[] }>(run.remote, port, NAMES(wanted) + AVAILABLE_SQL, "psql");
  const still = wanted.filter((e) => !seen.available.includes(e));
  if (still.length)
    throw new Error(
      `extensions: ${names.join(", ")} installed, but the server still has no extension ${still.join(", ")}: ` +
        "check the names (pg_available_extensions lists those it has)",
    );
  return undefined;
}

/** CREATE EXTENSION IF NOT EXISTS each, in the application database, in one session. */
export async function createExtensions(run: Run, port: number, names: string[]): Promise<undefined> {
  const db = run.event.db_name;
  const sql =
    NAMES(names) +
    "SELECT format('CREATE EXTENSION IF NOT EXISTS %I', e) " +
    "FROM json_array_elements_text(:'ext'::json) AS t(e) \\gexec\n";
  await run.progress.step(
    `CREATE EXTENSION ${names.join(", ")} in ${db}`,
    () => psql(run.remote, port, sql, `psql (creating extensions in ${db})`, { mutates: true, database: db }),
    "extensions_create",
  );
  return undefined;
}

/** The inventory section with this database's extension list replaced (empty: dropped). */
export function withExtensionRecord(section: PostgresGrants, key: string, record: string[]): PostgresGrants {
  const { extensions: old, ...rest } = section;
  const extensions = { ...(old ?? {}), [key]: record };
  if (!record.length) delete extensions[key];
  return Object.keys(extensions).length ? { ...rest, extensions } : rest;
}
