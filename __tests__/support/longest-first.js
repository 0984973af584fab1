// jest's test sequencer for bin/test: the unit suites first, then the end-to-end suites longest first, so
// the workers finish together instead of one long suite starting last. On a fresh machine, as in CI, the
// base images take minutes to build beside the run: the unit suites keep both cores busy meanwhile, where
// the end-to-end suites would only wait on them (and their boot timeouts would count that wait). Durations
// come from jest's own cache when this machine ran the suite before, else from suite-durations.json
// (committed; `npm run test:times -- --durations` rewrites it from the last run), else a guess by kind: an
// end-to-end suite boots a VM.
const fs = require("node:fs");
const path = require("node:path");
const Sequencer = require("@jest/test-sequencer").default;

const ROOT = path.resolve(__dirname, "../..");
const KNOWN = JSON.parse(fs.readFileSync(path.join(__dirname, "suite-durations.json"), "utf8"));

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
    return [...sorted.filter((test) => !isE2E(test)), ...sorted.filter(isE2E)];
  }
}

module.exports = LongestFirst;
