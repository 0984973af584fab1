// The stack's PostgreSQL CA as Terraform reads it from its file at plan time (never at synth: the file also
// holds the key, and cdktf.out gets only expressions): the output postgres_ca_cert for clients'
// sslrootcert, the trigger that reruns a local job when the CA changes (its certificate's hash), and a check
// that stops the plan, saying why, when the file is missing. The key reaches a job from the file itself.
import type { Construct } from "constructs";
import { TerraformOutput } from "./cdktf";
import type { VmInstallConfig } from "./config/types";
import { TerraformData } from "./jobs/terraform-data";
import { stackCaVms } from "./postgres-ca";
import type { TerraformPaths } from "./terraform-paths";

const CA_OUTPUT = "postgres_ca_cert";
const CA_CHECK = "postgres_ca_check";

/** A property of the CA file (relative to the stack folder) as an expression, "" without the file. */
function caFileProperty(file: string, property: "cert" | "key"): string {
  return `try(jsondecode(file(${JSON.stringify(file)})).${property}, "")`;
}

/**
 * What changes whenever the CA does: its certificate's SHA-256 (a new key is a new certificate). Public, so
 * the state may hold it; the key itself never enters a trigger.
 */
export function caTriggerExpression(file: string): string {
  return `\${sha256(${caFileProperty(file, "cert")})}`;
}

/** The output and the check, when a VM asks for the stack's CA; `file`: caFile(resultsFolder(...)). */
export function stackCaOutput(scope: Construct, config: VmInstallConfig, paths: TerraformPaths, file: string): void {
  const vms = stackCaVms(config);
  if (!vms.length) return;
  const placed = paths.placed(file);
  new TerraformOutput(scope, CA_OUTPUT, {
    value: `\${${caFileProperty(placed, "cert")}}`,
    description:
      `The CA certificate (PEM) of the PostgreSQL server certificates of ${vms.join(", ")}: ` +
      "psql sslmode=verify-full sslrootcert=<a file holding it>",
  }).overrideLogicalId(CA_OUTPUT);
  // A condition must name something of the configuration (Terraform refuses one that names nothing at init):
  // the file is named from path.module, the stack folder, as every relative path is taken.
  const inModule = `\${path.module}/${placed}`;
  const check = new TerraformData(scope, CA_CHECK, {});
  check.overrideLogicalId(CA_CHECK);
  check.addOverride("lifecycle.precondition", [
    {
      condition: `\${${caFileProperty(inModule, "cert")} != "" && ${caFileProperty(inModule, "key")} != ""}`,
      error_message:
        `vm-install: the stack's PostgreSQL CA file ${placed} (relative to the stack folder) is missing or not a ` +
        "whole CA (cert and key). cdktf synth, deploy or diff in the project folder makes it when there is none; " +
        "a copied cdktf.out needs the project's .vm-install folder beside it as it was.",
    },
  ]);
}
