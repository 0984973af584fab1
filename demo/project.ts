// A cdktf project folder of its own (cdktf.json + this checkout's main.ts as the app) for a given
// vmInstall context: the demo deploys one, and the deploy tests deploy several side by side.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_ROOT } from "../lib/bundling/bundle";

/** Writes `<dir>/cdktf.json` whose app is this checkout's main.ts and whose context is `vmInstall`. */
/** A sandbox as a VM of kind "existing" in cdktf.json, its host key pinned. */
export function existingHost(name: string, sb: { address: string; port: number; user: string; privateKeyPath: string; hostKeySha256: string }) {
  return { name, kind: "existing", address: sb.address, sshPort: sb.port, user: sb.user, privateKeyPath: sb.privateKeyPath, hostKeySha256: sb.hostKeySha256 };
}

export function writeCdktfProject(dir: string, vmInstall: unknown): void {
  fs.mkdirSync(dir, { recursive: true });
  const cdktf = {
    language: "typescript",
    app: `node -r ${path.join(PROJECT_ROOT, "bin", "ts-register.js")} ${path.join(PROJECT_ROOT, "main.ts")}`,
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

/**
 * Runs `cdktf <args>` in `dir` through bin/cdktf. `echo` streams the output to this process's stderr
 * as it comes (a person watching a deploy); it is captured either way.
 */
export function runCdktf(dir: string, args: string[], opts: { env?: Record<string, string>; echo?: boolean } = {}): Promise<CdktfRun> {
  return new Promise((resolve) => {
    const child = spawn("bash", [path.join(PROJECT_ROOT, "bin", "cdktf"), ...args], {
      cwd: dir,
      env: { ...process.env, ...opts.env, FORCE_COLOR: "0", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    const take = (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      output += text;
      if (opts.echo) process.stderr.write(text);
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the terminal colour codes removed here.
    child.on("close", (code) => resolve({ code: code ?? 1, output: output.replace(/\x1b\[[0-9;]*[A-Za-z]/g, "") }));
  });
}

/**
 * A run's output as one line of words, for matching a message Terraform wrapped: cdktf's "<stack>"
 * prefix at the start of a line (it lands mid-sentence where a message was wrapped) removed, whitespace
 * collapsed.
 */
export function outputWords(run: CdktfRun, stack: string): string {
  return run.output.replace(new RegExp(`^${stack.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?=\\s)`, "gm"), "").replace(/\s+/g, " ");
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
