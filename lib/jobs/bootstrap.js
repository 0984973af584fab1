// The first script of a job process, playing the platform's runtime: read the invocation from stdin,
// load <cwd>/<module>.js, call the export once and report the outcome on fd 3. Plain JavaScript on
// purpose: it runs in a bare `node` with no loader, in the job directory, with the job's environment only.
// Protocol, kept in step with run-job.ts (and job-output.ts for fd 3): argv[2] is the entrypoint
// "module.function" (not secret; already validated by the runner), stdin the invocation, fd 3 the
// result (both described where they are read and written below).

// Taken before any handler code runs: a handler that replaces these cannot tamper with the report.
const fs = require("node:fs");
const path = require("node:path");
const Module = require("node:module");
const stringify = JSON.stringify;
const exit = process.exit.bind(process);
const writeSync = fs.writeSync;
const writeOut = process.stdout.write.bind(process.stdout);
const writeErr = process.stderr.write.bind(process.stderr);

/**
 * One line of JSON {"nonce", "phase", "message"}: a pipe of its own, so nothing the handler prints on
 * stdout/stderr can pass for the result; the nonce (which only this script has seen) rules out a stray
 * write to fd 3 by handler code too.
 */
const RESULT_FD = 3;
const MAX_FRAMES = 8;

let nonce = "";
let reported = false;

function report(phase, message) {
  if (reported) return;
  reported = true;
  const buf = Buffer.from(`${stringify({ nonce, phase, message })}\n`, "utf8");
  let off = 0;
  while (off < buf.length) {
    try {
      off += writeSync(RESULT_FD, buf, off, buf.length - off);
    } catch (err) {
      // A large result can fill the pipe; the runner is reading, so waiting a moment is enough.
      if (err && err.code === "EAGAIN") continue;
      throw err;
    }
  }
}

/** The error's message first, then a few frames of its stack that point into the job's code. */
const BUILTIN_ERRORS = new Set([
  "TypeError",
  "ReferenceError",
  "RangeError",
  "SyntaxError",
  "EvalError",
  "URIError",
  "AggregateError",
]);

function describeError(err) {
  if (!(err instanceof Error) && !(err && typeof err === "object" && typeof err.message === "string")) {
    let text;
    try {
      text = typeof err === "string" ? err : stringify(err);
    } catch {
      text = undefined;
    }
    return `handler threw a non-Error value: ${text === undefined ? String(err) : text}`;
  }
  // A handler's own error (an Error or a subclass it defined) is worded for a person: the message is the
  // whole story, and frames of minified bundle code in a Terraform output are only noise. A built-in
  // error type (TypeError, ...) is a bug: keep its type and where it happened.
  const builtin = BUILTIN_ERRORS.has(err.name);
  if (!builtin && err.message) {
    return err.message + (err.cause !== undefined ? `\ncaused by: ${describeError(err.cause)}` : "");
  }
  const name = typeof err.name === "string" && err.name && err.name !== "Error" ? `${err.name}: ` : "";
  let out = name + (err.message || "(error with an empty message)");
  const frames = String(err.stack || "")
    .split("\n")
    .filter((l) => /^\s+at /.test(l))
    .filter((l) => !l.includes("node:internal") && !l.includes(__filename))
    .slice(0, MAX_FRAMES)
    .map((l) => `  ${l.trim()}`);
  if (frames.length) out += `\n${frames.join("\n")}`;
  if (err.cause !== undefined) out += `\ncaused by: ${describeError(err.cause)}`;
  return out;
}

function finish(phase, message) {
  report(phase, message);
  // Exit as soon as what the handler printed is in the pipes, as the platform ends the job when the
  // handler returns: a socket or timer the handler left open must not keep the job alive. Node writes a
  // pipe at once only while it has room; what waits behind a full pipe (a runner slow to read) is lost
  // on exit, so the exit comes after the last write's callback on each stream.
  let open = 2;
  const done = () => {
    open -= 1;
    if (open === 0) exit(0);
  };
  for (const write of [writeOut, writeErr]) {
    try {
      write("", done);
    } catch {
      done();
    }
  }
}

function fail(message) {
  finish("Failed", message);
}

/**
 * One JSON document {"nonce": "...", "event": <event>}: the event can hold a password, so it never goes on
 * the command line or in the environment, where `ps` and /proc would show it.
 */
function readStdin() {
  return new Promise((resolve, reject) => {
    const chunks = [];
    process.stdin.on("data", (c) => chunks.push(c));
    process.stdin.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    process.stdin.on("error", reject);
  });
}

/**
 * On the platform the handler file sits alone in its directory, with no node_modules above it. Limit
 * module lookup to the job directory so a bundle that still needs a package from this checkout fails
 * here too, instead of passing locally and failing on the platform.
 */
function confineModuleLookup(dir) {
  const original = Module._nodeModulePaths;
  const inside = dir + path.sep;
  Module._nodeModulePaths = function nodeModulePaths(from) {
    return original.call(this, from).filter((p) => p.startsWith(inside));
  };
  Module.globalPaths.length = 0;
}

async function main() {
  const entrypoint = process.argv[2] || "";
  const dot = entrypoint.lastIndexOf(".");
  const moduleName = entrypoint.slice(0, dot);
  const exportName = entrypoint.slice(dot + 1);
  if (dot <= 0 || !/^[A-Za-z0-9_-]+$/.test(moduleName) || !/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(exportName)) {
    return fail(`bootstrap: invalid entrypoint ${stringify(entrypoint)}; expected "module.function"`);
  }

  let invocation;
  try {
    invocation = JSON.parse(await readStdin());
  } catch (err) {
    return fail(`bootstrap: could not read the invocation from stdin: ${err?.message}`);
  }
  nonce = String(invocation?.nonce);
  const event = invocation ? invocation.event : undefined;

  process.on("uncaughtException", (err) => fail(`uncaught exception in handler: ${describeError(err)}`));
  process.on("unhandledRejection", (err) => fail(`unhandled promise rejection in handler: ${describeError(err)}`));

  const dir = process.cwd();
  const file = path.join(dir, `${moduleName}.js`);
  if (!fs.existsSync(file)) {
    const present = fs.readdirSync(dir).join(", ") || "nothing";
    return fail(
      `entrypoint ${entrypoint}: ${file} does not exist (the directory holds ${present}); ` +
        "the job directory must be a bundle made by bundleHandler",
    );
  }
  confineModuleLookup(dir);

  let mod;
  try {
    mod = require(file);
  } catch (err) {
    return fail(`loading ${moduleName}.js failed: ${describeError(err)}`);
  }
  const fn = mod ? mod[exportName] : undefined;
  if (typeof fn !== "function") {
    const exported = mod && typeof mod === "object" ? Object.keys(mod).join(", ") || "nothing" : typeof mod;
    return fail(
      `entrypoint ${entrypoint}: ${moduleName}.js does not export a function "${exportName}" (it exports ${exported})`,
    );
  }

  let result;
  try {
    result = await fn(event);
  } catch (err) {
    return fail(describeError(err));
  }
  let message;
  try {
    message = stringify(result === undefined ? null : result);
  } catch (err) {
    return fail(`handler returned a value that is not JSON-serialisable: ${err?.message}`);
  }
  finish("Succeeded", message);
}

main().catch((err) => {
  try {
    fail(`bootstrap: ${describeError(err)}`);
  } catch {
    exit(70);
  }
});
