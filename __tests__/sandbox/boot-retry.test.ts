// A sandbox boot that runs out of its default time is booted once more, saying why (dev/sandbox/index.ts): one of
// six sandboxes booted together in CI never allowed logins. Only that failure, only once, and never when the
// caller set its own budget (a test of the budget itself).
import { bootingOnceMore, type StartOptions } from "../../dev/sandbox/index";
import { NOT_READY } from "../../dev/sandbox/ready";

const notReady = () =>
  Object.assign(new Error("sandbox sb-1: not ready after 90 s, still waiting for logins"), { name: NOT_READY });

/** A start that fails with each error in turn, then succeeds; what it was called with, and what was said. */
function starts(...failures: Error[]) {
  const calls: StartOptions[] = [];
  const said: string[] = [];
  const start = async (opts: StartOptions) => {
    calls.push(opts);
    const failure = failures.shift();
    if (failure) throw failure;
    return `booted on try ${calls.length}`;
  };
  return { start, calls, said, say: (t: string) => said.push(t) };
}

test("not ready in its default time: booted once more, the first boot's words on stderr", async () => {
  const s = starts(notReady());
  await expect(bootingOnceMore(s.start, { release: "trixie" }, s.say)).resolves.toBe("booted on try 2");
  expect(s.calls).toEqual([{ release: "trixie" }, { release: "trixie" }]);
  expect(s.said.join("")).toMatch(/not ready after 90 s, still waiting for logins\nsandbox: booting it once more/);
});

test("not ready twice: the second failure is the caller's", async () => {
  const s = starts(notReady(), notReady());
  await expect(bootingOnceMore(s.start, {}, s.say)).rejects.toThrow(/not ready after 90 s/);
  expect(s.calls).toHaveLength(2);
});

test("any other failure, or a budget the caller set: no second boot", async () => {
  const other = starts(new Error("no subnet left"));
  await expect(bootingOnceMore(other.start, {}, other.say)).rejects.toThrow("no subnet left");
  const budget = starts(notReady());
  await expect(bootingOnceMore(budget.start, { bootTimeoutMs: 1000 }, budget.say)).rejects.toThrow(/not ready/);
  expect([other.calls.length, budget.calls.length, other.said, budget.said]).toEqual([1, 1, [], []]);
});
