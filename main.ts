// cdktf app: cdktf.json context -> validated config -> the project prepared for Terraform
// (lib/construct/synth-preparation.ts) -> VmInstallStack, written as JSON or, for `cdktf synth --hcl`, as HCL
// (lib/construct/stack-files.ts).
import * as path from "node:path";
import { App } from "./lib/construct/cdktf";
import { CONTEXT_KEY, parseConfig } from "./lib/construct/config/parse";
import { warnCheckpoint } from "./lib/construct/risky-settings";
import { VmInstallStack } from "./lib/construct/stack";
import { finishStackFiles } from "./lib/construct/stack-files";
import { prepareForTerraform } from "./lib/construct/synth-preparation";
import { ValidationError } from "./lib/shared/validate";

// What the app writes can hold secrets (host keys, the stack CA, secret triggers): owner-only, as
// bin/cdktf's umask makes it, when cdktf is run directly too.
process.umask(0o077);

// cdktf's own HCL rendering is replaced (lib/construct/json-config-as-hcl.ts): the app always synthesizes JSON.
const hcl = process.env.SYNTH_HCL_OUTPUT === "true";
delete process.env.SYNTH_HCL_OUTPUT;

async function main(): Promise<void> {
  // No stack traces in cdktf.out: they name this machine's folders, and cdktf.out is meant to travel.
  const app = new App({ stackTraces: false, hclOutput: false });
  try {
    const config = parseConfig(app.node.tryGetContext(CONTEXT_KEY));
    const stackDir = path.join(path.resolve(app.outdir), "stacks", config.stackName);
    const prepared = await prepareForTerraform(process.cwd(), stackDir, config);
    const stack = new VmInstallStack(app, config.stackName, { config, ...prepared });
    warnCheckpoint(stack, process.env);
  } catch (err) {
    if (err instanceof ValidationError) {
      console.error(`vm-install: invalid configuration in ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  app.synth();
  finishStackFiles(app.outdir, hcl);
}

main().catch((err) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exit(1);
});
