// jest's test sequencer for bin/test: the longest suites start first, so the workers finish together
// instead of one long end-to-end suite starting last. Durations come from jest's own cache when this
// machine ran the suite before, else from suite-durations.json (committed; `npm run test:times --
// --durations` rewrites it from the last run), else a guess by kind: an end-to-end suite boots a VM.
const fs = require("node:fs");
const path = require("node:path");
const Sequencer = require("@jest/test-sequencer").default;

const ROOT = path.resolve(__dirname, "../..");
const KNOWN = JSON.parse(fs.readFileSync(path.join(__dirname, "suite-durations.json"), "utf8"));

class LongestFirst extends Sequencer {
  sort(tests) {
    const seconds = (test) => {
      const cached = this._getCache(test)[test.path];
      if (cached) return cached[1] / 1000;
      const rel = path.relative(ROOT, test.path);
      return KNOWN[rel] ?? (rel.startsWith("__tests__/e2e/") ? 120 : 2);
    };
    return [...tests].sort((a, b) => seconds(b) - seconds(a) || (a.path < b.path ? -1 : 1));
  }
}

module.exports = LongestFirst;
