// jest's test sequencer for bin/test. The end-to-end suites run longest first, so the workers finish
// together instead of one long suite starting last. Only the first two start at once: the unit suites come
// right after them, so the other workers keep both cores busy while those two wait on their VMs (on a fresh
// machine, as in CI, the base images take minutes to build beside the run, and every end-to-end suite waits
// for them). Durations come from jest's own cache when this machine ran the suite before, else from
// suite-durations.json (committed; `npm run test:times -- --durations` rewrites it from the last run), else
// a guess by kind: an end-to-end suite boots a VM.
const fs = require("node:fs");
const path = require("node:path");
const Sequencer = require("@jest/test-sequencer").default;

const ROOT = path.resolve(__dirname, "../..");
const KNOWN = JSON.parse(fs.readFileSync(path.join(__dirname, "suite-durations.json"), "utf8"));
/** End-to-end suites that start before the unit suites. */
const E2E_HEAD_START = 2;

class LongestFirst extends Sequencer {
  sort(tests) {
    const rel = (test) => path.relative(ROOT, test.path);
    const isE2E = (test) => rel(test).startsWith("__tests__/e2e/");
    const seconds = (test) => {
      const cached = this._getCache(test)[test.path];
      if (cached) return cached[1] / 1000;
      return KNOWN[rel(test)] ?? (isE2E(test) ? 120 : 2);
    };
    const sorted = [...tests].sort((a, b) => seconds(b) - seconds(a) || (a.path < b.path ? -1 : 1));
    const e2e = sorted.filter(isE2E);
    const unit = sorted.filter((test) => !isE2E(test));
    return [...e2e.slice(0, E2E_HEAD_START), ...unit, ...e2e.slice(E2E_HEAD_START)];
  }
}

module.exports = LongestFirst;
