// cdktf app: cdktf.json context -> validated config -> VmInstallStack, written as JSON or, for
// `cdktf synth --hcl`, as HCL (construct/stack-files.ts).
import { App } from "./construct/cdktf";
import { CONTEXT_KEY, parseConfig } from "./construct/config/parse";
import { VmInstallStack } from "./construct/stack";
import { finishStackFiles } from "./construct/stack-files";
import { ValidationError } from "./shared/validate";

// cdktf's own HCL rendering is replaced (construct/json-config-as-hcl.ts): the app always synthesizes JSON.
const hcl = process.env.SYNTH_HCL_OUTPUT === "true";
delete process.env.SYNTH_HCL_OUTPUT;

// No stack traces in cdktf.out: they name this machine's folders, and cdktf.out is meant to travel.
const app = new App({ stackTraces: false, hclOutput: false });
try {
  const config = parseConfig(app.node.tryGetContext(CONTEXT_KEY));
  new VmInstallStack(app, config.stackName, { config });
} catch (err) {
  if (err instanceof ValidationError) {
    console.error(`vm-install: invalid configuration in ${err.message}`);
    process.exit(1);
  }
  throw err;
}
app.synth();
finishStackFiles(app.outdir, hcl);
