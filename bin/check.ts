// npm run check [-- --json] [--junit FILE]: runs every enabled installer of every deployed VM in check mode from this
// machine (lib/operator/check) and prints what a deploy would change on each: the drift table. Nothing on any VM
// changes. The address and the host key the jobs require come from the deployed state, the user, port,
// key file and the installers' settings from cdktf.json, secrets from their TF_VAR_ variables.
// --junit FILE also writes the rows as a JUnit report; exit code: nothing would change, or drift (docs/exit-codes.md).
import * as path from "node:path";
import type { VmInstallConfig } from "../lib/construct/config/types";
import { checkTargets } from "../lib/operator/check/check-targets";
import { renderDriftTable } from "../lib/operator/check/drift-table";
import { exitCode, runChecks } from "../lib/operator/check/run-checks";
import { settingsChanged } from "../lib/operator/check/settings-changed";
import { type CommandSpec, EXIT, runCommand } from "../lib/operator/exit-codes";
import { renderJunit, writeReportFile } from "../lib/operator/reports/junit";
import { parseReportArgs, reportUsage } from "../lib/operator/reports/report-args";
import { driftCases, reportSecrets } from "../lib/operator/reports/report-cases";
import { readDeployed, readShownState } from "../lib/operator/status/deployed-status";
import { projectFolder } from "../lib/operator/terraform-cli";

const say = (line: string) => process.stderr.write(`check: ${line}\n`);
const COMMAND: CommandSpec = { name: "check", usage: reportUsage("check") };

async function main(argv: string[], projectDir = projectFolder("check")): Promise<number> {
  const args = parseReportArgs(argv);
  let targets: ReturnType<typeof checkTargets>;
  let logDir: string;
  let config: VmInstallConfig;
  try {
    const deployed = readDeployed(projectDir, say);
    config = deployed.config;
    const outputs = deployed.outputs;
    targets = checkTargets(config, outputs, (setting) => path.resolve(projectDir, setting));
    logDir = path.join(projectDir, ".vm-install", config.stackName, "logs");
  } catch (err) {
    say((err as Error).message);
    return EXIT.error;
  }
  const rows = await runChecks(targets, { logDir, projectDir, say });
  const colour = !args.json && process.stdout.isTTY === true && !process.env.NO_COLOR;
  // Which fix each drift takes: a deploy where cdktf.json changed since the last one, else a rerun.
  const changed = rows.some((r) => r.state === "drift")
    ? settingsChanged(config, readShownState(projectDir))
    : undefined;
  process.stdout.write(`${args.json ? JSON.stringify(rows, null, 2) : renderDriftTable(rows, colour, changed)}\n`);
  if (args.junit) {
    const secrets = reportSecrets(config, process.env, (setting) => path.resolve(projectDir, setting));
    const timestamp = new Date().toISOString();
    const xml = renderJunit({ title: "vm-install check", cases: driftCases(rows), timestamp, secrets });
    try {
      writeReportFile(args.junit, xml);
    } catch (err) {
      say((err as Error).message);
      return EXIT.error;
    }
    say(`JUnit report written to ${args.junit}`);
  }
  return exitCode(rows);
}

if (require.main === module) runCommand(COMMAND, process.argv.slice(2), (argv) => main(argv));
