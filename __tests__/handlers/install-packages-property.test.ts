// The promise over generated states (issue 34): on an apt state drawn from a seed (lists fresh, stale or
// missing, packages at some version, earlier runs) a check changes nothing on the VM, its would_change is
// the following run's changes, and a check after that run finds nothing. PROPERTY_SEED=<seed> PROPERTY_CASES=1
// replays one case.
import { Draw, propertySeeds } from "../support/seeded-random";
import { aptJob, drawState, refreshes } from "./support/apt-states";
import { AptVm } from "./support/apt-vm";
import { doubleCase, holdsOverSeeds } from "./support/promise-property";

const { seed, seeds } = propertySeeds(3402, 300);

describe(`install-packages: check's would_change is the next run's changes (PROPERTY_SEED=${seed})`, () => {
  it(`holds over ${seeds.length} generated states`, async () => {
    const held = await holdsOverSeeds(
      seeds,
      async (caseSeed) => {
        const drawn = await drawState(new Draw(caseSeed));
        const { vm, event } = drawn;
        return {
          ...doubleCase(caseSeed, drawn, (check) => aptJob(vm, check ? { ...event, check: true } : event)),
          // Lists a run refreshes first may offer what they do not now: no check can know (the double's state
          // says when, not the check's words). A run that does not refresh them installs from what the check reads.
          blind: () => (refreshes(event, vm.state) ? "none" : undefined),
        };
      },
      ({ check }) => [
        ...((check.warnings as string[] | undefined)?.some((w) => w.includes("would not be installed"))
          ? ["partly"]
          : []),
        ...((check.would_change as string[] | undefined)?.some((l) => l.startsWith("repaired dpkg "))
          ? ["repaired"]
          : []),
      ],
    );
    // Every way of holding is reached, so the equality is not only of empty lists or of blind checks.
    if (seeds.length >= 100)
      for (const way of ["failed alike", "nothing to do", "foreseen", "partly", "repaired", "blind"])
        expect([way, held[way] ?? 0]).not.toEqual([way, 0]);
  }, 300_000);
});

describe("install-packages: a check of a run that installs from the lists as they are (update false)", () => {
  const vmWith = (lists: Record<string, string[]>) =>
    new AptVm({ installed: { curl: "7.88.1-10+deb12u5" }, lists, mirror: lists, listsAgeSec: 60 });
  const event = (packages: string[]) => ({ packages, update: false });

  it("leaves out what they do not offer, as the run does", async () => {
    const vm = vmWith({ git: ["1:2.39.2-1.1"], jq: ["1.6-2.1"] });
    const check = await aptJob(vm, { ...event(["git", "curl", "htop", "jq=9.9-9"]), check: true });
    expect(check.would_change).toEqual(["installed git"]);
    expect(check.warnings).toEqual([
      expect.stringMatching(/^htop would not be installed: unknown package/),
      expect.stringMatching(/^jq would not be installed: /),
    ]);
    expect((await aptJob(vm, event(["git", "curl", "htop", "jq=9.9-9"]))).changes).toEqual(check.would_change);
  });

  it("fails when none of them can be installed, in the run's words", async () => {
    const vm = vmWith({});
    const failed = (check: boolean) =>
      aptJob(vm, { ...event(["git", "htop"]), check }).then(
        () => "",
        (err: Error) => err.message.replace(/^install-packages failed while (checking \([^)]*\)|\w+): /, ""),
      );
    const words = await failed(true);
    expect(words).toMatch(/^none of the 2 packages could be installed:\n {2}- git: unknown package/);
    expect(await failed(false)).toBe(words);
  });
});
