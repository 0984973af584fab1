// bin/test's end of run: the ten slowest suites and the summary line over every jest report, the per-case
// breakdown `npm run test:times` prints, and the order the sequencer starts suites in.
import * as path from "node:path";
import {
  type JestReport,
  machineLine,
  slowestSuites,
  suiteBreakdown,
  suiteDurations,
  summaryLine,
} from "../bin/test-report";
import { PROJECT_ROOT } from "../lib/entry-points";

const suite = (name: string, seconds: number, cases: [string, string, number][]) => ({
  name: path.join(PROJECT_ROOT, name),
  startTime: 1_000,
  endTime: 1_000 + seconds * 1000,
  assertionResults: cases.map(([fullName, status, ms]) => ({ fullName, status, duration: ms })),
});

const report = (over: Partial<JestReport>, suites: JestReport["testResults"]): JestReport => ({
  numPassedTests: 0,
  numFailedTests: 0,
  numRuntimeErrorTestSuites: 0,
  numPendingTests: 0,
  numTodoTests: 0,
  testResults: suites,
  ...over,
});

const A = suite("__tests__/e2e/a.test.ts", 300, [
  ["a one", "passed", 1000],
  ["a two", "failed", 250_000],
]);
const B = suite("__tests__/b.test.ts", 2.5, [["b one", "passed", 2400]]);
const C = suite("__tests__/e2e/c.test.ts", 40, [["c one", "pending", 0]]);

describe("bin/test-report", () => {
  const reports = [
    report({ numPassedTests: 2, numFailedTests: 1, numPendingTests: 1 }, [A, C]),
    report({ numPassedTests: 1, numRuntimeErrorTestSuites: 1, numTodoTests: 1 }, [B]),
  ];

  test("the summary line adds every report up; a suite that could not run counts as failed", () => {
    expect(summaryLine(reports)).toBe("3 passed, 2 failed, 2 skipped");
  });

  test("the slowest suites, slowest first, with their case counts, across reports", () => {
    expect(slowestSuites(reports, 2)).toEqual([
      " 300.0 s  __tests__/e2e/a.test.ts (2 cases)",
      "  40.0 s  __tests__/e2e/c.test.ts (1 cases)",
    ]);
    expect(slowestSuites(reports)).toHaveLength(3);
  });

  test("a suite's cases, slowest first: the slowest suite by default, else the one named by part of its path", () => {
    expect(suiteBreakdown(reports)).toEqual([
      "__tests__/e2e/a.test.ts: 300.0 s, 2 cases",
      " 250.0 s  failed  a two",
      "   1.0 s  passed  a one",
    ]);
    expect(suiteBreakdown(reports, "b.test")[0]).toBe("__tests__/b.test.ts: 2.5 s, 1 cases");
    expect(() => suiteBreakdown(reports, "nope")).toThrow(/no suite .* "nope"/);
  });

  test("the durations file the sequencer reads: seconds by path, sorted by path", () => {
    expect(Object.entries(suiteDurations(reports))).toEqual([
      ["__tests__/b.test.ts", 2.5],
      ["__tests__/e2e/a.test.ts", 300],
      ["__tests__/e2e/c.test.ts", 40],
    ]);
    // A report from another checkout (a clean clone CI ran) keys its suites the same way.
    const elsewhere = { ...B, name: path.join("/tmp", "clone", "__tests__", "b.test.ts") };
    expect(suiteDurations([report({}, [elsewhere])])).toEqual({ "__tests__/b.test.ts": 2.5 });
  });

  test("what the machine spent: CPU seconds busy of those the cores had, user and system, processes started", () => {
    // Two snapshots of /proc/stat (USER_HZ ticks), 10 s apart on 2 cores; nice counts as user, iowait as idle.
    const at = (user: number, nice: number, system: number, idle: number, iowait: number, processes: number) =>
      `cpu  ${user} ${nice} ${system} ${idle} ${iowait} 0 50 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n` +
      `intr 1 2 3\nctxt 99\nbtime 1\nprocesses ${processes}\nprocs_running 3\n`;
    const line = machineLine(at(1000, 0, 500, 9000, 10, 4000), at(2100, 100, 1100, 9150, 60, 4700), 10_400);
    expect(line).toBe("machine: 10 s; CPU busy 18 s of 20 s (user 12 s, system 6 s); 700 processes started");
    expect(() => machineLine("cpu  1 2\n", at(1, 1, 1, 1, 1, 1), 1)).toThrow(/not \/proc\/stat/);
  });

  test("the durations file names suites from the checkout's root, as the sequencer looks them up", () => {
    const known = require("./support/suite-durations.json") as Record<string, number>;
    expect(Object.keys(known).filter((k) => !k.startsWith("__tests__/"))).toEqual([]);
  });
});

describe("the longest-first sequencer", () => {
  const LongestFirst = require("./support/longest-first.js") as any;
  const known = require("./support/suite-durations.json") as Record<string, number>;
  const test_ = (rel: string) => ({
    path: path.join(PROJECT_ROOT, rel),
    context: { config: { cacheDirectory: "/nonexistent", name: "x" } },
  });

  test("runs the unit suites first, then the end-to-end suites, each longest first", () => {
    const seq = new LongestFirst({ contexts: [], globalConfig: {} });
    const ms: Record<string, number> = { e1: 300, e2: 200, e3: 100, u1: 9, u2: 3 };
    const at = (name: string) => (name.startsWith("e") ? `__tests__/e2e/${name}.test.ts` : `__tests__/${name}.test.ts`);
    seq._getCache = () =>
      Object.fromEntries(Object.entries(ms).map(([name, s]) => [path.join(PROJECT_ROOT, at(name)), [0, s * 1000]]));
    const order = seq
      .sort(["u2", "e3", "u1", "e1", "e2"].map((name) => test_(at(name))))
      .map((t: { path: string }) => path.basename(t.path, ".test.ts"));
    expect(order).toEqual(["u1", "u2", "e1", "e2", "e3"]);
  });

  test("without a cache: known durations, else a guess by kind", () => {
    const seq = new LongestFirst({ contexts: [], globalConfig: {} });
    seq._getCache = () => ({});
    const [longest] = Object.entries(known)
      .filter(([rel]) => rel.startsWith("__tests__/e2e/"))
      .sort(([, a], [, b]) => b - a)[0];
    const [longestUnit] = Object.entries(known)
      .filter(([rel]) => !rel.startsWith("__tests__/e2e/"))
      .sort(([, a], [, b]) => b - a)[0];
    const order = seq
      .sort([
        test_("__tests__/unit-new.test.ts"),
        test_("__tests__/e2e/new.test.ts"),
        test_(longest),
        test_(longestUnit),
      ])
      .map((t: { path: string }) => path.relative(PROJECT_ROOT, t.path));
    expect(order).toEqual([longestUnit, "__tests__/unit-new.test.ts", longest, "__tests__/e2e/new.test.ts"]);
  });
});
