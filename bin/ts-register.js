// Transpile-only TypeScript loader: `node -r ./bin/ts-register.js file.ts`.
// cdktf runs the app on every synth; type-checking there (ts-node) costs seconds, so types are checked
// by `npm run typecheck` and the tests instead, and this hook only strips them with esbuild (a dependency
// already, for bundling the handlers).
//
// The output is cached under .cache/ts, keyed by the source, its path and esbuild's version: on a hit
// esbuild is not even started, which is most of a synth's or a local job's start-up (about 0.2 s).

const crypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");

const CACHE_DIR = path.join(__dirname, "..", ".cache", "ts");
const OPTIONS = { loader: "ts", format: "cjs", target: "node20", sourcemap: "inline" };
let esbuild;

function transpile(source, filename) {
  esbuild ??= require("esbuild");
  return esbuild.transformSync(source, { ...OPTIONS, sourcefile: filename }).code;
}

function cached(source, filename) {
  const version = require("esbuild/package.json").version;
  const key = crypto
    .createHash("sha256")
    .update(JSON.stringify([version, OPTIONS, filename, source]))
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
