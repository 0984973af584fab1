// npm run status [-- --json]: one row per VM x installer of the deployed stack: status, changed, duration,
// last run, the host key seen, the summary line, and (local target) where the last run's progress is
// kept (lib/status). Run it in the project folder. Exit code: 0 when every enabled installer is ok, 1 when
// one failed, is partial or has not run, 2 when there is nothing to read.
import { readStatus } from "../lib/status/deployed-status";
import type { StatusRow } from "../lib/status/status-rows";
import { renderStatusTable } from "../lib/status/status-table";
import { projectFolder } from "../lib/terraform-cli";

const say = (line: string) => process.stderr.write(`status: ${line}\n`);

export function main(argv: string[], projectDir = projectFolder("status")): number {
  const json = argv.includes("--json");
  const unknown = argv.filter((a) => a !== "--json");
  if (unknown.length) {
    say(`unknown argument ${unknown[0]}; usage: npm run status [-- --json]`);
    return 2;
  }
  let rows: StatusRow[];
  try {
    rows = readStatus(projectDir, say);
  } catch (err) {
    say((err as Error).message);
    return 2;
  }
  const colour = !json && process.stdout.isTTY === true && !process.env.NO_COLOR;
  process.stdout.write(`${json ? JSON.stringify(rows, null, 2) : renderStatusTable(rows, colour)}\n`);
  return rows.every((r) => r.status === "ok" || r.status === "skipped") ? 0 : 1;
}

if (require.main === module) process.exit(main(process.argv.slice(2)));
