// The secret triggers' salt: random, made once per deployment and kept in its state, so no table of triggers
// serves two deployments, while every working copy sharing the state computes the same trigger. Synth cannot
// read state, so a copy caches the salt (.vm-install/<stack>/deployment-salt, 0600) before a run, read back
// from the state (its local file, or `terraform state pull` from pg or s3) or new on a first deploy.
// terraform_data.vm_install_secret_salt keeps its first input; a plan whose cache is not the state's stops.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Construct } from "constructs";
import { writeResultFile } from "../../jobs/job-result-file";
import { App, TerraformStack } from "../cdktf";
import type { VmInstallConfig } from "../config/types";
import { configureBackend } from "../state-backend";
import { TerraformPaths } from "../terraform-paths";
import { TerraformData } from "./terraform-data";

/** The resource that keeps the salt in the state. */
export const SECRET_SALT_ID = "vm_install_secret_salt";
const SALT = /^[0-9a-f]{64}$/;

/** Where the working copy caches its deployment's salt. */
export function secretSaltFile(resultsDir: string): string {
  return path.join(resultsDir, "deployment-salt");
}

/** The salt a Terraform state (its JSON) keeps, if it keeps one. */
export function saltInState(state: unknown): string | undefined {
  const resources = (state as { resources?: unknown[] } | undefined)?.resources ?? [];
  // terraform_data's output is a dynamic value: the state holds it as {value, type}.
  type Instance = { attributes?: { output?: { value?: { salt?: unknown } } } };
  for (const r of resources as { type?: string; name?: string; instances?: Instance[] }[]) {
    if (r.type !== "terraform_data" || r.name !== SECRET_SALT_ID) continue;
    const salt = r.instances?.[0]?.attributes?.output?.value?.salt;
    if (typeof salt === "string" && SALT.test(salt)) return salt;
  }
  return undefined;
}

/** The deployment's state as JSON, read where its backend keeps it; undefined when there is none yet. */
export type StateReader = (projectDir: string, config: Pick<VmInstallConfig, "stackName" | "backend">) => unknown;

/** The local backend's file, read as it is; a pg or s3 backend through `terraform state pull`. */
const readState: StateReader = (projectDir, config) => {
  if (config.backend.type === "local") {
    const file = path.join(projectDir, `terraform.${config.stackName}.tfstate`);
    const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
    // An empty file is no state yet (Terraform's own reading); anything else must be the state it wrote.
    return text.trim() ? JSON.parse(text) : undefined;
  }
  return pullState(projectDir, config);
};

/** `terraform state pull` in a scratch stack holding the backend block alone (as the stack synthesizes it). */
function pullState(projectDir: string, config: Pick<VmInstallConfig, "stackName" | "backend">): unknown {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), "vm-install-salt-"));
  try {
    const app = new App({ outdir, skipValidation: true });
    const stack = new TerraformStack(app, "state");
    const stackDir = path.join(outdir, "stacks", "state");
    configureBackend(stack, config.stackName, config.backend, new TerraformPaths(stackDir, projectDir));
    app.synth();
    const env = { ...process.env, CHECKPOINT_DISABLE: "1", TF_IN_AUTOMATION: "1" };
    for (const args of [
      ["init", "-input=false", "-no-color"],
      ["state", "pull"],
    ]) {
      const run = spawnSync("terraform", args, { cwd: stackDir, env, encoding: "utf8" });
      if (run.status !== 0) {
        const why = (run.stderr || run.stdout || String(run.error)).trim().split("\n").slice(-3).join(" ");
        throw new Error(
          `reading the deployment's secret salt from the ${config.backend.type} backend: terraform ${args.join(" ")} ` +
            `failed (${why}); set the backend's credentials as for a deploy ` +
            "(docs/operations.md, State a team can share)",
        );
      }
      if (args[0] === "state") return run.stdout.trim() ? JSON.parse(run.stdout) : undefined;
    }
    return undefined;
  } finally {
    fs.rmSync(outdir, { recursive: true, force: true });
  }
}

/**
 * The deployment's salt, cached in this working copy: the cache, else the state's, else a new random one
 * (a first deploy), which the plan then keeps in the state.
 */
export function deploymentSalt(
  projectDir: string,
  resultsDir: string,
  config: Pick<VmInstallConfig, "stackName" | "backend">,
  read: StateReader = readState,
): string {
  const file = secretSaltFile(resultsDir);
  if (fs.existsSync(file)) {
    const cached = fs.readFileSync(file, "utf8").trim();
    if (SALT.test(cached)) return cached;
  }
  const salt = saltInState(read(projectDir, config)) ?? randomBytes(32).toString("hex");
  fs.mkdirSync(resultsDir, { recursive: true, mode: 0o700 });
  writeResultFile(file, salt);
  return salt;
}

/**
 * The state's record of the salt: made from the cache on the first deploy and never changed after, so the
 * state keeps the salt every copy reads back. A plan stops when the cache is missing (a run that did not
 * prepare it) or is another deployment's.
 */
export function secretSaltResource(scope: Construct, file: string): TerraformData {
  const quoted = JSON.stringify(file);
  const cache = `trimspace(file(${quoted}))`;
  const salt = new TerraformData(scope, SECRET_SALT_ID, {
    input: { salt: `\${fileexists(${quoted}) ? ${cache} : ""}`, file },
    // A destroy ends the deployment: its cache goes with the record, and a deploy after it makes a new salt.
    provisioners: [{ type: "local-exec", when: "destroy", command: 'rm -f "${self.input.file}"' }],
  });
  salt.overrideLogicalId(SECRET_SALT_ID);
  salt.addOverride("lifecycle.ignore_changes", ["input"]);
  salt.addOverride("lifecycle.precondition", [
    {
      // path.module: a condition must name something of the configuration; it is the stack folder.
      condition: `\${fileexists(format("%s/%s", path.module, ${quoted}))}`,
      error_message:
        `No secret salt at ${file} (relative to the stack folder): it is made, or read back from the state, ` +
        "before each run by npm run deploy (bin/cdktf); run the deploy through it.",
    },
  ]);
  salt.addOverride("lifecycle.postcondition", [
    {
      // A conditional, not ||: Terraform evaluates both sides of ||, and file() fails on a missing file.
      condition: `\${fileexists(${quoted}) ? self.output.salt == ${cache} : true}`,
      error_message:
        `The secret salt in ${file} (relative to the stack folder) is not the one this deployment's state ` +
        "keeps, so the secret triggers would not match any other working copy's: delete the file and deploy " +
        "again (it is read back from the state).",
    },
  ]);
  return salt;
}
