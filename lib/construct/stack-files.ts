// The stack file each synth leaves in cdktf.out/stacks/<stack>: cdk.tf.json, or cdk.tf for `cdktf synth --hcl`,
// never both. Terraform reads every .tf and .tf.json of the folder, so a cdk.tf left by an earlier --hcl synth
// beside a new cdk.tf.json declares every variable twice, and each later deploy or status fails until it goes.
import * as fs from "node:fs";
import * as path from "node:path";
import { configAsHcl } from "./json-config-as-hcl";

const JSON_FILE = "cdk.tf.json";
const HCL_FILE = "cdk.tf";

interface Manifest {
  stacks: Record<string, { synthesizedStackPath: string; workingDirectory: string }>;
}

/**
 * After app.synth() wrote every stack as JSON: with `hcl`, each stack's configuration rewritten as cdk.tf
 * (json-config-as-hcl.ts) and the manifest pointed at it (cdktf formats and reads the file it names);
 * either way, the other kind of stack file removed.
 */
export function finishStackFiles(outdir: string, hcl: boolean): void {
  const manifestFile = path.join(outdir, "manifest.json");
  const manifest = JSON.parse(fs.readFileSync(manifestFile, "utf8")) as Manifest;
  for (const stack of Object.values(manifest.stacks)) {
    const dir = path.join(outdir, stack.workingDirectory);
    if (hcl) {
      const config = JSON.parse(fs.readFileSync(path.join(dir, JSON_FILE), "utf8"));
      fs.writeFileSync(path.join(dir, HCL_FILE), configAsHcl(config));
      stack.synthesizedStackPath = path.join(stack.workingDirectory, HCL_FILE);
    }
    fs.rmSync(path.join(dir, hcl ? JSON_FILE : HCL_FILE), { force: true });
  }
  if (hcl) fs.writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
}
