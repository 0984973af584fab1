// docs/benchmarks.md's tables are generated from the committed results files (dev/bench/results/*.json) by
// `npm run bench:report`; this fails when someone edits one without the other. Files only: no benchmark
// runs here.
import * as fs from "node:fs";
import {
  applyTable,
  BENCHMARKS_PAGE,
  currentTable,
  loadResults,
  renderTable,
  renderWan,
  WAN_MARKERS,
} from "../dev/bench/report";
import { rotation, runRounds } from "../dev/bench/rounds";

describe("the benchmark tables of docs/benchmarks.md", () => {
  const page = fs.readFileSync(BENCHMARKS_PAGE, "utf8");
  const results = loadResults();

  it("is exactly what `npm run bench:report` makes of dev/bench/results/*.json", () => {
    expect(currentTable(page)).toBe(renderTable(results));
  });

  it("has the round-trip table (bench:wan) exactly as `npm run bench:report` makes it of dev/bench/results/wan.json", () => {
    expect(currentTable(page, WAN_MARKERS)).toBe(renderWan(results));
  });

  it("has a results file for every benchmark, each with >= 5 rounds of every side and a commit", () => {
    expect(results.map((r) => r.bench).sort()).toEqual([
      "check",
      "deploy",
      "detach",
      "fast-install",
      "fleet",
      "install-docker",
      "install-packages",
      "install-postgres",
      "status",
      "synth",
      "wan",
    ]);
    for (const r of results) {
      expect(r.rounds).toBeGreaterThanOrEqual(5);
      expect(r.commit).toMatch(/^[0-9a-f]{40}$/);
      for (const name of Object.keys(r.sides)) expect(r.runs.filter((x) => x.side === name)).toHaveLength(r.rounds);
      // The side that runs first rotates: every side ran first in some round.
      for (const name of Object.keys(r.sides)) expect(r.runs.some((x) => x.side === name && x.order === 1)).toBe(true);
    }
  });

  it("has no hand-typed figures left in the page outside the generated blocks", () => {
    const outside = applyTable(applyTable(page, ""), "", WAN_MARKERS);
    expect(outside).not.toMatch(/\b\d+(\.\d+)?\s?(ms|s)\b/);
  });
});

describe("rotation", () => {
  it("changes which side runs first every round", () => {
    expect([1, 2, 3, 4].map((r) => rotation(["a", "b"], r).join(""))).toEqual(["ab", "ba", "ab", "ba"]);
    expect([1, 2, 3, 4].map((r) => rotation(["a", "b", "c"], r).join(""))).toEqual(["abc", "bca", "cab", "abc"]);
  });

  it("runRounds keeps every round's figure per side, in the rotated order", async () => {
    const calls: string[] = [];
    const side = (name: string, ms: number[]) => ({
      name,
      label: name,
      run: async (round: number) => {
        calls.push(`${round}${name}`);
        return ms[round - 1];
      },
    });
    const out = await runRounds(5, [side("a", [10, 20, 30, 40, 50]), side("b", [5, 5, 6, 7, 100])], () => undefined);
    expect(calls).toEqual(["1a", "1b", "2b", "2a", "3a", "3b", "4b", "4a", "5a", "5b"]);
    expect(out.records.filter((r) => r.order === 1).map((r) => r.side)).toEqual(["a", "b", "a", "b", "a"]);
    expect(out.stats.a).toEqual({ median: 30, min: 10, max: 50, ms: [10, 20, 30, 40, 50] });
    expect(out.stats.b.median).toBe(6);
  });
});
