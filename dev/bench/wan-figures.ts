// What dev/bench/wan.ts derives from its runs, and docs/benchmarks.md's table `npm run bench:report` makes of
// it: per case and side, the extra wall time a round-trip time of RTT adds, in round trips
// ((median at RTT - median at 0) / RTT), against targets. Installers run in the platform's cluster and reach the
// VM over its public address, so every sequential SSH round trip the job makes costs a real RTT; this counts them.
import type { BenchResult } from "./results";
import { median, type RoundRecord, type RoundsOutcome } from "./rounds";

/** The round-trip time the proxy adds in the measured condition (the other is 0). */
export const RTT_MS = 50;
export const RTTS = [0, RTT_MS] as const;
export const SIDES = ["project", "raw"] as const;
export type WanSide = (typeof SIDES)[number];

/** A case's target: at most N round trips, or at most N more than the raw ssh sequence's. */
export type WanTarget = { maxRoundTrips: number } | { overRaw: number };

export interface WanCase {
  name: string;
  label: string;
  /** A first install on a fresh VM (apt-get does real work), rather than a rerun on an installed one. */
  first: boolean;
  target: WanTarget;
}

export const CASES: WanCase[] = [
  { name: "packages-rerun", label: "install-packages rerun", first: false, target: { maxRoundTrips: 8 } },
  { name: "postgres-rerun", label: "install-postgres rerun", first: false, target: { maxRoundTrips: 12 } },
  { name: "packages-first", label: "install-packages first install", first: true, target: { overRaw: 10 } },
  { name: "postgres-first", label: "install-postgres first install", first: true, target: { overRaw: 10 } },
];

/** The side key in the rounds and the results file, e.g. "packages-rerun/project/rtt50". */
export const sideKey = (caseName: string, side: WanSide, rttMs: number) => `${caseName}/${side}/rtt${rttMs}`;

const round1 = (x: number) => Math.round(x * 10) / 10;

/** (median at RTT - median at RTT 0) / RTT, to one decimal: the sequential round trips a side makes. */
export function roundTrips(atZero: number[], atRtt: number[], rttMs: number): number {
  if (!(rttMs > 0)) throw new Error(`roundTrips: the RTT must be > 0 ms, got ${rttMs}`);
  if (atZero.length === 0 || atRtt.length === 0) throw new Error("roundTrips: no runs at one of the two RTTs");
  return round1((median(atRtt) - median(atZero)) / rttMs);
}

/** A run's wall time less its apt-get update and install (the mirror's share, which no RTT touches). */
function outsideAptMs(r: RoundRecord): number | undefined {
  const steps = (r.extra?.timings_ms ?? r.extra?.steps_ms) as Record<string, number> | undefined;
  if (!steps) return undefined;
  return r.ms - (steps.apt_update ?? 0) - (steps.apt_install ?? 0);
}

export interface Spread {
  median: number;
  min: number;
  max: number;
}

export interface RoundTripRow {
  case: string;
  case_label: string;
  side: WanSide;
  rtt_ms: number;
  at_rtt0: Spread;
  at_rtt: Spread;
  /** (median at rtt_ms - median at 0) / rtt_ms. */
  round_trips: number;
  /** The same from each run's time outside apt-get update/install, when every run has step figures: less noise. */
  round_trips_outside_apt?: number;
  /** Median TCP connections a run opened through the proxy. */
  connections?: number;
  /** The project side's target in words, and whether it is met. */
  target?: string;
  met?: boolean;
}

const spread = (xs: number[]): Spread => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });

/** Whether `project` round trips meet `target` (against `raw` round trips for an over-raw target). */
export function targetMet(target: WanTarget, project: number, raw: number): { text: string; met: boolean } {
  if ("maxRoundTrips" in target)
    return { text: `<= ${target.maxRoundTrips} round trips`, met: project <= target.maxRoundTrips };
  const limit = round1(raw + target.overRaw);
  return { text: `<= raw + ${target.overRaw} (${limit}) round trips`, met: project <= limit };
}

