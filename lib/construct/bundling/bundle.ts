// esbuild bundling of one handler into a self-contained job directory (handler.js, CommonJS, exporting
// `install`). Kept apart from the construct that uses it, as aws-lambda-nodejs keeps its Bundling class:
// the stack, the job runner and the tests all go through this one function, so what a test runs is
// byte for byte what a job gets.
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from "node:worker_threads";
import type { BuildOptions, Metafile } from "esbuild";
import { PROJECT_ROOT } from "../../entry-points";

/** What bundleHandler bundles (a folder under handlers/) and where the bundle goes. */
export interface BundleProps {
  /** Handler folder name under handlers/, e.g. "install-packages". */
  readonly handler: string;
  /** Where content-addressed bundle directories go. @default "<project>/.cache/bundles" */
  readonly cacheDir?: string;
  /** Minify the output. @default true (310-440 KB per installer instead of 610-810 KB) */
  readonly minify?: boolean;
  /** Handlers folder, for tests that bundle a fixture handler. @default "<project>/handlers" */
  readonly handlersDir?: string;
}

export interface Bundle {
  /** Directory holding exactly handler.js: the job's source_dir. */
  readonly dir: string;
  /** sha256 of handler.js, hex: equal for equal sources. */
  readonly sha256: string;
  /** Size of handler.js in bytes. */
  readonly bytes: number;
}

/**
 * Files that handler bundles load from a smaller stand-in (project-relative paths), each shown unused by
 * handlers in its stand-in's header. Handlers only run commands as an SSH client with an unencrypted key:
 * ssh2's index would add its server, key generator and HTTP agents, its client loads SFTP eagerly, and
 * its key parser loads bcrypt-pbkdf (with tweetnacl) for passphrases: together about 120 KB more in every
 * bundle (310-440 KB without them). __tests__/bundle.test.ts runs every bundle, and
 * __tests__/handlers/install-packages.bundle.test.ts runs one against a real SSH server, so a stand-in
 * that breaks the client fails there.
 */
const SSH2_REPLACEMENTS: Readonly<Record<string, string>> = {
  "node_modules/ssh2/lib/index.js": "lib/construct/bundling/stubs/ssh2-index.js",
  "node_modules/ssh2/lib/protocol/SFTP.js": "lib/construct/bundling/stubs/ssh2-sftp.js",
  "node_modules/bcrypt-pbkdf/index.js": "lib/construct/bundling/stubs/bcrypt-pbkdf.js",
};

/**
 * esbuild options for a handler. Fixed target and format, paths relative to the project root and no
 * timestamps, so equal sources give byte-identical output on any machine and in any checkout folder.
 */
function bundleOptions(entry: string, minify: boolean): BuildOptions {
  return {
    entryPoints: [entry],
    absWorkingDir: PROJECT_ROOT,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    minify,
    legalComments: "none",
    charset: "utf8",
    // ssh2 tries its optional native pieces inside try/catch and falls back to pure JS: leave them out
    // so the directory runs with no node_modules and no compiler on the job's image.
    external: ["cpu-features", "*.node"],
    write: false,
    logLevel: "silent",
  };
}

interface Built {
  readonly bundle: Bundle;
  /** Every file the build read (absolute path -> sha256): the bundle is reused while all are unchanged. */
  readonly inputs: ReadonlyMap<string, string>;
}

// One build per handler per process: a stack of 20 VMs asks for the same three bundles 60 times, and each
// esbuild run costs 100-200 ms. Keyed by what the call names, checked against the content of what the
// build read, so a handler edited between two calls in one process (tests do) is bundled again.
const built = new Map<string, Built>();
let runs = 0;

/** How many times this process has run esbuild for a handler (memoised calls do not count). */
export function esbuildRunCount(): number {
  return runs;
}

const sha256Of = (data: Buffer | Uint8Array): string => crypto.createHash("sha256").update(data).digest("hex");

function unchanged(inputs: ReadonlyMap<string, string>): boolean {
  for (const [file, hash] of inputs) {
    let data: Buffer;
    try {
      data = fs.readFileSync(file);
    } catch {
      return false;
    }
    if (sha256Of(data) !== hash) return false;
  }
  return true;
}

/** Bundles `handlers/<handler>/handler.ts` and returns its content-addressed directory. */
export function bundleHandler(props: BundleProps): Bundle {
  const handlersDir = path.resolve(props.handlersDir ?? path.join(PROJECT_ROOT, "handlers"));
  const entry = path.join(handlersDir, props.handler, "handler.ts");
  const minify = props.minify ?? true;
  const cacheDir = path.resolve(props.cacheDir ?? path.join(PROJECT_ROOT, ".cache", "bundles"));
  const key = JSON.stringify([entry, minify, cacheDir]);
  const manifest = path.join(cacheDir, `.inputs-${sha256Of(Buffer.from(key)).slice(0, 16)}.json`);
  const previous = built.get(key) ?? readManifest(manifest);
  if (previous && fs.existsSync(path.join(previous.bundle.dir, "handler.js")) && unchanged(previous.inputs)) {
    built.set(key, previous);
    return previous.bundle;
  }

  if (!fs.existsSync(entry)) {
    throw new Error(
      `bundling ${props.handler}: ${entry} does not exist; ` +
        "every installer needs handlers/<name>/handler.ts exporting install(event)",
    );
  }
  const { code, metafile } = runEsbuild(props.handler, bundleOptions(entry, minify));
  runs++;
  const sha256 = sha256Of(code);
  const dir = path.join(cacheDir, `${props.handler}-${sha256.slice(0, 16)}`);
  if (!fs.existsSync(path.join(dir, "handler.js"))) {
    // Write beside, then rename: parallel synths (jest workers) never see a half-written bundle.
    fs.mkdirSync(cacheDir, { recursive: true });
    const staging = fs.mkdtempSync(path.join(cacheDir, ".staging-"));
    fs.writeFileSync(path.join(staging, "handler.js"), code);
    try {
      fs.renameSync(staging, dir);
    } catch {
      fs.rmSync(staging, { recursive: true, force: true }); // another process won the race: same bytes
    }
  }
  const bundle = { dir, sha256, bytes: code.length };
  const read = [
    ...Object.keys(metafile.inputs).map((f) => path.resolve(PROJECT_ROOT, f)),
    ...Object.values(SSH2_REPLACEMENTS).map((f) => path.resolve(PROJECT_ROOT, f)),
  ];
  const result: Built = {
    bundle,
    inputs: new Map([...read, ...BUILDER_FILES].map((f) => [f, sha256Of(fs.readFileSync(f))])),
  };
  built.set(key, result);
  writeManifest(manifest, result);
  return bundle;
}

