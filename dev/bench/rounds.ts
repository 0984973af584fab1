// Rounds with rotation: every benchmark here measures two or more sides (this project and its baseline,
// measured in the same run) for N rounds, and the side that runs first rotates every round
// (two sides: A B, B A, A B, ...; three: A B C, B C A, C A B, ...), so a warmer mirror cache, a busier
// machine or whatever drifts during the run hits every side alike. Every round's figure is kept.

import { parseOptions } from "../../lib/operator/command-options";
import { EXIT } from "../../lib/operator/exit-codes";

const OPTIONS = { help: { type: "boolean", short: "h" } } as const;

/** Fewer rounds than this give a median that one slow mirror response can move: refused. */
const MIN_ROUNDS = 5;

/** Rounds from argv[2] (default MIN_ROUNDS); --help: the usage on stdout, exit 0; anything else: on stderr, exit 64. */
export function roundsArg(script: string, argv: string[] = process.argv): number {
  const usage =
    `usage: node -r ./bin/ts-register.js dev/bench/${script} [rounds]\n` +
    `  rounds: a whole number >= ${MIN_ROUNDS} (default ${MIN_ROUNDS}); the side that runs first rotates every round`;
  let parsed: ReturnType<typeof parseOptions<typeof OPTIONS>>;
  try {
    parsed = parseOptions(OPTIONS, argv.slice(2), 1);
  } catch (err) {
    process.stderr.write(`${usage}\n  ${(err as Error).message}\n`);
    process.exit(EXIT.usage);
  }
  if (parsed.values.help) {
    process.stdout.write(`${usage}\n`);
    process.exit(EXIT.ok);
  }
  const given = parsed.positionals[0];
  const n = Number(given ?? MIN_ROUNDS);
  if (!Number.isInteger(n) || n < MIN_ROUNDS) {
    process.stderr.write(`${usage}\n  got ${JSON.stringify(given)}\n`);
    process.exit(EXIT.usage);
  }
  return n;
}

/** One side's outcome in one round: its wall time, plus anything the bench wants to keep with it. */
export interface Measured {
  ms: number;
  extra?: Record<string, unknown>;
}

export interface SideSpec {
  /** Short key, used in the results file ("handler", "raw", "trivial", ...). */
  name: string;
  /** What it is, for people. */
  label: string;
  /** Measures this side once; `round` is 1-based. A number is taken as the wall time. */
  run: (round: number) => Promise<Measured | number>;
}

export interface RoundRecord {
  round: number;
  /** 1 = ran first in its round. */
  order: number;
  side: string;
  ms: number;
  extra?: Record<string, unknown>;
}

export interface Stats {
  median: number;
  min: number;
  max: number;
  /** Every figure, in round order. */
  ms: number[];
}

export interface RoundsOutcome {
  rounds: number;
  records: RoundRecord[];
  stats: Record<string, Stats>;
}

export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

export function stats(xs: number[]): Stats {
  return { median: median(xs), min: Math.min(...xs), max: Math.max(...xs), ms: [...xs] };
}

/** The order of the sides in round `round` (1-based): rotated left by round - 1. */
export function rotation<T>(sides: readonly T[], round: number): T[] {
  const k = (round - 1) % sides.length;
  return [...sides.slice(k), ...sides.slice(0, k)];
}

/**
 * Runs `rounds` rounds of every side, rotating which side goes first each round; returns every
 * round's figure per side and each side's median, min and max. A failing side fails the whole run (a
 * benchmark of work that did not happen means nothing).
 *
 *   const rounds = roundsArg("install-packages.ts");                 // argv[2], >= 5, or exit 64 with usage
 *   const out = await runRounds(rounds, [
 *     { name: "handler", label: "install-packages via the runner", run: async (round) => ({ ms, extra }) },
 *     { name: "raw", label: "raw ssh sequence", run: async () => ({ ms }) },
 *   ]);
 *   out.stats.handler.median; ratio(out, "handler", "raw");
 */
export async function runRounds(
  rounds: number,
  sides: SideSpec[],
  log: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
): Promise<RoundsOutcome> {
  if (sides.length < 2) throw new Error("runRounds: at least two sides (this project and its baseline)");
  if (new Set(sides.map((s) => s.name)).size !== sides.length) throw new Error("runRounds: side names must differ");
  const records: RoundRecord[] = [];
  const width = Math.max(...sides.map((s) => s.label.length));
  for (let round = 1; round <= rounds; round++) {
    const order = rotation(sides, round);
    log(`round ${round}/${rounds}: ${order.map((s) => s.name).join(" -> ")}`);
    for (let i = 0; i < order.length; i++) {
      const side = order[i];
      const got = await side.run(round);
      const m: Measured = typeof got === "number" ? { ms: got } : got;
      if (!Number.isFinite(m.ms) || m.ms < 0) throw new Error(`${side.name}: not a time: ${m.ms}`);
      records.push({
        round,
        order: i + 1,
        side: side.name,
        ms: Math.round(m.ms),
        ...(m.extra ? { extra: m.extra } : {}),
      });
      log(`  ${side.label.padEnd(width)}  ${fmtMs(m.ms).padStart(9)}`);
    }
  }
  const out: Record<string, Stats> = {};
  for (const s of sides) out[s.name] = stats(records.filter((r) => r.side === s.name).map((r) => r.ms));
  return { rounds, records, stats: out };
}

/** median(project) / median(baseline), rounded to 3 places. */
export function ratio(outcome: RoundsOutcome, project: string, baseline: string): number {
  return round3(outcome.stats[project].median / outcome.stats[baseline].median);
}

/** The median over rounds of project/baseline measured in the same round: less sensitive to drift. */
export function pairedRatio(outcome: RoundsOutcome, project: string, baseline: string): number {
  const per: number[] = [];
  for (let r = 1; r <= outcome.rounds; r++) {
    const p = outcome.records.find((x) => x.round === r && x.side === project);
    const b = outcome.records.find((x) => x.round === r && x.side === baseline);
    if (p && b && b.ms > 0) per.push(p.ms / b.ms);
  }
  return round3(median(per));
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
export const fmtMs = (ms: number) => `${Math.round(ms)} ms`;
export const fmtS = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/**
 * Several independent comparisons in one results file: each group's outcomes from its own rotated rounds
 * (every side of a group runs first in some round, which more sides than rounds in one rotation would not
 * give), as one outcome. Side names must differ across groups.
 */
export function mergeOutcomes(outcomes: RoundsOutcome[]): RoundsOutcome {
  const rounds = new Set(outcomes.map((o) => o.rounds));
  if (rounds.size !== 1) throw new Error(`mergeOutcomes: groups ran different rounds: ${[...rounds].join(", ")}`);
  const stats: Record<string, Stats> = {};
  for (const o of outcomes)
    for (const [name, s] of Object.entries(o.stats)) {
      if (stats[name]) throw new Error(`mergeOutcomes: side ${name} is in two groups`);
      stats[name] = s;
    }
  return { rounds: outcomes[0].rounds, records: outcomes.flatMap((o) => o.records), stats };
}
