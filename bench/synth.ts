// Benchmark: wall time of `npx cdktf synth` for this project against a trivial one-resource cdktf app
// (plain JavaScript, no loader, no bundling), both measured here in the same run; median of N (5).
//   npm run bench:synth [-- N]
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { PROJECT_ROOT } from "../lib/bundling/bundle";

const runs = Number(process.argv[2] ?? 5);
const env = { ...process.env, CHECKPOINT_DISABLE: "1", TF_CLI_CONFIG_FILE: path.join(PROJECT_ROOT, ".cache", "terraformrc") };
fs.mkdirSync(path.join(PROJECT_ROOT, ".cache"), { recursive: true });
fs.writeFileSync(env.TF_CLI_CONFIG_FILE, "");

function trivialApp(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vm-install-trivial-"));
  fs.symlinkSync(path.join(PROJECT_ROOT, "node_modules"), path.join(dir, "node_modules"));
  fs.writeFileSync(path.join(dir, "cdktf.json"), JSON.stringify({ language: "typescript", app: "node main.js", terraformProviders: [], sendCrashReports: "false" }));
  fs.writeFileSync(path.join(dir, "main.js"), [
    'const { App, TerraformStack } = require("cdktf");',
    'const { DataResource } = require("cdktf");',
    "const app = new App();",
    'const stack = new TerraformStack(app, "trivial");',
    'new DataResource(stack, "one", { input: "x" });',
    "app.synth();",
  ].join("\n"));
  return dir;
}

function time(cwd: string): number {
  const start = process.hrtime.bigint();
  execFileSync(path.join(PROJECT_ROOT, "node_modules", ".bin", "cdktf"), ["synth"], { cwd, env, stdio: "ignore" });
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const trivial = trivialApp();
time(trivial); // warm both (file cache, esbuild binary) before measuring
time(PROJECT_ROOT);
const base: number[] = [];
const project: number[] = [];
for (let i = 0; i < runs; i++) {
  // Interleaved, so drift in machine load hits both alike.
  base.push(time(trivial));
  project.push(time(PROJECT_ROOT));
}
fs.rmSync(trivial, { recursive: true, force: true });
const ratio = median(project) / median(base);
console.log(`trivial one-resource app: median ${median(base).toFixed(0)} ms  (${base.map((t) => t.toFixed(0)).join(", ")})`);
console.log(`vm-install project:       median ${median(project).toFixed(0)} ms  (${project.map((t) => t.toFixed(0)).join(", ")})`);
console.log(`ratio ${ratio.toFixed(3)} (target <= 1.2)`);
