// A cdktf project folder of its own (cdktf.json + this checkout's main.ts as the app) for a given
// vmInstall context: the demo deploys one, and the deploy tests deploy several side by side.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { ENTRY_POINTS, PROJECT_ROOT } from "../../lib/entry-points";

/** Writes `<dir>/cdktf.json` whose app is this checkout's main.ts and whose context is `vmInstall`. */
/** A sandbox as a VM of kind "existing" in cdktf.json, its host key pinned. */
export function existingHost(
  name: string,
  sb: { address: string; port: number; user: string; privateKeyPath: string; hostKeySha256: string },
) {
  return {
    name,
    kind: "existing",
    address: sb.address,
    sshPort: sb.port,
    user: sb.user,
    privateKeyPath: sb.privateKeyPath,
    hostKeySha256: sb.hostKeySha256,
  };
}

export function writeCdktfProject(dir: string, vmInstall: unknown): void {
  fs.mkdirSync(dir, { recursive: true });
  const cdktf = {
    language: "typescript",
    app: `node -r ${ENTRY_POINTS.tsRegister} ${path.join(PROJECT_ROOT, "main.ts")}`,
    projectId: path.basename(dir),
    sendCrashReports: "false",
    terraformProviders: [],
    terraformModules: [],
    context: { vmInstall },
  };
  fs.writeFileSync(path.join(dir, "cdktf.json"), `${JSON.stringify(cdktf, null, 2)}\n`);
}

export interface CdktfRun {
  code: number;
  /** stdout and stderr together, in order (ANSI colours removed). */
  output: string;
}

export interface RunCdktfOptions {
  env?: Record<string, string>;
  /** Stream the output to this process's stderr as it comes (a person watching a deploy). */
  echo?: boolean;
  /** Called with each line of the output (stdout and stderr), colour codes removed. */
  onLine?: (line: string) => void;
  /** Write the whole output here too (owner only: a plan names every input). */
  logFile?: string;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the terminal colour codes removed here.
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

/** Lines of a stream that arrives in chunks: each complete line to `sink`, the rest at `flush`. */
function lineSplitter(sink: ((line: string) => void) | undefined) {
  let pending = "";
  return {
    take(text: string) {
      if (!sink) return;
      const lines = (pending + text).split("\n");
      pending = lines.pop() ?? "";
      for (const l of lines) sink(l.replace(ANSI, ""));
    },
    flush() {
      if (sink && pending) sink(pending.replace(ANSI, ""));
      pending = "";
    },
  };
}

/**
 * Runs `cdktf <args>` in `dir` through bin/cdktf (whose output, piped here, is plain lines: no spinner,
 * no colour). The output is captured either way; `echo`, `onLine` and `logFile` show or keep it as it comes.
 */
export function runCdktf(dir: string, args: string[], opts: RunCdktfOptions = {}): Promise<CdktfRun> {
  return new Promise((resolve) => {
    const child = spawn("bash", [ENTRY_POINTS.cdktfWrapper, ...args], {
      cwd: dir,
      env: { ...process.env, ...opts.env, FORCE_COLOR: "0", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    if (opts.logFile) fs.rmSync(opts.logFile, { force: true });
    const log = opts.logFile ? fs.openSync(opts.logFile, "w", 0o600) : undefined;
    let output = "";
    const take = (lines: ReturnType<typeof lineSplitter>) => (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      output += text;
      if (log !== undefined) fs.writeSync(log, text);
      if (opts.echo) process.stderr.write(text);
      lines.take(text);
    };
    const out = lineSplitter(opts.onLine);
    const err = lineSplitter(opts.onLine);
    child.stdout.on("data", take(out));
    child.stderr.on("data", take(err));
    child.on("close", (code) => {
      out.flush();
      err.flush();
      if (log !== undefined) fs.closeSync(log);
      resolve({ code: code ?? 1, output: output.replace(ANSI, "") });
    });
  });
}

/**
 * A run's output as one line of words, for matching a message Terraform wrapped: cdktf's "<stack>"
 * prefix at the start of a line (it lands mid-sentence where a message was wrapped) removed, whitespace
 * collapsed.
 */
export function outputWords(run: CdktfRun, stack: string): string {
  return run.output
    .replace(new RegExp(`^${stack.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?=\\s)`, "gm"), "")
    .replace(/\s+/g, " ");
}

/**
 * The stack's outputs after a deploy with `--outputs-file <dir>/outputs.json`, by output name. cdktf
 * nests them by construct path (stack -> VM -> output); names are unique, so one level is enough.
 */
export function readOutputs(dir: string, stack: string): Record<string, string> {
  const all = JSON.parse(fs.readFileSync(path.join(dir, "outputs.json"), "utf8"));
  const flat: Record<string, string> = {};
  const walk = (node: Record<string, unknown>) => {
    for (const [key, value] of Object.entries(node)) {
      if (value !== null && typeof value === "object") walk(value as Record<string, unknown>);
      else flat[key] = String(value);
    }
  };
  walk(all[stack] ?? {});
  return flat;
}

/** A demo's PostgreSQL password: made once (quotes, $ and spaces on purpose), kept 0600 in its folder. */
export function demoPassword(dir: string): string {
  if (process.env.TF_VAR_pg_password) return process.env.TF_VAR_pg_password;
  const file = path.join(dir, "pg_password");
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(file, `demo '${randomBytes(9).toString("base64")}' $x\\y`, { mode: 0o600 });
  }
  return fs.readFileSync(file, "utf8");
}