/** One row per case and side from the merged rounds: the round trips, and the project side's target. */
export function roundTripRows(outcome: RoundsOutcome, cases: WanCase[] = CASES, rttMs = RTT_MS): RoundTripRow[] {
  const rows: RoundTripRow[] = [];
  for (const c of cases) {
    const bySide = {} as Record<WanSide, RoundTripRow>;
    for (const side of SIDES) {
      const runs = (rtt: number) => outcome.records.filter((r) => r.side === sideKey(c.name, side, rtt));
      const zero = runs(0);
      const at = runs(rttMs);
      if (zero.length === 0 || at.length === 0) continue;
      const outside = (rs: RoundRecord[]) => rs.map(outsideAptMs);
      const oz = outside(zero);
      const oa = outside(at);
      const all = [...oz, ...oa];
      const conns = at.map((r) => r.extra?.connections).filter((n): n is number => typeof n === "number");
      bySide[side] = {
        case: c.name,
        case_label: c.label,
        side,
        rtt_ms: rttMs,
        at_rtt0: spread(zero.map((r) => r.ms)),
        at_rtt: spread(at.map((r) => r.ms)),
        round_trips: roundTrips(
          zero.map((r) => r.ms),
          at.map((r) => r.ms),
          rttMs,
        ),
        ...(c.first && all.every((x) => x !== undefined)
          ? { round_trips_outside_apt: roundTrips(oz as number[], oa as number[], rttMs) }
          : {}),
        ...(conns.length ? { connections: median(conns) } : {}),
      };
    }
    const p = bySide.project;
    if (p) {
      // A first install is judged outside apt-get: the mirror's time swings by more than a round trip.
      const figure = (r?: RoundTripRow) =>
        (c.first ? r?.round_trips_outside_apt : undefined) ?? r?.round_trips ?? Number.NaN;
      const t = targetMet(c.target, figure(p), figure(bySide.raw));
      p.target = c.first && p.round_trips_outside_apt !== undefined ? `${t.text} outside apt-get` : t.text;
      p.met = t.met;
    }
    for (const side of SIDES) if (bySide[side]) rows.push(bySide[side]);
  }
  return rows;
}

/** dev/bench/results/wan.json: the usual results file plus the round trips derived from it. */
export interface WanResult extends BenchResult {
  rtt_ms: number;
  round_trips: RoundTripRow[];
  /** How the machine was while measuring (shared with other sessions). */
  note: string;
}

export const isWanResult = (r: BenchResult): r is WanResult => Array.isArray((r as WanResult).round_trips);

/** "install-packages rerun, project: 11.2 round trips; target <= 8 round trips: NOT met" lines. */
export function roundTripLines(rows: RoundTripRow[]): string[] {
  return rows.map((r) => {
    const outside = r.round_trips_outside_apt !== undefined ? ` (outside apt-get ${r.round_trips_outside_apt})` : "";
    const target = r.target ? `; target ${r.target}: ${r.met ? "met" : "NOT met"}` : "";
    return (
      `${r.case_label}, ${r.side}: ${r.round_trips} round trips${outside} ` +
      `(median ${Math.round(r.at_rtt0.median)} ms at RTT 0, ${Math.round(r.at_rtt.median)} ms at RTT ${r.rtt_ms} ms)` +
      target
    );
  });
}

const fmt = (ms: number) => (ms < 10_000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`);
const cell = (s: Spread) => `${fmt(s.median)} (${fmt(s.min)} – ${fmt(s.max)})`;

/** The markdown of the WAN table (between its markers), deterministic for a given results file. */
export function renderWanTable(r: WanResult | undefined): string {
  const lines = [
    "<!-- generated by `npm run bench:report` from dev/bench/results/wan.json: rerun `npm run bench:wan`, not this -->",
  ];
  if (!r) return [...lines, "", "No results yet: `npm run bench:wan`."].join("\n");
  lines.push(
    `| case | side | RTT 0: median (min – max) | RTT ${r.rtt_ms} ms: median (min – max) | round trips ` +
      "| round trips outside apt-get | TCP connections | target |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
  );
  for (const x of r.round_trips) {
    const side = x.side === "project" ? "this project (job runner)" : "raw ssh sequence";
    const target = x.target ? `${x.target}: ${x.met ? "met" : "**not met**"}` : "";
    lines.push(
      `| ${x.case_label} | ${side} | ${cell(x.at_rtt0)} | ${cell(x.at_rtt)} | ${x.round_trips.toFixed(1)} ` +
        `| ${x.round_trips_outside_apt?.toFixed(1) ?? ""} | ${x.connections ?? ""} | ${target} |`,
    );
  }
  const dirty = r.dirty ? `, with ${r.dirty_files.length} uncommitted files in the tree (listed in the file)` : "";
  lines.push(
    "",
    `Round trips: (median at RTT ${r.rtt_ms} ms − median at RTT 0) / ${r.rtt_ms} ms, over ${r.rounds} rounds per ` +
      "RTT and side, the sides and RTTs rotated every round; outside apt-get: the same from each run's time less " +
      "its `apt-get update` and `apt-get install` (the mirror's share, which the delay does not touch). " +
      "TCP connections: the median a run opened through the delay proxy at the RTT.",
    "",
    `Measured: \`${r.command}\`, commit ${r.commit.slice(0, 12)}${dirty}, ${r.date.slice(0, 10)}, ` +
      `${r.machine.cpus} cores, load average ${r.machine.load1_at_start} at the start and ` +
      `${r.machine.load1_at_end} at the end. ${r.note}`,
  );
  return lines.join("\n");
}