/** What makes the bundle besides its sources: a change to any of these rebuilds it. */
const BUILDER_FILES = [__filename, path.join(__dirname, "esbuild-worker.js"), require.resolve("esbuild/package.json")];

/**
 * The inputs of the last build of a handler, kept beside the bundles so the next process (the next
 * synth, a local job) reuses the bundle without running esbuild while every input is byte for byte the
 * same. A missing or unreadable manifest only means a build.
 */
function readManifest(file: string): Built | undefined {
  try {
    const { bundle, inputs } = JSON.parse(fs.readFileSync(file, "utf8")) as {
      bundle: Bundle;
      inputs: [string, string][];
    };
    return { bundle, inputs: new Map(inputs) };
  } catch {
    return undefined;
  }
}

function writeManifest(file: string, result: Built): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(tmp, JSON.stringify({ bundle: result.bundle, inputs: [...result.inputs] }));
    fs.renameSync(tmp, file);
  } catch {
    fs.rmSync(tmp, { force: true }); // no manifest: the next process builds again, nothing worse
  }
}

interface EsbuildMessage {
  text: string;
  location?: { file: string; line: number };
}

interface WorkerReply {
  id: number;
  code?: Uint8Array;
  metafile?: Metafile;
  /** Absolute paths of the files the plugin loaded from a stand-in. */
  replaced?: string[];
  errors?: EsbuildMessage[];
}

/** A build that has not answered in this long is stuck, not slow: a handler bundles in well under a second. */
const BUILD_TIMEOUT_MS = 120_000;

let worker: { thread: Worker; port: MessagePort } | undefined;
let nextId = 0;

function esbuildWorker(): { thread: Worker; port: MessagePort } {
  if (worker) return worker;
  const { port1, port2 } = new MessageChannel();
  // execArgv [] keeps preloads such as bin/ts-register.js out of the worker, as esbuild does for its own.
  const thread = new Worker(path.join(__dirname, "esbuild-worker.js"), {
    workerData: { workerPort: port2 },
    transferList: [port2],
    execArgv: [],
  });
  // Idle, neither holds the process open: a synth exits as soon as its work is done.
  thread.unref();
  port1.unref();
  worker = { thread, port: port1 };
  return worker;
}

function runEsbuild(handler: string, options: BuildOptions): { code: Buffer; metafile: Metafile } {
  const { thread, port } = esbuildWorker();
  const signal = new Int32Array(new SharedArrayBuffer(4));
  const id = nextId++;
  thread.postMessage({ id, signal: signal.buffer, options, replacements: SSH2_REPLACEMENTS });
  const waited = Atomics.wait(signal, 0, 0, BUILD_TIMEOUT_MS);
  const reply = receiveMessageOnPort(port)?.message as WorkerReply | undefined;
  if (!reply || reply.id !== id) {
    worker = undefined;
    void thread.terminate();
    const what = waited === "timed-out" ? `gave no answer within ${BUILD_TIMEOUT_MS / 1000} s` : "answered out of turn";
    throw new Error(
      `bundling ${handler}: the esbuild worker (lib/construct/bundling/esbuild-worker.js) ${what}; ` +
        `rerun, and if it persists run node -e 'require("esbuild")' to check the esbuild install`,
    );
  }
  if (reply.errors) {
    const detail = reply.errors
      .map((e) => {
        const where = e.location ? `${e.location.file}:${e.location.line}: ` : "";
        const stub = SSH2_REPLACEMENTS["node_modules/ssh2/lib/index.js"];
        const hint = /node_modules\/ssh2\/lib\/index\.js/.test(e.text)
          ? ` (handler bundles load ${stub} in its place: export the name there)`
          : "";
        return `${where}${e.text}${hint}`;
      })
      .join("\n  ");
    throw new Error(`bundling ${handler} with esbuild failed:\n  ${detail}`);
  }
  const metafile = reply.metafile!;
  // A stand-in that silently stops applying (a moved file, a new ssh2 layout) would only show as a
  // bigger bundle; say which one instead.
  const replaced = new Set(reply.replaced!.map(realPath));
  for (const from of Object.keys(SSH2_REPLACEMENTS)) {
    const file = realPath(path.resolve(PROJECT_ROOT, from));
    const bundled = Object.keys(metafile.inputs).some((input) => realPath(path.resolve(PROJECT_ROOT, input)) === file);
    if (bundled && !replaced.has(file)) {
      throw new Error(
        `bundling ${handler}: ${from} went into the bundle as is, not replaced by ${SSH2_REPLACEMENTS[from]}; ` +
          "check the replace-files plugin in lib/construct/bundling/esbuild-worker.js",
      );
    }
  }
  return { code: Buffer.from(reply.code!), metafile };
}

function realPath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
}
