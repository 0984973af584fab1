// `npm run faults`: runs the fault matrix (__tests__/e2e/faults.test.ts, root, sandbox VMs), then prints
// one line per case (case, outcome, time to recover) and writes that table, with the commit and the date,
// into the README between the faults:matrix markers. Exit status: jest's (1 when any case failed).
// `-- --print` only prints the last recorded run (.cache/faults.json) without running anything.
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { PROJECT_ROOT } from "../lib/bundling/bundle";

export const BEGIN = "<!-- faults:matrix (npm run faults) -->";
export const END = "<!-- /faults:matrix -->";
const RECORDS = path.join(PROJECT_ROOT, ".cache", "faults.json");

interface FaultRecord {
  case: string;
  outcome: string;
  recoverMs: number;
  ok: boolean;
}

function readRecords(file: string): FaultRecord[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as FaultRecord);
}

const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

/** The matrix as a Markdown table, and the line that says where it comes from. */
export function matrix(records: FaultRecord[], meta: { commit: string; date: string; command: string }): string {
  const rows = records.map((r) => `| ${cell(r.case)} | ${r.ok ? "recovered" : "**FAILED**"} | ${cell(r.outcome)} | ${(r.recoverMs / 1000).toFixed(1)} s |`);
  const passed = records.filter((r) => r.ok).length;
  return [
    "| case | result | outcome | time to recover |",
    "| --- | --- | --- | --- |",
    ...rows,
    "",
    `${passed} of ${records.length} cases recovered with nothing lost and no manual step; \`${meta.command}\`, commit ${meta.commit}, ${meta.date}, ${os.cpus().length} cores.`,
  ].join("\n");
}

function main(argv: string[]): number {
  const printOnly = argv.includes("--print");
  let status = 0;
  if (!printOnly) {
    fs.mkdirSync(path.dirname(RECORDS), { recursive: true });
    fs.rmSync(RECORDS, { force: true });
    const jest = spawnSync("npx", ["jest", "--runInBand", "__tests__/e2e/faults.test.ts"], {
      cwd: PROJECT_ROOT,
      stdio: "inherit",
      env: { ...process.env, FAULTS_REPORT: RECORDS, CI: process.env.CI ?? "true" },
    });
    status = jest.status ?? 1;
  }
  const records = readRecords(RECORDS);
  if (records.length === 0) {
    process.stderr.write(`faults: no records in ${RECORDS}\n`);
    return 1;
  }
  const commit = execFileSync("git", ["rev-parse", "--short=12", "HEAD"], { cwd: PROJECT_ROOT, encoding: "utf8" }).trim();
  const table = matrix(records, { commit, date: new Date().toISOString().slice(0, 10), command: "npm run faults" });
  process.stdout.write(`\n${table}\n`);
  if (!printOnly) {
    const readme = path.join(PROJECT_ROOT, "README.md");
    const text = fs.readFileSync(readme, "utf8");
    const start = text.indexOf(BEGIN);
    const end = text.indexOf(END);
    if (start < 0 || end < start) throw new Error(`README.md has no "${BEGIN}" ... "${END}" section`);
    fs.writeFileSync(readme, `${text.slice(0, start + BEGIN.length)}\n${table}\n${text.slice(end)}`);
    process.stdout.write("faults: README.md updated\n");
  }
  return status;
}

if (require.main === module) process.exit(main(process.argv.slice(2)));
