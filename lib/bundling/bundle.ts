// esbuild bundling of one handler into a self-contained job directory (handler.js, CommonJS, exporting
// `install`). Kept apart from the construct that uses it, as aws-lambda-nodejs keeps its Bundling class:
// the stack, the job runner and the tests all go through this one function, so what a test runs is
// byte for byte what a job gets.
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { buildSync, BuildOptions } from "esbuild";

/** The project root: handlers/ and node_modules/ are found from here whatever the cwd. */
export const PROJECT_ROOT = path.resolve(__dirname, "..", "..");

export interface BundleProps {
  /** Handler folder name under handlers/, e.g. "install-packages". */
  readonly handler: string;
  /** Where content-addressed bundle directories go. @default "<project>/.cache/bundles" */
  readonly cacheDir?: string;
  /** Minify the output. @default true (about 330 KB instead of 1 MB with ssh2) */
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
 * esbuild options for a handler. Fixed target and format, paths relative to the project root and no
 * timestamps, so equal sources give byte-identical output on any machine and in any checkout folder.
 */
export function bundleOptions(entry: string, minify: boolean): BuildOptions {
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

/** Bundles `handlers/<handler>/handler.ts` and returns its content-addressed directory. */
export function bundleHandler(props: BundleProps): Bundle {
  const handlersDir = props.handlersDir ?? path.join(PROJECT_ROOT, "handlers");
  const entry = path.join(handlersDir, props.handler, "handler.ts");
  if (!fs.existsSync(entry)) {
    throw new Error(`bundling ${props.handler}: ${entry} does not exist; every installer needs handlers/<name>/handler.ts exporting install(event)`);
  }
  let result;
  try {
    result = buildSync(bundleOptions(entry, props.minify ?? true));
  } catch (err) {
    const errors = (err as { errors?: { text: string; location?: { file: string; line: number } }[] }).errors ?? [];
    const detail = errors.map((e) => `${e.location ? `${e.location.file}:${e.location.line}: ` : ""}${e.text}`).join("\n  ");
    throw new Error(`bundling ${props.handler} with esbuild failed:\n  ${detail || (err as Error).message}`);
  }
  const code = result.outputFiles![0].contents;
  const sha256 = crypto.createHash("sha256").update(code).digest("hex");
  const cacheDir = props.cacheDir ?? path.join(PROJECT_ROOT, ".cache", "bundles");
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
  return { dir, sha256, bytes: code.length };
}
