// The cdktf CLI run directly (node_modules/.bin/cdktf, as `npx cdktf` runs it), not through bin/cdktf: stdin
// not a terminal, a person's umask 022, only the given TF_VAR_ values, what a person exports once.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { CdktfRun } from "../../../dev/demo/project";
import { PROJECT_ROOT } from "../../../lib/entry-points";

const CDKTF = path.join(PROJECT_ROOT, "node_modules", ".bin", "cdktf");

/** `cdktf <args>` in `dir` with only `secrets` as TF_VAR_ values (bin/cdktf's environment removed). */
export function plainCdktf(dir: string, args: string[], secrets: Record<string, string>): Promise<CdktfRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, CI: "1", FORCE_COLOR: "0", NO_COLOR: "1", ...secrets };
  for (const name of Object.keys(env)) if (name.startsWith("TF_VAR_") && !(name in secrets)) delete env[name];
  delete env.VM_INSTALL_PREPARED;
  // What a person exports once (no checkpoint call, an empty CLI configuration).
  env.CHECKPOINT_DISABLE = "1";
  env.TF_CLI_CONFIG_FILE = path.join(PROJECT_ROOT, ".cache", "terraformrc");
  fs.mkdirSync(path.dirname(env.TF_CLI_CONFIG_FILE), { recursive: true });
  if (!fs.existsSync(env.TF_CLI_CONFIG_FILE)) fs.writeFileSync(env.TF_CLI_CONFIG_FILE, "");
  const old = process.umask(0o022);
  try {
    const child = spawn(CDKTF, args, { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d) => {
      output += d;
    });
    child.stderr.on("data", (d) => {
      output += d;
    });
    return new Promise((resolve) => child.on("close", (code) => resolve({ code: code ?? 1, output })));
  } finally {
    process.umask(old);
  }
}
