// install-postgres' configuration exec (configuration.ts writeConfiguration) read back, for doubles: the files it
// writes, in order, each its byte count of stdin, and the SQL of the psql check after them.

import { writtenFiles } from "./remote-writes";

export interface ConfigWrite {
  files: { path: string; content: string }[];
  /** The check's SQL (carried in base64 on the command line). */
  sql?: string;
}

/** The command's writes and check; undefined when `command` is not that exec. */
export function configWriteOf(command: string, stdin: string): ConfigWrite | undefined {
  const sql = /echo ([A-Za-z0-9+/=]+) \| base64 -d \| \(cd \/ && psql /.exec(command)?.[1];
  const files = writtenFiles(command, stdin);
  if (!files.length && !(sql && command.startsWith("{ export PGCLIENTENCODING"))) return undefined;
  return { files, sql: sql === undefined ? undefined : Buffer.from(sql, "base64").toString() };
}
