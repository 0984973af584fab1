// Running Terraform on a synthesized project from this project's own commands (trust, status): where the
// stack folder is, and the environment cdktf would give it (no checkpoint calls; an empty CLI config when
// TF_CLI_CONFIG_FILE names a missing file, or Terraform warns on every call).
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { CONTEXT_KEY, parseConfig } from "../construct/config/parse";
import type { VmInstallConfig } from "../construct/config/types";
import { ENTRY_POINTS } from "../entry-points";

/**
 * The project folder a command (status, check, trust) works on: the folder npm was started in (INIT_CWD)
 * when npm started this very script (`npm_lifecycle_event` is its name: `cd .demo && npm run check`) and
 * that folder holds a cdktf.json; else the current folder. Both variables are inherited by every child of
 * an npm script, so INIT_CWD alone would send a command run from a test (under `npm test`) to the wrong
 * project.
 */
export function projectFolder(
  script: string,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): string {
  const started = env.INIT_CWD;
  const ours = env.npm_lifecycle_event === script;
  return ours && started && fs.existsSync(path.join(started, "cdktf.json")) ? started : cwd;
}

/** The project in `projectDir`: its parsed configuration and its stack folder. Throws naming what is missing. */
export function readProject(projectDir: string): { config: VmInstallConfig; stackDir: string } {
  const cdktfJson = path.join(projectDir, "cdktf.json");
  if (!fs.existsSync(cdktfJson))
    throw new Error(`no cdktf.json in ${projectDir}: run this in the cdktf project folder`);
  const config = parseConfig(JSON.parse(fs.readFileSync(cdktfJson, "utf8")).context?.[CONTEXT_KEY]);
  return { config, stackDir: path.join(projectDir, "cdktf.out", "stacks", config.stackName) };
}

function terraformEnv(projectDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, CHECKPOINT_DISABLE: "1" };
  if (!env.TF_CLI_CONFIG_FILE || !fs.existsSync(env.TF_CLI_CONFIG_FILE)) {
    fs.mkdirSync(path.join(projectDir, ".cache"), { recursive: true });
    env.TF_CLI_CONFIG_FILE = path.join(projectDir, ".cache", "terraformrc");
    fs.writeFileSync(env.TF_CLI_CONFIG_FILE, "");
  }
  return env;
}

/**
 * `terraform <args>` as spawnSync's command and arguments, under umask 077: Terraform creates state,
 * .backup and lock files with 0666 & ~umask, and what it writes can hold secrets (bin/cdktf does the same
 * for every deploy).
 */
function terraformCommand(args: string[]): [string, string[]] {
  return ["sh", ["-c", 'umask 077 && exec terraform "$@"', "terraform", ...args]];
}

/** `terraform <args>` in the stack folder; output captured. */
export function terraformIn(stackDir: string, projectDir: string, args: string[]) {
  return spawnSync(...terraformCommand([`-chdir=${stackDir}`, ...args]), {
    encoding: "utf8",
    env: terraformEnv(projectDir),
  });
}

/**
 * Makes `stackDir` ready for read-only Terraform commands: synthesized (bin/cdktf synth) when a working
 * copy has never been, and initialized (terraform init) when it has no .terraform yet, as in a colleague's
 * fresh clone of a project whose state is shared. `say` tells the person what is happening.
 */
export function ensureInitialized(projectDir: string, stackDir: string, say: (line: string) => void): void {
  if (!fs.existsSync(path.join(stackDir, "cdk.tf.json"))) {
    say("no synthesized stack in this working copy: cdktf synth");
    const synth = spawnSync("bash", [ENTRY_POINTS.cdktfWrapper, "synth"], {
      cwd: projectDir,
      encoding: "utf8",
      env: terraformEnv(projectDir),
    });
    if (synth.status !== 0)
      throw new Error(
        `cdktf synth failed in ${projectDir}: ${(synth.stderr || synth.stdout).trim().split("\n").slice(-3).join(" ")}`,
      );
  }
  if (!fs.existsSync(path.join(stackDir, ".terraform"))) {
    say("this working copy's stack is not initialized: terraform init");
    const init = terraformIn(stackDir, projectDir, ["init", "-input=false", "-no-color"]);
    if (init.status !== 0)
      throw new Error(`terraform init failed in ${stackDir}: ${init.stderr.trim().split("\n").slice(-3).join(" ")}`);
  }
}

/**
 * Synthesizes the stack (bin/cdktf synth), then `terraform init` and `terraform apply <applyArgs>` in its
 * folder, output shown as it comes: the day-two commands that change a deploy (trust, rerun) apply the stack
 * as the code says it now, never an older synth. `step.say` tells the person each step, `step.applying` what
 * the apply does. Returns the first failing step's exit code, else apply's.
 */
export function synthAndApply(
  projectDir: string,
  stackDir: string,
  applyArgs: string[],
  step: { say: (line: string) => void; applying: string; exitError: number },
): number {
  const { exitError } = step;
  step.say("synthesizing the stack (cdktf synth)");
  const synth = spawnSync("bash", [ENTRY_POINTS.cdktfWrapper, "synth"], {
    cwd: projectDir,
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (synth.status !== 0) return synth.status ?? exitError;
  step.say(step.applying);
  const env = terraformEnv(projectDir);
  const tf = (args: string[]) =>
    spawnSync(...terraformCommand([`-chdir=${stackDir}`, ...args]), { stdio: "inherit", env }).status ?? exitError;
  const init = tf(["init", "-input=false"]);
  return init !== 0 ? init : tf(["apply", "-input=false", ...applyArgs]);
}
