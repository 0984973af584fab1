// Transpile-only TypeScript loader: `node -r ./bin/ts-register.js file.ts`.
// cdktf runs the app on every synth; type-checking there (ts-node) costs seconds, so types are checked
// by `npm run typecheck` and the tests instead, and this hook only strips them with esbuild (a dependency
// already, for bundling the handlers). The output is cached under .cache/ts, keyed by the source, its path
// and esbuild's version: on a hit esbuild is not even started, which is most of a synth's or a local job's
// start-up (about 0.2 s).

const crypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");

// Before anything requires a dependency: in a checkout where `bash bin/setup` has not run (no
// node_modules) every `node -r ./bin/ts-register.js` npm script says so in one line, instead of Node's
// stack trace for a missing esbuild/package.json. bin/need-setup says the same for the scripts that run
// a dependency's own command (tsc, biome, cdktf). Reading the version here costs what reading it on the
// first .ts file did.
let ESBUILD_VERSION;
try {
  ESBUILD_VERSION = require("esbuild/package.json").version;
} catch {
  process.stderr.write(
    "vm-install: the npm dependencies are not installed (node_modules/esbuild is missing): " +
      "run `bash bin/setup` first\n",
  );
  process.exit(1);
}

const CACHE_DIR = path.join(__dirname, "..", ".cache", "ts");
const OPTIONS = { loader: "ts", format: "cjs", target: "node20", sourcemap: "inline" };
let esbuild;

function transpile(source, filename) {
  esbuild ??= require("esbuild");
  return esbuild.transformSync(source, { ...OPTIONS, sourcefile: filename }).code;
}

function cached(source, filename) {
  const key = crypto
    .createHash("sha256")
    .update(JSON.stringify([ESBUILD_VERSION, OPTIONS, filename, source]))
    .digest("hex");
  const file = path.join(CACHE_DIR, `${key}.js`);
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    const code = transpile(source, filename);
    try {
      // Beside, then rename: a parallel process never reads half a file.
      fs.mkdirSync(CACHE_DIR, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      fs.writeFileSync(tmp, code);
      fs.renameSync(tmp, file);
    } catch {
      // A read-only checkout still runs, only without the cache.
    }
    return code;
  }
}

require.extensions[".ts"] = function compileTs(module, filename) {
  module._compile(cached(fs.readFileSync(filename, "utf8"), filename), filename);
};
