// The worker thread behind bundleHandler (lib/construct/bundling/bundle.ts): runs esbuild builds with the
// replace-files plugin and answers each request synchronously-waitable, the way esbuild's own buildSync
// runs its worker. Why a worker: the plugin needs esbuild's async API, while bundleHandler has to stay
// synchronous because constructs are built synchronously.
// Protocol: the main thread posts { id, signal, options, replacements } and blocks on `signal`; this
// worker posts { id, code, metafile, replaced } or { id, errors } on workerPort, then bumps and notifies `signal`.

const fs = require("node:fs");
const path = require("node:path");
const { parentPort, workerData } = require("node:worker_threads");

const realPath = (file) => {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
};

/**
 * Loads each file named in `replacements` (project-relative path -> project-relative stand-in) with the
 * stand-in's text, resolving its imports from the replaced file's folder, so the module keeps its place
 * and name in the bundle. Paths are compared after resolving symlinks, as esbuild reports them (a
 * node_modules that is a symlink). `used` collects the replaced files, for the caller to check.
 */
function replaceFiles(root, replacements, used) {
  const byPath = new Map(
    Object.entries(replacements).map(([from, to]) => [realPath(path.resolve(root, from)), path.resolve(root, to)]),
  );
  const names = Object.keys(replacements).map((f) => path.basename(f).replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return {
    name: "replace-files",
    setup(build) {
      if (names.length === 0) return;
      build.onLoad({ filter: new RegExp(`(^|[\\\\/])(${names.join("|")})$`) }, (args) => {
        const standIn = byPath.get(realPath(args.path));
        if (!standIn) return undefined;
        used.push(args.path);
        return {
          contents: fs.readFileSync(standIn),
          loader: "js",
          resolveDir: path.dirname(args.path),
          watchFiles: [standIn],
        };
      });
    },
  };
}

const messages = (list) =>
  (list ?? []).map((e) => ({
    text: e.text,
    location: e.location ? { file: e.location.file, line: e.location.line } : undefined,
  }));

async function build(esbuild, { options, replacements }) {
  try {
    const replaced = [];
    const result = await esbuild.build({
      ...options,
      metafile: true,
      write: false,
      plugins: [replaceFiles(options.absWorkingDir, replacements, replaced)],
    });
    return { code: result.outputFiles[0].contents, metafile: result.metafile, replaced };
  } catch (err) {
    const errors = messages(err?.errors);
    return { errors: errors.length ? errors : [{ text: String(err?.stack || err) }] };
  }
}

const { workerPort } = workerData;
let esbuild;
let startError;
try {
  esbuild = require("esbuild");
} catch (err) {
  startError = `lib/construct/bundling/esbuild-worker.js could not load esbuild (run npm ci): ${err?.message}`;
}

parentPort.on("message", async (msg) => {
  const signal = new Int32Array(msg.signal);
  let reply;
  try {
    reply = startError ? { errors: [{ text: startError }] } : await build(esbuild, msg);
  } catch (err) {
    reply = { errors: [{ text: String(err?.stack || err) }] };
  }
  try {
    workerPort.postMessage({ id: msg.id, ...reply });
  } finally {
    // Wakes the main thread, blocked in Atomics.wait; it reads the reply with receiveMessageOnPort and
    // reports a missing one, so it never waits on a reply that cannot come.
    Atomics.add(signal, 0, 1);
    Atomics.notify(signal, 0);
  }
});
