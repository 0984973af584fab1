// cdktf app: cdktf.json context -> validated config -> VmInstallStack.
import { App } from "./construct/cdktf";
import { CONTEXT_KEY, parseConfig } from "./construct/config/parse";
import { VmInstallStack } from "./construct/stack";
import { ValidationError } from "./shared/validate";

// No stack traces in cdktf.out: they name this machine's folders, and cdktf.out is meant to travel.
const app = new App({ stackTraces: false });
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
