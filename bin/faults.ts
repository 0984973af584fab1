// `npm run faults`: runs the fault matrix (__tests__/e2e/faults/, root, sandbox VMs), then prints
// one line per case (case, outcome, time to recover), the many-moments cases (one install cut at each
// moment of its progress) as a table per install, and writes that, with the commit and the date, into the
// docs/faults.md between the faults:matrix markers. Exit status: jest's (error when any case failed).
// `-- --print` only prints the last recorded run (.cache/faults.json) without running anything.
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { PROJECT_ROOT } from "../lib/entry-points";
import { optionsSynopsis, parseOptions } from "../lib/operator/command-options";
import { type CommandSpec, EXIT, runCommand } from "../lib/operator/exit-codes";

const BEGIN = "<!-- faults:matrix (npm run faults) -->";
const END = "<!-- /faults:matrix -->";
const RECORDS = path.join(PROJECT_ROOT, ".cache", "faults.json");
const OPTIONS = { print: { type: "boolean" } } as const;
const COMMAND: CommandSpec = { name: "faults", usage: `usage: npm run faults [-- ${optionsSynopsis(OPTIONS)}]` };

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
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/**
 * The many-moments cases (e2e/support/fault-cases.ts): one install cut at many moments of its own progress, recorded
 * as "<install>: <moment>". Each group gets a table of its own, one row per moment.
 */
const MOMENT_GROUPS: Record<string, string> = {
  "postgresql install":
    "dpkg and apt-get killed at moments of one `postgresql` install (29 packages), " +
    "each struck on a line of dpkg's own --status-fd progress",
  "local package":
    "maintainer scripts and triggers cut mid-run (local packages whose scripts block until released or killed)",
};

function groupOf(r: FaultRecord): string | undefined {
  const prefix = r.case.split(": ")[0];
  return r.case.includes(": ") && prefix in MOMENT_GROUPS ? prefix : undefined;
}

/** The matrix as Markdown tables (the single cases, then each many-moments group), and where it comes from. */
export function matrix(records: FaultRecord[], meta: { commit: string; date: string; command: string }): string {
  const row = (name: string, r: FaultRecord) =>
    `| ${cell(name)} | ${r.ok ? "recovered" : "**FAILED**"} | ${cell(r.outcome)} | ${seconds(r.recoverMs)} |`;
  const single = records.filter((r) => !groupOf(r));
  const out = [
    "| case | result | outcome | time to recover |",
    "| --- | --- | --- | --- |",
    ...single.map((r) => row(r.case, r)),
  ];
  for (const [group, title] of Object.entries(MOMENT_GROUPS)) {
    const rows = records.filter((r) => groupOf(r) === group);
    if (rows.length === 0) continue;
    const worst = Math.max(...rows.map((r) => r.recoverMs));
    const recovered = `${rows.filter((r) => r.ok).length} of ${rows.length} moments recovered`;
    out.push(
      "",
      `**${group}**: ${title}; ${recovered}, the slowest in ${seconds(worst)}:`,
      "",
      "| moment | result | what the kill left, and the recovery | time to recover |",
      "| --- | --- | --- | --- |",
      ...rows.map((r) => row(r.case.slice(group.length + 2), r)),
    );
  }
  const passed = records.filter((r) => r.ok).length;
  const where = `\`${meta.command}\`, commit ${meta.commit}, ${meta.date}, ${os.cpus().length} cores`;
  out.push("", `${passed} of ${records.length} cases recovered with nothing lost and no manual step; ${where}.`);
  return out.join("\n");
}

function main(argv: string[]): number {
  const printOnly = parseOptions(OPTIONS, argv).values.print === true;
  let status: number = EXIT.ok;
  if (!printOnly) {
    fs.mkdirSync(path.dirname(RECORDS), { recursive: true });
    fs.rmSync(RECORDS, { force: true });
    const jest = spawnSync("npx", ["jest", "--maxWorkers=4", "__tests__/e2e/faults/"], {
      cwd: PROJECT_ROOT,
      stdio: "inherit",
      env: { ...process.env, FAULTS_REPORT: RECORDS, CI: process.env.CI ?? "true" },
    });
    status = jest.status ?? EXIT.error;
  }
  const records = readRecords(RECORDS);
  if (records.length === 0) {
    process.stderr.write(`faults: no records in ${RECORDS}\n`);
    return EXIT.error;
  }
  const commit = execFileSync("git", ["rev-parse", "--short=12", "HEAD"], {
    cwd: PROJECT_ROOT,
    encoding: "utf8",
  }).trim();
  const table = matrix(records, { commit, date: new Date().toISOString().slice(0, 10), command: "npm run faults" });
  process.stdout.write(`\n${table}\n`);
  if (!printOnly) {
    const readme = path.join(PROJECT_ROOT, "docs", "faults.md");
    const text = fs.readFileSync(readme, "utf8");
    const start = text.indexOf(BEGIN);
    const end = text.indexOf(END);
    if (start < 0 || end < start) throw new Error(`docs/faults.md has no "${BEGIN}" ... "${END}" section`);
    fs.writeFileSync(readme, `${text.slice(0, start + BEGIN.length)}\n${table}\n${text.slice(end)}`);
    process.stdout.write("faults: docs/faults.md updated\n");
  }
  return status;
}

if (require.main === module) runCommand(COMMAND, process.argv.slice(2), main, { exit: true });
