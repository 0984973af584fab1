// One installer run as a sless_job: the handler's bundle as source_dir, the connection in env_vars, the
// business input in event_json. The platform reports the handler's JSON result in `message`.
import { Construct } from "constructs";
import { Job } from "../../providers/generated/sless/job";
import type { ITerraformDependable } from "../cdktf";

export interface InstallerJobProps {
  /** Job name on the platform; unique per VM. */
  readonly name: string;
  /** sless runtime, e.g. "nodejs20". */
  readonly runtime: string;
  /** The bundled handler directory (asset path). */
  readonly sourceDir: string;
  /** VM_IP, SSH_USER, SSH_KEY (a sensitive file() reference), SSH_PORT, optional SSH_HOST_KEY_SHA256. */
  readonly env: Record<string, string>;
  /** event_json: a JSON string, or a Terraform jsonencode() expression when it holds a secret. */
  readonly eventJson: string;
  /** Raise to rerun. */
  readonly runId: number;
  /** wait_timeout_sec. */
  readonly waitTimeoutSec: number;
  /** What must finish first: the VM and the previous installer on the same VM. */
  readonly dependsOn: ITerraformDependable[];
}

/** What a VM's construct needs from a job, whatever runs it. */
export interface InstallerJob extends ITerraformDependable {
  /** The handler's JSON result (or the error text), as a Terraform expression. */
  readonly message: string;
}

export function createSlessJob(scope: Construct, id: string, props: InstallerJobProps): InstallerJob {
  const job = new Job(scope, id, {
    name: props.name,
    runtime: props.runtime,
    entrypoint: "handler.install",
    sourceDir: props.sourceDir,
    envVars: props.env,
    eventJson: props.eventJson,
    runId: props.runId,
    waitTimeoutSec: props.waitTimeoutSec,
    dependsOn: props.dependsOn,
  });
  job.overrideLogicalId(id);
  return job;
}
