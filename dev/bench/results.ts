// The results file every benchmark writes (dev/bench/results/<bench>.json): every round's figure per side,
// medians with min and max, the ratios, the commit measured and the date. `npm run bench:report` builds
// docs/benchmarks.md's table from these files alone (dev/bench/report.ts), so the two cannot disagree.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { PROJECT_ROOT } from "../../lib/entry-points";
import { pairedRatio, type RoundRecord, type RoundsOutcome, ratio, type Stats } from "./rounds";

const RESULTS_DIR = path.join(__dirname, "results");
/** The 1-minute load average when the bench started (this module loads with it): how busy the shared machine was. */
const LOAD_AT_START = Math.round(os.loadavg()[0] * 100) / 100;

export interface SideResult extends Stats {
  label: string;
}

export interface ComparisonResult {
  /** The docs/benchmarks.md row's name, e.g. "install-packages". */
  label: string;
  project: string;
  baseline: string;
  /** median(project) / median(baseline). */
  ratio: number;
  /** Median over rounds of project/baseline within one round. */
  paired_ratio: number;
  /** ratio must be at most this (unless target_added_ms is given). */
  target: number;
  /** Instead of a ratio: the project side may add at most this many ms to the baseline (medians). */
  target_added_ms?: number;
  met: boolean;
  /** A series measured alongside the project side (e.g. the rerun) shown in the same row. */
  rerun?: string;
}

/** A figure taken with the project side but not rotated against anything (a rerun on the same VM). */
export interface SeriesResult extends Stats {
  label: string;
  /** Target in ms, if any. */
  target_ms?: number;
  met?: boolean;
}

export interface BenchResult {
  bench: string;
  /** How to measure it again. */
  command: string;
  date: string;
  commit: string;
  /** True when the working tree differed from the commit (other work in progress): see dirty_files. */
  dirty: boolean;
  dirty_files: string[];
  rounds: number;
  /** What exactly each side does. */
  description: string;
  sides: Record<string, SideResult>;
  comparisons: ComparisonResult[];
  series: Record<string, SeriesResult>;
  /** Every measured run: round, order within the round (1 = first), side, ms, and whatever the bench kept. */
  runs: RoundRecord[];
  /** Defaults this bench cannot exercise here, and the nearest path it measures instead. */
  not_exercised: string[];
  /** 1-minute load averages: the machine is shared, and a busy one stretches every side. */
  machine: { cpus: number; load1_at_start: number; load1_at_end: number };
}

