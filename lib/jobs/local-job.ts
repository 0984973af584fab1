// One installer run on the deploying machine: a built-in terraform_data whose local-exec runs the same
// bundled directory through the job runner (bin/invoke.ts), with the same env and event contract as a
// sless_job. The command line, the env var names and the result state's outputs are the runner's
// protocol (lib/runner/invoke-protocol.ts), built here from typed options, never spelt out. Only
// built-ins, so `cdktf deploy` works with no provider to download.
//
// Terraform hides a provisioner's output when its config holds a sensitive value, and the job's progress
// must stay visible: so nothing sensitive goes into the provisioner. The key stays a file path the runner
// reads; a secret event field names the TF_VAR_ variable the runner takes it from (local-exec inherits
// Terraform's environment). The result comes back through a state-shaped file the runner writes and a
// terraform_remote_state that reads it once the job has run, so `cdktf output` shows the same message a
// sless_job reports.

import * as path from "node:path";
import type { Construct } from "constructs";
import { PROJECT_ROOT } from "../bundling/bundle";
import { DataTerraformRemoteStateLocal } from "../cdktf";
import { invokeCommandLine, type JobEnvVar, RESULT_STATE_DEFAULTS, type ResultOutput } from "../runner/invoke-protocol";
import { type InstallerJob, type JobSpec, resourceAddress } from "./job-spec";
import { TerraformData } from "./terraform-data";

export interface LocalJobProps {
  /** Folder for the jobs' result files (outside cdktf.out, which each synth rewrites). */
  readonly resultsDir: string;
  /** The project whose bin/invoke.ts runs the jobs. @default this checkout */
  readonly projectRoot?: string;
}

/** The provisioner env var the event travels in: not a command line, so `ps` never shows it. */
const EVENT_ENV = "VM_INSTALL_EVENT";
const MESSAGE_OUTPUT: ResultOutput = "message";

class LocalJob implements InstallerJob {
  constructor(
    readonly resource: TerraformData,
    readonly address: string,
    readonly message: string,
  ) {}
  get fqn(): string {
    return this.resource.fqn;
  }
}

export function localJobTarget(props: LocalJobProps) {
  const root = props.projectRoot ?? PROJECT_ROOT;
  return (scope: Construct, id: string, spec: JobSpec): InstallerJob => {
    const c = spec.connection;
    const resultFile = path.join(props.resultsDir, `${spec.name}.tfstate`);
    const command = invokeCommandLine(
      {
        name: spec.name,
        // Terraform fills in path.module before /bin/sh sees the line; single quotes keep it one word.
        dir: `\${path.module}/${spec.asset.path}`,
        eventEnv: EVENT_ENV,
        sshKeyFile: c.privateKeyPath,
        timeoutSec: spec.waitTimeoutSec,
        resultTfstate: resultFile,
        secretEnv: Object.entries(spec.secretEvent).map(([field, variable]) => ({ field, variable: `TF_VAR_${variable.friendlyUniqueId}` })),
      },
      root,
    );
    const jobEnv: Partial<Record<JobEnvVar, string>> = {
      VM_IP: c.address,
      SSH_USER: c.user,
      SSH_PORT: String(c.port),
      ...(c.hostKeySha256 ? { SSH_HOST_KEY_SHA256: c.hostKeySha256 } : {}),
    };
    const event = JSON.stringify(spec.event);

    const data = new TerraformData(scope, id, {
      // What makes a job run again: a new run_id, a changed bundle (its hash is in the path), a changed
      // event or connection. The previous installer's rerun is added below.
      triggersReplace: {
        run_id: String(spec.runId),
        source_dir: spec.asset.path,
        event,
        connection: JSON.stringify([c.address, c.user, c.port, c.privateKeyPath ?? "", c.hostKeySha256 ?? ""]),
      },
      input: { name: spec.name, result_file: resultFile },
      dependsOn: spec.previous ? [...spec.dependsOn, spec.previous] : spec.dependsOn.length > 0 ? spec.dependsOn : undefined,
      provisioners: [
        {
          type: "local-exec",
          command,
          environment: { ...jobEnv, [EVENT_ENV]: event },
        },
        // Destroy forgets the result with the job, so a later deploy cannot show a stale one.
        { type: "local-exec", when: "destroy", command: 'rm -f "${self.input.result_file}"' },
      ],
    });
    data.overrideLogicalId(id);
    const address = resourceAddress(data, id);
    if (spec.previous) data.addOverride("lifecycle.replace_triggered_by", [spec.previous.address]);

    // Read after the job has run (depends_on defers it to apply whenever the job changes).
    const result = new DataTerraformRemoteStateLocal(scope, `${id}_state`, { path: resultFile, defaults: { ...RESULT_STATE_DEFAULTS } });
    result.overrideLogicalId(`${id}_state`);
    result.addOverride("depends_on", [address]);
    return new LocalJob(data, address, result.getString(MESSAGE_OUTPUT));
  };
}
