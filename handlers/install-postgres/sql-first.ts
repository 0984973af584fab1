// SQL run first in an exec as postgres whose stdin carries more after it (the role and database before the
// configuration's writes, plan-joins.ts: one exec where there were two, issue 30). Its bytes come first on
// stdin and head -c reads no more than them; its status is 100 + psql's, so the error names the SQL's step.

import { type CommandError, commandFailed, type RunResult } from "../common/exec";
import { psqlLine } from "./server";

/** SQL run first in the configuration's exec, in its own psql session (the role and database: plan-joins.ts). */
export interface SqlFirst {
  sql: string;
  /** How errors name it ("psql (role and database)"). */
  label: string;
  /** Its words in the progress (the change's lines). */
  step: string;
}

/** The exit status of the configuration's exec when the SQL run first failed: 100 + psql's own. */
const SQL_FIRST_FAILED = 100;

/** psql as postgres on the next bytes of stdin (head -c reads no more), its output dropped; 100 + its status. */
export function sqlFromStdin(port: number, sql: string): string {
  const psql = `export PGCLIENTENCODING=UTF8 LC_MESSAGES=C; ${psqlLine(port)}`;
  return `{ head -c ${Buffer.byteLength(sql)} | (${psql}) >/dev/null || exit $((${SQL_FIRST_FAILED} + $?)); }`;
}

/**
 * The joined exec's error, from its result run with `check: false`: named after the SQL run first when that is
 * what failed (its status 100 + psql's), else after the whole exec; undefined when it succeeded.
 */
export function joinedFailure(r: RunResult, command: string, label: string, first: SqlFirst): CommandError | undefined {
  if (r.code === 0) return undefined;
  if (r.code !== null && r.code > SQL_FIRST_FAILED)
    return commandFailed(first.label, command, r, r.code - SQL_FIRST_FAILED);
  return commandFailed(label, command, r);
}
