// One installer run as a sless_job: the handler's bundle as source_dir, the connection in env_vars, the
// business input in event_json. The platform reports the handler's JSON result in `message`.
import type { Construct } from "constructs";
import { Job } from "../../../providers/generated/sless/job/index";
import { JOB_SUCCEEDED } from "../../jobs/job-contract";
import { Fn, Op } from "../cdktf";
import { type InstallerJob, type JobSpec, resourceAddress } from "./job-spec";

/** The sless target's settings: the runtime its sless_jobs run on. */
export interface SlessJobProps {
  /** sless runtime name, e.g. "nodejs20". */
  readonly runtime: string;
}

/**
 * The address the job connects to. A job that tolerates failure still runs after a failed installer (the
 * gate must see every job end): it is then given no address, so the handler refuses before any SSH.
 */
function vmAddress(spec: JobSpec): string {
  const previous = spec.previous?.phase;
  if (!spec.tolerateFailure || previous === undefined) return spec.connection.address;
  return Fn.conditional(Op.eq(previous, JOB_SUCCEEDED), spec.connection.address, "");
}

export function slessJobTarget(props: SlessJobProps) {
  return (scope: Construct, id: string, spec: JobSpec): InstallerJob => {
    const c = spec.connection;
    // A secret joins the event only as a Terraform expression: a variable, or (the stack's CA) a property of
    // its file read at plan, so cdktf.out holds var.<name> or the file's path, not the value.
    const ca = spec.stackCa;
    const secrets: [string, unknown][] = [
      ...Object.entries(spec.secretEvent).map(([field, variable]): [string, unknown] => [field, variable.value]),
      ...Object.entries(ca?.fields ?? {}).map(([field, property]): [string, unknown] => [
        field,
        Fn.sensitive(Fn.try([Fn.lookup(Fn.jsondecode(Fn.file(ca!.file)), property), ""])),
      ]),
    ];
    const job = new Job(scope, id, {
      name: spec.name,
      runtime: props.runtime,
      entrypoint: "handler.install",
      sourceDir: spec.asset.path,
      envVars: {
        VM_IP: vmAddress(spec),
        SSH_USER: c.user,
        // Read by Terraform at apply time and marked sensitive: the key is never in cdktf.out or a plan.
        ...(c.privateKeyPath ? { SSH_KEY: Fn.sensitive(Fn.file(c.privateKeyPath)) } : {}),
        ...(c.privateKeyPath && c.keySetting ? { SSH_KEY_SETTING: c.keySetting } : {}),
        SSH_PORT: String(c.port),
        ...(c.hostKeySha256 ? { SSH_HOST_KEY_SHA256: c.hostKeySha256 } : {}),
        ...(c.hostKeySha256 && c.hostKeySource ? { SSH_HOST_KEY_SOURCE: c.hostKeySource } : {}),
      },
      eventJson:
        secrets.length > 0
          ? Fn.jsonencode({ ...spec.event, ...Object.fromEntries(secrets) })
          : JSON.stringify(spec.event),
      runId: spec.runId,
      waitTimeoutSec: spec.waitTimeoutSec,
      dependsOn: spec.previous ? [...spec.dependsOn, spec.previous] : spec.dependsOn,
    });
    job.overrideLogicalId(id);
    // The platform reports a failed handler as phase Failed, not as an error: without this check the deploy
    // would carry on (and print the error as a result). Unless the rollout's gates judge failures, a job
    // that did not succeed stops the deploy here, naming itself and its message.
    if (!spec.tolerateFailure) {
      const ended = `sless job ${spec.name} (${id}) ended in phase \${self.phase}`;
      job.addOverride("lifecycle.postcondition", [
        {
          condition: `\${self.phase == "${JOB_SUCCEEDED}"}`,
          error_message: `${ended}, not ${JOB_SUCCEEDED}: \${self.message}`,
        },
      ]);
    }
    // A rerun of the previous installer reruns this one too (its result may depend on what that changed).
    if (spec.previous) job.addOverride("lifecycle.replace_triggered_by", [spec.previous.address]);
    return Object.assign(job, { address: resourceAddress(job, id) });
  };
}
