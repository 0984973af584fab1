// Transpile-only TypeScript loader: `node -r ./bin/ts-register.js file.ts`.
// cdktf runs the app on every synth; type-checking there (ts-node) costs seconds, so types are checked
// by `npm run typecheck` and the tests instead, and this hook only strips them with esbuild (a dependency
// already, for bundling the handlers).

const fs = require("node:fs");
const esbuild = require("esbuild");

require.extensions[".ts"] = function compileTs(module, filename) {
  const source = fs.readFileSync(filename, "utf8");
  const { code } = esbuild.transformSync(source, {
    loader: "ts",
    format: "cjs",
    target: "node20",
    sourcemap: "inline",
    sourcefile: filename,
  });
  module._compile(code, filename);
};
