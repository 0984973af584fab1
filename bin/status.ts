// npm run status [-- --json] [--junit FILE]: one row per VM x installer of the deployed stack: status,
// changed, duration, last run, the host key seen, the summary line, and (local target) where the last run's
// progress is kept (operator/status). --junit FILE also writes the rows as a JUnit report for CI (operator/reports).
// Run it in the project folder. Exit code: 0 when every enabled installer is ok, 1 when one failed, is
// partial or has not run, 2 when there is nothing to read (or the report cannot be written).
import * as path from "node:path";
import { renderJunit, writeReportFile } from "../operator/reports/junit";
import { parseReportArgs } from "../operator/reports/report-args";
import { reportSecrets, statusCases } from "../operator/reports/report-cases";
import { readStatus } from "../operator/status/deployed-status";
import type { StatusRow } from "../operator/status/status-rows";
import { renderStatusTable } from "../operator/status/status-table";
import { projectFolder, readProject } from "../operator/terraform-cli";

const say = (line: string) => process.stderr.write(`status: ${line}\n`);

/** Writes the JUnit report; false (having said why) when it cannot. */
function writeJunit(file: string, rows: StatusRow[], projectDir: string): boolean {
  const { config } = readProject(projectDir);
  const secrets = reportSecrets(config, process.env, (setting) => path.resolve(projectDir, setting));
  const timestamp = new Date().toISOString();
  const xml = renderJunit({ title: "vm-install status", cases: statusCases(rows), timestamp, secrets });
  try {
    writeReportFile(file, xml);
  } catch (err) {
    say((err as Error).message);
    return false;
  }
  say(`JUnit report written to ${file}`);
  return true;
}

export function main(argv: string[], projectDir = projectFolder("status")): number {
  const args = parseReportArgs(argv, "status");
  if ("error" in args) {
    say(args.error);
    return 2;
  }
  let rows: StatusRow[];
  try {
    rows = readStatus(projectDir, say);
  } catch (err) {
    say((err as Error).message);
    return 2;
  }
  const colour = !args.json && process.stdout.isTTY === true && !process.env.NO_COLOR;
  process.stdout.write(`${args.json ? JSON.stringify(rows, null, 2) : renderStatusTable(rows, colour)}\n`);
  if (args.junit && !writeJunit(args.junit, rows, projectDir)) return 2;
  return rows.every((r) => r.status === "ok" || r.status === "skipped") ? 0 : 1;
}

if (require.main === module) process.exit(main(process.argv.slice(2)));
