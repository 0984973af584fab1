// terraform-provider-sless, the twin: serves providers/schemas/sless.json and runs sless_job through the
// project's job runner on this machine. Started by Terraform (see dev/twin/install.ts), never by hand.
import { servePlugin } from "./protocol/plugin-server";
import { providerService } from "./protocol/provider-service";
import { loadProviderSchema } from "./protocol/schema";
import { slessJob } from "./sless/sless-job";

const log = (line: string) => process.stderr.write(`sless-twin: ${line}\n`);

const job = slessJob(log);
servePlugin(
  providerService({ schema: loadProviderSchema("sless"), resources: { sless_job: job.resource }, stop: job.stop }),
  log,
).catch((e: Error) => {
  log(`cannot start: ${e.message}`);
  process.exit(1);
});
