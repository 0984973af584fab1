// The stack's PostgreSQL CA certificate as the output postgres_ca_cert, for clients' sslrootcert. Read
// from the CA file at plan time like the delivered host keys (never at synth: the file also holds the key,
// and cdktf.out gets only the expression); the key stays in the file and reaches the jobs as a variable.
import type { Construct } from "constructs";
import { TerraformOutput } from "./cdktf";
import type { VmInstallConfig } from "./config/types";
import { resultsFolder } from "./jobs/secret-trigger";
import { caFile, stackCaVms } from "./postgres-ca";
import type { TerraformPaths } from "./terraform-paths";

export const CA_OUTPUT = "postgres_ca_cert";

export function stackCaOutput(scope: Construct, config: VmInstallConfig, paths: TerraformPaths, baseDir: string): void {
  const vms = stackCaVms(config);
  if (!vms.length) return;
  const file = JSON.stringify(paths.placed(caFile(resultsFolder(baseDir, config.stackName))));
  new TerraformOutput(scope, CA_OUTPUT, {
    value: `\${try(jsondecode(file(${file})).cert, "")}`,
    description:
      `The CA certificate (PEM) of the PostgreSQL server certificates of ${vms.join(", ")}: ` +
      "psql sslmode=verify-full sslrootcert=<a file holding it>",
  }).overrideLogicalId(CA_OUTPUT);
}
