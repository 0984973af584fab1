// The promise every installer keeps (issue 34), checked on one generated state: a check leaves the VM as it
// was, its would_change is the following run's changes, and a check after that run finds nothing to do. A
// broken promise fails with the case's seed and the story of its state, so one env var replays it.

type Result = Record<string, unknown>;

export interface PromiseCase {
  seed: number;
  /** How the state came about and what is run on it, one line each. */
  story: string[];
  /** A copy of the double's state (compared before and after the check). */
  state: () => unknown;
  /** The double's record of commands marked as changes (emptied before the check). */
  mutating: string[];
  /** One job on the double: a check or a run of the case's event. */
  job: (check: boolean) => Promise<object>;
  /**
   * The check says it cannot foresee all: with "prefix" (it could not look past a first change) the run's
   * changes begin with its would_change; with "none" (what a run fetches first decides) the run may differ.
   * Asked right after each check, before anything runs.
   */
  blind?: (check: Result) => "prefix" | "none" | undefined;
  /** Lines a check foresees exactly even where it is blind to the rest (the work before what it cannot see). */
  seenThroughBlind?: RegExp;
}

/** How a case held: both failed alike; the check foresaw exactly (nothing, or changes); or it said it could not. */
export type Held = "failed alike" | "nothing to do" | "foreseen" | "blind";

/**
 * holdsThePromise on the case drawn from each seed; how many held each way, plus the ways `tally` names for a
 * case (what else the test wants reached), so a test can require every way and not pass on empty plans alone.
 */
export async function holdsOverSeeds(
  seeds: readonly number[],
  drawCase: (seed: number) => Promise<PromiseCase>,
  tally: (outcome: { check: Result; run: Result }) => string[] = () => [],
): Promise<Record<string, number>> {
  const held: Record<string, number> = {};
  for (const seed of seeds) {
    const outcome = await holdsThePromise(await drawCase(seed));
    for (const way of [outcome.held, ...tally(outcome)]) held[way] = (held[way] ?? 0) + 1;
  }
  return held;
}

/** The case of a stateful double drawn from `seed`: its state copied to compare before and after the check. */
export function doubleCase(
  seed: number,
  drawn: { vm: { state: unknown; mutating: string[] }; story: string[] },
  job: PromiseCase["job"],
): PromiseCase {
  const { vm, story } = drawn;
  return { seed, story, state: () => structuredClone(vm.state), mutating: vm.mutating, job };
}

/** Check, run, check: throws, naming the seed, the story and what differs, where the promise breaks. */
export async function holdsThePromise(c: PromiseCase): Promise<{ check: Result; run: Result; held: Held }> {
  const fail = (what: string, detail: object) => {
    throw new Error(
      `the promise breaks (PROPERTY_SEED=${c.seed} PROPERTY_CASES=1): ${what}\n` +
        `${c.story.map((l) => `  ${l}`).join("\n")}\n${JSON.stringify(detail, null, 2)}`,
    );
  };
  const settle = (p: Promise<object>) =>
    p.then((r) => r as Result).catch((err: Error) => ({ error: err.message }) as Result);
  const before = JSON.stringify(c.state());
  c.mutating.length = 0;
  const check = await settle(c.job(true));
  if (c.mutating.length || JSON.stringify(c.state()) !== before)
    fail("the check changed the VM", { mutating: c.mutating, before: JSON.parse(before), after: c.state() });
  if (check.error) {
    // A check may foresee that the run fails: then it fails alike, in the same words after the phase.
    const run = await settle(c.job(false));
    const words = (r: Result) => String(r.error).replace(/^[\w-]+ failed while (?:checking \([^)]*\)|\w+): /, "");
    if (!run.error || words(run) !== words(check)) fail("the check failed, the run did not fail alike", { check, run });
    return { check, run, held: "failed alike" };
  }
  if (check.changed !== false || (check.changes as unknown[]).length) fail("the check says it changed", check);
  const blind = c.blind?.(check);
  const run = await settle(c.job(false));
  if (run.error && blind === "none") return { check, run, held: "blind" };
  if (run.error) fail("the run failed where the check did not", { would_change: check.would_change, run });
  const foreseen = check.would_change as string[];
  const done = run.changes as string[];
  const through = (lines: string[]) => lines.filter((line) => c.seenThroughBlind?.test(line));
  if (blind === "none" && JSON.stringify(through(done)) !== JSON.stringify(through(foreseen)))
    fail("the run's changes the check sees even when blind are not the check's", {
      would_change: through(foreseen),
      changes: through(done),
    });
  const same =
    blind === "none" ||
    JSON.stringify(blind === "prefix" ? done.slice(0, foreseen.length) : done) === JSON.stringify(foreseen);
  if (!same)
    fail(blind ? "the run does not begin with what the check foresaw" : "the run's changes are not the check's", {
      would_change: foreseen,
      changes: done,
      check_warnings: check.warnings,
    });
  const again = await settle(c.job(true));
  if (again.error) fail("a check after the run failed", { changes: done, again });
  const held = blind ? "blind" : foreseen.length ? "foreseen" : "nothing to do";
  if (!(again.would_change as unknown[]).length) return { check, run, held };
  // A check that cannot foresee all says the same again: then a run after the run must change nothing.
  if (c.blind?.(again) !== "none") fail("a check after the run finds more to do", { changes: done, again });
  const rerun = await settle(c.job(false));
  if ((rerun.changes as unknown[] | undefined)?.length) fail("a run after the run changes more", { rerun });
  return { check, run, held };
}
