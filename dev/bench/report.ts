// `npm run bench:report`: rebuilds docs/benchmarks.md's tables from dev/bench/results/*.json, between the
// markers <!-- bench:table --> ... <!-- /bench:table --> and <!-- bench:wan --> ... (dev/bench/wan-figures.ts),
// so they say exactly what was measured. __tests__/bench-report.test.ts fails when they disagree.
//   npm run bench:report            rewrite the tables in docs/benchmarks.md
//   npm run bench:report -- --check exit 1 when docs/benchmarks.md's tables are not what the results files give
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_ROOT } from "../../lib/entry-points";
import { optionsSynopsis, parseOptions } from "../../lib/operator/command-options";
import { type CommandSpec, EXIT, runCommand } from "../../lib/operator/exit-codes";
import { type BenchResult, targetText } from "./results";
import { isWanResult, renderWanTable } from "./wan-figures";

const RESULTS_DIR = path.join(__dirname, "results");
export const BENCHMARKS_PAGE = path.join(PROJECT_ROOT, "docs", "benchmarks.md");
const BEGIN = "<!-- bench:table -->";
const END = "<!-- /bench:table -->";
/** The round-trip table of dev/bench/results/wan.json (its own columns: round trips, not ratios). */
export const WAN_MARKERS = { begin: "<!-- bench:wan -->", end: "<!-- /bench:wan -->" };
const TABLE_MARKERS = { begin: BEGIN, end: END };
/** Table rows in this order of benches; others after them, by name. */
const ORDER = ["synth", "install-packages", "install-docker", "install-postgres", "deploy", "detach", "status"];

/** Every dev/bench/results/*.json, in table order. */
export function loadResults(dir = RESULTS_DIR): BenchResult[] {
  if (!fs.existsSync(dir)) return [];
  const all = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), "utf8")) as BenchResult);
  const rank = (b: string) => (ORDER.includes(b) ? ORDER.indexOf(b) : ORDER.length);
  return all.sort((a, b) => rank(a.bench) - rank(b.bench) || a.bench.localeCompare(b.bench));
}

/** One unit per row: ms below 10 s, else seconds with two decimals. */
function formatter(ms: number): (x: number) => string {
  return ms < 10_000 ? (x) => `${Math.round(x)} ms` : (x) => `${(x / 1000).toFixed(2)} s`;
}

const cell = (s: { median: number; min: number; max: number }, f: (x: number) => string) =>
  `${f(s.median)} (${f(s.min)} – ${f(s.max)})`;
const esc = (s: string) => s.replace(/\|/g, "\\|");

/** apt-get's own work (the same commands on both sides, and where the mirror's mood lands). */
const APT_STEPS = ["apt_update", "apt_install"];

/**
 * A side's median time outside apt-get update/install: its wall time minus those steps, from the
 * handler's timings_ms or the raw script's step markers. What the project adds, without the mirror's
 * swings; undefined for sides without step figures.
 */
