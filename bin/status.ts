// npm run status [-- --json] [--junit FILE]: one row per VM x installer of the deployed stack: status,
// changed, duration, last run, the host key seen, the summary line, and (local target) where the last run's
// progress is kept (lib/operator/status). --junit FILE also writes the rows as a JUnit report for CI
// (lib/operator/reports).
// Run it in the project folder. Exit code: attention when an installer failed, is partial or has not run.
import * as path from "node:path";
import { type CommandSpec, EXIT, runCommand } from "../lib/operator/exit-codes";
import { renderJunit, writeReportFile } from "../lib/operator/reports/junit";
import { parseReportArgs, reportUsage } from "../lib/operator/reports/report-args";
import { reportSecrets, statusCases } from "../lib/operator/reports/report-cases";
import { readStatus } from "../lib/operator/status/deployed-status";
import type { StatusRow } from "../lib/operator/status/status-rows";
import { renderStatusTable } from "../lib/operator/status/status-table";
import { projectFolder, readProject } from "../lib/operator/terraform-cli";

const say = (line: string) => process.stderr.write(`status: ${line}\n`);
const COMMAND: CommandSpec = { name: "status", usage: reportUsage("status") };

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

function main(argv: string[], projectDir = projectFolder("status")): number {
  const args = parseReportArgs(argv);
  let rows: StatusRow[];
  try {
    rows = readStatus(projectDir, say);
  } catch (err) {
    say((err as Error).message);
    return EXIT.error;
  }
  const colour = !args.json && process.stdout.isTTY === true && !process.env.NO_COLOR;
  process.stdout.write(`${args.json ? JSON.stringify(rows, null, 2) : renderStatusTable(rows, colour)}\n`);
  if (args.junit && !writeJunit(args.junit, rows, projectDir)) return EXIT.error;
  return rows.every((r) => r.status === "ok" || r.status === "skipped") ? EXIT.ok : EXIT.attention;
}

if (require.main === module) runCommand(COMMAND, process.argv.slice(2), (argv) => main(argv), { exit: true });
