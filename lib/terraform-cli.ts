// Running Terraform on a synthesized project from this project's own commands (trust, status): where the
// stack folder is, and the environment cdktf would give it (no checkpoint calls; an empty CLI config when
// TF_CLI_CONFIG_FILE names a missing file, or Terraform warns on every call).
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { CONTEXT_KEY, parseConfig } from "./config/parse";
import type { VmInstallConfig } from "./config/types";

/** The project in `projectDir`: its parsed configuration and its stack folder. Throws naming what is missing. */
export function readProject(projectDir: string): { config: VmInstallConfig; stackDir: string } {
  const cdktfJson = path.join(projectDir, "cdktf.json");
  if (!fs.existsSync(cdktfJson)) throw new Error(`no cdktf.json in ${projectDir}: run this in the cdktf project folder`);
  const config = parseConfig(JSON.parse(fs.readFileSync(cdktfJson, "utf8")).context?.[CONTEXT_KEY]);
  return { config, stackDir: path.join(projectDir, "cdktf.out", "stacks", config.stackName) };
}

export function terraformEnv(projectDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, CHECKPOINT_DISABLE: "1" };
  if (!env.TF_CLI_CONFIG_FILE || !fs.existsSync(env.TF_CLI_CONFIG_FILE)) {
    fs.mkdirSync(path.join(projectDir, ".cache"), { recursive: true });
    env.TF_CLI_CONFIG_FILE = path.join(projectDir, ".cache", "terraformrc");
    fs.writeFileSync(env.TF_CLI_CONFIG_FILE, "");
  }
  return env;
}

/** `terraform <args>` in the stack folder; output captured. */
export function terraformIn(stackDir: string, projectDir: string, args: string[]) {
  return spawnSync("terraform", [`-chdir=${stackDir}`, ...args], { encoding: "utf8", env: terraformEnv(projectDir) });
}