function outsideApt(r: BenchResult, side: string): number | undefined {
  const runs = r.runs.filter((x) => x.side === side);
  const per = runs.map((x) => {
    const steps = (x.extra?.timings_ms ?? x.extra?.steps_ms) as Record<string, number> | undefined;
    return steps ? x.ms - APT_STEPS.reduce((a, k) => a + (steps[k] ?? 0), 0) : undefined;
  });
  if (per.length === 0 || per.some((v) => v === undefined)) return undefined;
  const s = (per as number[]).sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

const HEADER =
  "| benchmark | rounds | this project: median (min – max) | baseline, same run: median (min – max) | ratio " +
  "| paired ratio | target | outside apt-get: this project / baseline, median " +
  "| rerun (or the series named): median (min – max) |";
const metText = (met: boolean | undefined) => (met ? "met" : "**not met**");

/** The last cell: the rerun, or a series other than the rerun (e.g. check's time beyond its SSH work), named. */
function rerunCell(r: BenchResult, c: BenchResult["comparisons"][number]): string {
  const rerun = c.rerun ? r.series[c.rerun] : undefined;
  if (!rerun) return "";
  const named = c.rerun && c.rerun !== "rerun" ? `${esc(rerun.label)}: ` : "";
  const target =
    rerun.target_ms !== undefined ? ` (target <= ${(rerun.target_ms / 1000).toFixed(1)} s: ${metText(rerun.met)})` : "";
  return `${named}${cell(rerun, (x) => `${(x / 1000).toFixed(2)} s`)}${target}`;
}

/** One comparison's row. */
function row(r: BenchResult, c: BenchResult["comparisons"][number]): string {
  const p = r.sides[c.project];
  const b = r.sides[c.baseline];
  const f = formatter(b.median);
  const po = outsideApt(r, c.project);
  const bo = outsideApt(r, c.baseline);
  const outside = po !== undefined && bo !== undefined ? `${Math.round(po)} ms / ${Math.round(bo)} ms` : "";
  const target =
    c.target_added_ms !== undefined
      ? `${targetText(r, c)}: ${metText(c.met)}`
      : `<= ${c.target.toFixed(2)}: ${metText(c.met)}`;
  return (
    `| ${esc(c.label)} | ${r.rounds} | ${esc(p.label)}: ${cell(p, f)} | ${esc(b.label)}: ${cell(b, f)} ` +
    `| ${c.ratio.toFixed(2)} | ${c.paired_ratio.toFixed(2)} | ${target} | ${outside} | ${rerunCell(r, c)} |`
  );
}

/** The line naming a results file: the command, commit, date and how busy the machine was. */
function measuredLine(r: BenchResult): string {
  const dirty = r.dirty
    ? `, with ${r.dirty_files.length} uncommitted file${r.dirty_files.length === 1 ? "" : "s"} in the tree ` +
      "(listed in the file)"
    : "";
  const load =
    r.machine.load1_at_start !== undefined
      ? `, load average ${r.machine.load1_at_start} at the start and ${r.machine.load1_at_end} at the end`
      : "";
  return (
    `- \`dev/bench/results/${r.bench}.json\`: \`${r.command}\`, commit ${r.commit.slice(0, 12)}${dirty}, ` +
    `${r.date.slice(0, 10)}, ${r.machine.cpus} cores${load}`
  );
}

/** The markdown between the markers (markers excluded), deterministic for given results. */
export function renderTable(all: BenchResult[]): string {
  const results = all.filter((r) => !isWanResult(r));
  const lines: string[] = [];
  lines.push(
    "<!-- generated by `npm run bench:report` from dev/bench/results/*.json: " +
      "edit those (rerun the bench), not this -->",
  );
  lines.push(HEADER);
  lines.push("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
  for (const r of results) for (const c of r.comparisons) lines.push(row(r, c));
  lines.push("");
  lines.push(
    "Ratio: median of this project over median of the baseline; paired ratio: the median over rounds of the two " +
      "measured in the same round. " +
      "Outside apt-get: each run's wall time minus its `apt-get update` and `apt-get install` (the handler's " +
      "timings_ms, the raw script's step markers), " +
      "the same commands on both sides and where almost all of the spread comes from: what the project itself " +
      "adds (runner start, SSH, checks, verification).",
  );
  lines.push("");
  lines.push("Measured (results file, command, commit, date):");
  lines.push("");
  for (const r of results) lines.push(measuredLine(r));
  const notes = [...new Set(results.flatMap((r) => r.not_exercised))];
  if (notes.length) {
    lines.push("");
    lines.push("Not exercised here (no internet access), and the nearest path measured instead:");
    lines.push("");
    for (const n of notes) lines.push(`- ${n}`);
  }
  return lines.join("\n");
}

/** `readme` with the text between the markers replaced by `table`; throws when the markers are missing. */
export function applyTable(readme: string, table: string, m = TABLE_MARKERS): string {
  const start = readme.indexOf(m.begin);
  const end = readme.indexOf(m.end);
  if (start < 0 || end < 0 || end < start) throw new Error(`docs/benchmarks.md has no ${m.begin} ... ${m.end} block`);
  return `${readme.slice(0, start + m.begin.length)}\n${table}\n${readme.slice(end)}`;
}

/** The text between the markers as it is now. */
export function currentTable(readme: string, m = TABLE_MARKERS): string {
  const start = readme.indexOf(m.begin);
  const end = readme.indexOf(m.end);
  if (start < 0 || end < 0 || end < start) throw new Error(`docs/benchmarks.md has no ${m.begin} ... ${m.end} block`);
  return readme
    .slice(start + m.begin.length, end)
    .replace(/^\n/, "")
    .replace(/\n$/, "");
}

/** The WAN table from the results files (its own block: round trips per case and side). */
export function renderWan(results: BenchResult[]): string {
  return renderWanTable(results.find(isWanResult));
}

const OPTIONS = { check: { type: "boolean" } } as const;
const USAGE = `usage: npm run bench:report [-- ${optionsSynopsis(OPTIONS)}]`;
const COMMAND: CommandSpec = {
  name: "bench:report",
  usage: USAGE,
  helpText: `${USAGE}\n  rewrites docs/benchmarks.md's tables from dev/bench/results/*.json; --check: only compare`,
};

function main(argv: string[]): number {
  const check = parseOptions(OPTIONS, argv).values.check === true;
  const readme = fs.readFileSync(BENCHMARKS_PAGE, "utf8");
  const results = loadResults();
  const table = renderTable(results);
  const wan = renderWan(results);
  if (check) {
    if (currentTable(readme) !== table || currentTable(readme, WAN_MARKERS) !== wan) {
      process.stderr.write(
        "bench:report: docs/benchmarks.md's tables differ from dev/bench/results/*.json; run `npm run bench:report`\n",
      );
      return EXIT.error;
    }
    process.stdout.write("bench:report: docs/benchmarks.md's tables match dev/bench/results/*.json\n");
  } else {
    const next = applyTable(applyTable(readme, table), wan, WAN_MARKERS);
    if (next !== readme) fs.writeFileSync(BENCHMARKS_PAGE, next);
    const what = next === readme ? "docs/benchmarks.md already up to date" : "docs/benchmarks.md's tables rewritten";
    process.stdout.write(`bench:report: ${what} from ${results.length} results files\n`);
  }
  return EXIT.ok;
}

if (require.main === module) runCommand(COMMAND, process.argv.slice(2), main);
