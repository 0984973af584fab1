// What a test run took, from jest's JSON reports: bin/test prints the ten slowest suites, what the machine
// spent (CPU seconds, processes started), then the one summary line CI reads ("N passed, N failed, N
// skipped"), over every report in its folder (one per jest run; bin/test runs one). `npm run test:times
// [-- <suite>]` breaks the slowest suite (or the one named by a part of its path) down by case, from the
// last run's reports, so where the time goes is one command away.
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_ROOT } from "../lib/entry-points";
import { parseOptions } from "../lib/operator/command-options";
import { BadUsage, type CommandSpec, EXIT, runCommand } from "../lib/operator/exit-codes";

/** --summary is bin/test's; a suite's name, --summary and --durations go one at a time. */
const OPTIONS = { summary: { type: "boolean" }, durations: { type: "boolean" } } as const;
const COMMAND: CommandSpec = {
  name: "test:times",
  usage: "usage: npm run test:times [-- <part of a suite's path> | --durations]   (bin/test runs it with --summary)",
};

interface JestCase {
  fullName: string;
  status: string;
  duration?: number | null;
}
interface JestSuite {
  name: string;
  startTime: number;
  endTime: number;
  assertionResults: JestCase[];
}
export interface JestReport {
  numPassedTests: number;
  numFailedTests: number;
  numRuntimeErrorTestSuites: number;
  numPendingTests: number;
  numTodoTests: number;
  testResults: JestSuite[];
}

/** Where bin/test has jest write its reports: one per jest run, all read together. */
const REPORT_DIR = path.join(PROJECT_ROOT, ".cache", "jest-reports");

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const relative = (file: string) => path.relative(PROJECT_ROOT, file) || file;

const bySpan = (suites: JestSuite[]) => [...suites].sort((a, b) => b.endTime - b.startTime - (a.endTime - a.startTime));

/** The summary line of several reports together. */
export function summaryLine(reports: JestReport[]): string {
  const sum = (f: (r: JestReport) => number) => reports.reduce((n, r) => n + f(r), 0);
  const failed = sum((r) => r.numFailedTests + r.numRuntimeErrorTestSuites);
  const skipped = sum((r) => r.numPendingTests + r.numTodoTests);
  return `${sum((r) => r.numPassedTests)} passed, ${failed} failed, ${skipped} skipped`;
}

/** The `n` slowest suites, one line each: seconds, path, number of cases. */
export function slowestSuites(reports: JestReport[], n = 10): string[] {
  return bySpan(reports.flatMap((r) => r.testResults))
    .slice(0, n)
    .map(
      (s) =>
        `${seconds(s.endTime - s.startTime).padStart(8)}  ${relative(s.name)} (${s.assertionResults.length} cases)`,
    );
}

/** One suite's cases, slowest first; `which` is a part of its path, else the slowest suite. */
export function suiteBreakdown(reports: JestReport[], which?: string): string[] {
  const suites = reports.flatMap((r) => r.testResults);
  const chosen = which ? suites.filter((s) => relative(s.name).includes(which)) : bySpan(suites).slice(0, 1);
  if (chosen.length === 0) throw new BadUsage(`no suite in the last run's reports has "${which}" in its path`);
  return chosen.flatMap((s) => [
    `${relative(s.name)}: ${seconds(s.endTime - s.startTime)}, ${s.assertionResults.length} cases`,
    ...[...s.assertionResults]
      .sort((a, b) => (b.duration ?? 0) - (a.duration ?? 0))
      .map((c) => `${seconds(c.duration ?? 0).padStart(8)}  ${c.status.padEnd(7)} ${c.fullName}`),
  ]);
}

/** Where the sequencer (__tests__/support/longest-first.js) finds durations on a machine with no jest cache. */
const DURATIONS_FILE = path.join(PROJECT_ROOT, "__tests__", "support", "suite-durations.json");

/** A suite's path from its checkout's root (`__tests__/...`), whichever checkout's report it comes from. */
const suiteKey = (file: string) => {
  const at = file.lastIndexOf(`${path.sep}__tests__${path.sep}`);
  return at < 0 ? relative(file) : file.slice(at + 1);
};

