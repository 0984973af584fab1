// What one installer run needs, whatever runs it (sless_job on the platform, or terraform_data +
// local-exec here). The VM construct builds these; a job target turns one into Terraform resources.
import type { Construct } from "constructs";
import type { HostKeySource } from "../../shared/names";
import type { ITerraformDependable, TerraformVariable } from "../cdktf";
import type { HandlerAsset } from "./handler-asset";

export interface JobConnection {
  /** Address the handler connects to (a Terraform expression for a Nubes VM). */
  readonly address: string;
  readonly user: string;
  readonly port: number;
  /**
   * The private key file as the configuration names it (relative to the stack folder unless absolute); read
   * at apply time, never at synth. Absent for a job that never authenticates (the host-key probe).
   */
  readonly privateKeyPath?: string;
  /** Where cdktf.json names that key ("vms[db].privateKeyPath (vm_key)"): SSH_KEY_SETTING, for messages. */
  readonly keySetting?: string;
  /** The host key the job requires: the VM's pin, its delivered key or the first contact's (an expression). */
  readonly hostKeySha256?: string;
  /** Where that key comes from, for the job's mismatch message (SSH_HOST_KEY_SOURCE). */
  readonly hostKeySource?: HostKeySource;
}

export interface JobSpec {
  /** Job name, unique per VM ("<vm>-<handler>"). */
  readonly name: string;
  /** The bundled handler. */
  readonly asset: HandlerAsset;
  readonly connection: JobConnection;
  /** The event without secrets. */
  readonly event: Record<string, unknown>;
  /** Event fields whose values are secrets, each from a sensitive Terraform variable (TF_VAR_<name>). */
  readonly secretEvent: Record<string, TerraformVariable>;
  /**
   * Event fields from the stack's CA file (lib/construct/postgres-ca.ts), read at plan (sless) or by the runner
   * (local), never through a variable: `file` as the configuration names it (relative to the stack folder),
   * `fields` event field -> its property there.
   */
  readonly stackCa?: { readonly file: string; readonly fields: Readonly<Record<string, "cert" | "key">> };
  readonly runId: number;
  readonly waitTimeoutSec: number;
  /** What must be in place first: the VM (when this stack creates it). */
  readonly dependsOn: ITerraformDependable[];
  /** The previous installer on the same VM: this job runs after it, and reruns whenever it does. */
  readonly previous?: InstallerJob;
  /**
   * Leave a failure to the rollout's gates (lib/construct/jobs/rollout-gate.ts): the job records phase Failed
   * instead of failing the apply, and does nothing when `previous` did not succeed. @default false
   */
  readonly tolerateFailure?: boolean;
  /**
   * `cdktf destroy` runs this job with state "absent" first (vms[].onDestroy "uninstall"; the local target
   * only, config refuses it elsewhere). @default false
   */
  readonly uninstallOnDestroy?: boolean;
}

/** What the VM construct needs back from a job, whatever runs it. */
export interface InstallerJob extends ITerraformDependable {
  /** The handler's JSON result (or the error text), as a Terraform expression: the output's value. */
  readonly message: string;
  /** "type.name", for meta-arguments that take a bare address (replace_triggered_by, depends_on in an override). */
  readonly address: string;
  /** "Succeeded", "Failed" (or "NotRun"), as a Terraform expression; given by a job with tolerateFailure. */
  readonly phase?: string;
  /** The resource whose destroy takes this job's software back off (uninstallOnDestroy). */
  readonly uninstall?: ITerraformDependable;
}

/** The bare address of a resource whose logical id was overridden to `id`. */
export function resourceAddress(resource: { terraformResourceType: string }, id: string): string {
  return `${resource.terraformResourceType}.${id}`;
}

/** Turns a JobSpec into the resources of one job target. */
export type JobTargetFactory = (scope: Construct, id: string, spec: JobSpec) => InstallerJob;