function git(args: string[]): string {
  try {
    // Only the end is trimmed: `git status --porcelain` lines start with a status column that may be a space.
    return execFileSync("git", args, {
      cwd: PROJECT_ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trimEnd();
  } catch {
    return "";
  }
}

/** HEAD and whether the tree differs from it (results files themselves do not count). */
export function commitInfo(): { commit: string; dirty: boolean; dirty_files: string[] } {
  const commit = git(["rev-parse", "HEAD"]) || "unknown";
  const files = git(["status", "--porcelain", "--untracked-files=all"])
    .split("\n")
    .map((l) => l.slice(3).trim())
    .filter((f) => f && !f.startsWith("dev/bench/results/"));
  return { commit, dirty: files.length > 0, dirty_files: files.sort() };
}

export interface BuildOptions {
  bench: string;
  command: string;
  description: string;
  outcome: RoundsOutcome;
  sideLabels: Record<string, string>;
  comparisons: {
    label: string;
    project: string;
    baseline: string;
    target: number;
    targetAddedMs?: number;
    rerun?: string;
  }[];
  series?: Record<string, { label: string; ms: number[]; target_ms?: number } & Partial<Stats>>;
  notExercised?: string[];
  /** Taken before measuring, so files written during the run do not count. */
  commit: { commit: string; dirty: boolean; dirty_files: string[] };
}

export function buildResult(o: BuildOptions, now = new Date()): BenchResult {
  const sides: Record<string, SideResult> = {};
  for (const [name, s] of Object.entries(o.outcome.stats)) sides[name] = { label: o.sideLabels[name] ?? name, ...s };
  const comparisons = o.comparisons.map((c) => {
    const r = ratio(o.outcome, c.project, c.baseline);
    return {
      label: c.label,
      project: c.project,
      baseline: c.baseline,
      ratio: r,
      paired_ratio: pairedRatio(o.outcome, c.project, c.baseline),
      target: c.target,
      ...(c.targetAddedMs !== undefined ? { target_added_ms: c.targetAddedMs } : {}),
      met:
        c.targetAddedMs !== undefined
          ? o.outcome.stats[c.project].median - o.outcome.stats[c.baseline].median <= c.targetAddedMs
          : r <= c.target,
      ...(c.rerun ? { rerun: c.rerun } : {}),
    };
  });
  const series: Record<string, SeriesResult> = {};
  for (const [name, s] of Object.entries(o.series ?? {})) {
    const xs = s.ms.map(Math.round);
    const sorted = [...xs].sort((a, b) => a - b);
    const med =
      sorted.length % 2
        ? sorted[(sorted.length - 1) / 2]
        : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
    series[name] = {
      label: s.label,
      median: med,
      min: sorted[0],
      max: sorted[sorted.length - 1],
      ms: xs,
      ...(s.target_ms !== undefined ? { target_ms: s.target_ms, met: med <= s.target_ms } : {}),
    };
  }
  return {
    bench: o.bench,
    command: o.command,
    date: now.toISOString(),
    ...o.commit,
    rounds: o.outcome.rounds,
    description: o.description,
    sides,
    comparisons,
    series,
    runs: o.outcome.records,
    not_exercised: o.notExercised ?? [],
    machine: {
      cpus: os.cpus().length,
      load1_at_start: LOAD_AT_START,
      load1_at_end: Math.round(os.loadavg()[0] * 100) / 100,
    },
  };
}

/** Writes dev/bench/results/<bench>.json (stable key order, trailing newline); returns its path. */
export function writeResult(result: BenchResult): string {
  fs.mkdirSync(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, `${result.bench}.json`);
  fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  return file;
}

/** A comparison's target in words: "target <= 1.1", or "+34 ms, target <= +300 ms" for an added-time target. */
export function targetText(result: BenchResult, c: ComparisonResult): string {
  if (c.target_added_ms === undefined) return `target <= ${c.target}`;
  const added = result.sides[c.project].median - result.sides[c.baseline].median;
  return `+${Math.round(added)} ms, target <= +${c.target_added_ms} ms`;
}

/** The comparisons and series as lines for the bench's own output. */
export function summaryLines(result: BenchResult, fmt: (ms: number) => string): string[] {
  const lines: string[] = [];
  const d = (s: Stats) =>
    `median ${fmt(s.median)}  (min ${fmt(s.min)}, max ${fmt(s.max)})  [${s.ms.map(fmt).join(", ")}]`;
  for (const [name, s] of Object.entries(result.sides)) lines.push(`${s.label} (${name}): ${d(s)}`);
  const met = (m: boolean | undefined) => (m ? "met" : "NOT met");
  for (const [name, s] of Object.entries(result.series)) {
    const target = s.target_ms !== undefined ? `  target <= ${fmt(s.target_ms)}: ${met(s.met)}` : "";
    lines.push(`${s.label} (${name}): ${d(s)}${target}`);
  }
  for (const c of result.comparisons) {
    lines.push(
      `ratio ${c.label}: ${c.project}/${c.baseline} = ${c.ratio.toFixed(3)} ` +
        `(paired per round ${c.paired_ratio.toFixed(3)}); ${targetText(result, c)}: ${met(c.met)}`,
    );
  }
  for (const n of result.not_exercised) lines.push(`not exercised here: ${n}`);
  const dirty = result.dirty ? ` (+ ${result.dirty_files.length} uncommitted files in the tree)` : "";
  lines.push(`${result.rounds} rounds, commit ${result.commit.slice(0, 12)}${dirty}, ${result.date}`);
  return lines;
}