/** Each suite's seconds, by path from the project root, sorted by path (a stable diff when rewritten). */
export function suiteDurations(reports: JestReport[]): Record<string, number> {
  const entries = reports
    .flatMap((r) => r.testResults)
    .map((s) => [suiteKey(s.name), Math.round((s.endTime - s.startTime) / 100) / 10] as const)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return Object.fromEntries(entries);
}

/** Where bin/test keeps /proc/stat as it was when the run began (the file's time is the start). */
const MACHINE_START = path.join(PROJECT_ROOT, ".cache", "test-machine-start.stat");

/** /proc/stat's aggregate cpu line (USER_HZ ticks: 1/100 s on Linux) and its process count. */
function procStat(text: string): { user: number; system: number; busy: number; total: number; processes: number } {
  const cpu = /^cpu\s+(.*)$/m.exec(text)?.[1].trim().split(/\s+/).map(Number) ?? [];
  const processes = Number(/^processes\s+(\d+)$/m.exec(text)?.[1]);
  if (cpu.length < 7 || cpu.some((n) => !Number.isFinite(n)) || !Number.isFinite(processes)) {
    throw new Error("not /proc/stat: no cpu line of at least seven counters, or no processes line");
  }
  const [user, nice, system, idle, iowait, irq, softirq, steal = 0] = cpu;
  const busy = user + nice + system + irq + softirq + steal;
  return { user: user + nice, system, busy, total: busy + idle + iowait, processes };
}

/**
 * What the machine did during the run, from /proc/stat at its start and end: CPU seconds busy (user, system)
 * of those the cores had, and processes started. Wall time varies with the machine and its load; the CPU
 * and, above all, the process count say what the suites cost wherever they run.
 */
export function machineLine(start: string, end: string, elapsedMs: number): string {
  const [a, b] = [procStat(start), procStat(end)];
  const s = (ticks: number) => `${Math.round(ticks / 100)} s`;
  return (
    `machine: ${Math.round(elapsedMs / 1000)} s; CPU busy ${s(b.busy - a.busy)} of ${s(b.total - a.total)} ` +
    `(user ${s(b.user - a.user)}, system ${s(b.system - a.system)}); ${b.processes - a.processes} processes started`
  );
}

/** machineLine for this run, or nothing where there is no /proc/stat or no start snapshot. */
function thisRunsMachineLine(): string[] {
  try {
    const start = fs.readFileSync(MACHINE_START, "utf8");
    const elapsed = Date.now() - fs.statSync(MACHINE_START).mtimeMs;
    return [machineLine(start, fs.readFileSync("/proc/stat", "utf8"), elapsed)];
  } catch {
    return [];
  }
}

/** The reports in `dir` (bin/test's), oldest first; a missing or empty file is an error of the run. */
function readReports(dir = REPORT_DIR): JestReport[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), "utf8")) as JestReport);
}

function main(argv: string[]): number {
  const { values, positionals } = parseOptions(OPTIONS, argv, 1);
  if (argv.length > 1) throw new BadUsage(`unexpected ${argv.slice(1).join(" ")}`);
  const reports = readReports();
  if (values.summary) {
    if (reports.length === 0) {
      process.stdout.write("0 passed, 1 failed\n");
      return EXIT.error;
    }
    const lines = ["slowest suites:", ...slowestSuites(reports), ...thisRunsMachineLine(), summaryLine(reports)];
    process.stdout.write(`${lines.join("\n")}\n`);
    return EXIT.ok;
  }
  if (reports.length === 0) {
    process.stderr.write(`test:times: no reports under ${relative(REPORT_DIR)}: run npm test first\n`);
    return EXIT.error;
  }
  if (values.durations) {
    fs.writeFileSync(DURATIONS_FILE, `${JSON.stringify(suiteDurations(reports), null, 2)}\n`);
    process.stdout.write(`test:times: wrote ${relative(DURATIONS_FILE)}\n`);
    return EXIT.ok;
  }
  process.stdout.write(`${suiteBreakdown(reports, positionals[0]).join("\n")}\n`);
  return EXIT.ok;
}

if (require.main === module) runCommand(COMMAND, process.argv.slice(2), main, { exit: true });
