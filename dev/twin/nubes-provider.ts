// terraform-provider-nubes, the twin: serves providers/schemas/nubes.json; nubes_vapp is a record and
// nubes_vc_vm_v3 a sandbox VM on this machine. Started by Terraform (see dev/twin/install.ts), never by hand.
import { nubesVapp } from "./nubes/nubes-vapp";
import { nubesVm } from "./nubes/nubes-vm";
import { servePlugin } from "./protocol/plugin-server";
import { providerService } from "./protocol/provider-service";
import { loadProviderSchema } from "./protocol/schema";

const log = (line: string) => process.stderr.write(`nubes-twin: ${line}\n`);

servePlugin(
  providerService({
    schema: loadProviderSchema("nubes"),
    resources: { nubes_vapp: nubesVapp(log), nubes_vc_vm_v3: nubesVm(log) },
  }),
  log,
).catch((e: Error) => {
  log(`cannot start: ${e.message}`);
  process.exit(1);
});
