// One installer run on the deploying machine: a built-in terraform_data whose local-exec runs the same
// bundled directory through the job runner (bin/invoke.ts), with the same env and event contract as a
// sless_job. The command line, the env var names and the result state's outputs are the runner's
// protocol (operator/runner/invoke-protocol.ts), built here from typed options, never spelt out. Only
// built-ins, so `cdktf deploy` works with no provider to download.
//
// Terraform hides a provisioner's output when its config holds a sensitive value, and the job's progress
// must stay visible: so nothing sensitive goes into the provisioner. The key stays a file path the runner
// reads; a secret event field names the TF_VAR_ variable the runner takes it from (local-exec inherits
// Terraform's environment). The result comes back through a state-shaped file the runner writes, read
// into Terraform state by a second terraform_data (<job>_outcome) that is replaced with the job: its input
// names the job's new id, so it is only known, and the file only read, once the job has run. Kept in
// state, the message reaches `cdktf output` in the shape a sless_job reports, and a colleague's working
// copy sharing that state plans without the file (ignore_changes: a missing file changes nothing).
//
// A changed secret (a new password) must rerun its job, as a changed event_json does for a sless_job,
// from any working copy, without the state holding the value or a digest cheap to test guesses against:
// triggers_replace reads the job's scrypt trigger from the file bin/cdktf writes (./secret-trigger.ts).

import * as path from "node:path";
import type { Construct } from "constructs";
import {
  invokeCommandLine,
  type JobEnvVar,
  RESULT_STATE_DEFAULTS,
  type ResultOutput,
} from "../../operator/runner/invoke-protocol";
import { PROJECT_ROOT } from "../bundling/bundle";
import type { TerraformPaths } from "../terraform-paths";
import { type InstallerJob, type JobSpec, resourceAddress } from "./job-spec";
import { secretTriggerExpression, secretTriggerFile } from "./secret-trigger";
import { TerraformData } from "./terraform-data";

export interface LocalJobProps {
  /** Folder for the jobs' result files (outside cdktf.out, which each synth rewrites). */
  readonly resultsDir: string;
  /** How the result files, the secret triggers and the runner are named in the configuration (relative to the stack folder). */
  readonly paths: TerraformPaths;
  /** The project whose bin/invoke.ts runs the jobs. @default this checkout */
  readonly projectRoot?: string;
}

/**
 * The job's message from the result file the runner wrote, "not run" when there is none. It names the
 * job's id, so while the job is being (re)created it is unknown at plan and read after the job has run.
 */
function resultMessage(jobAddress: string, resultFile: string): string {
  const file = JSON.stringify(resultFile);
  return `\${${jobAddress}.id == "" || !fileexists(${file}) ? ${JSON.stringify(RESULT_STATE_DEFAULTS.message)} : jsondecode(file(${file})).outputs.${MESSAGE_OUTPUT}.value}`;
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

/** The runner's command line for `spec`; every path in it relative to the stack folder. */
function jobCommandLine(spec: JobSpec, resultFile: string, logDir: string, runnerRoot: string): string {
  return invokeCommandLine(
    {
      name: spec.name,
      // Terraform fills in path.module before /bin/sh sees the line; single quotes keep it one word.
      dir: `\${path.module}/${spec.asset.path}`,
      eventEnv: EVENT_ENV,
      sshKeyFile: spec.connection.privateKeyPath,
      timeoutSec: spec.waitTimeoutSec,
      resultTfstate: resultFile,
      logDir,
      secretEnv: Object.entries(spec.secretEvent).map(([field, variable]) => ({
        field,
        variable: `TF_VAR_${variable.friendlyUniqueId}`,
      })),
    },
    runnerRoot,
    // node as the deploying machine's PATH finds it: cdktf itself runs on it.
    "node",
  );
}

export function localJobTarget(props: LocalJobProps) {
  const root = props.projectRoot ?? PROJECT_ROOT;
  return (scope: Construct, id: string, spec: JobSpec): InstallerJob => {
    const c = spec.connection;
    const resultFile = props.paths.placed(path.join(props.resultsDir, `${spec.name}.tfstate`));
    const command = jobCommandLine(
      spec,
      resultFile,
      props.paths.placed(path.join(props.resultsDir, "logs")),
      props.paths.placed(root),
    );
    const jobEnv: Partial<Record<JobEnvVar, string>> = {
      VM_IP: c.address,
      SSH_USER: c.user,
      SSH_PORT: String(c.port),
      ...(c.hostKeySha256 ? { SSH_HOST_KEY_SHA256: c.hostKeySha256 } : {}),
      ...(c.hostKeySha256 && c.hostKeySource ? { SSH_HOST_KEY_SOURCE: c.hostKeySource } : {}),
    };
    const event = JSON.stringify(spec.event);
    const secretVariables = Object.keys(spec.secretEvent)
      .sort()
      .map((field) => spec.secretEvent[field].friendlyUniqueId);

    const data = new TerraformData(scope, id, {
      // What makes a job run again: a new run_id, a changed bundle (its hash is in the path), a changed
      // event or connection. The previous installer's rerun is added below.
      triggersReplace: {
        run_id: String(spec.runId),
        source_dir: spec.asset.path,
        event,
        connection: JSON.stringify([c.address, c.user, c.port, c.privateKeyPath ?? "", c.hostKeySha256 ?? ""]),
        ...(secretVariables.length > 0
          ? {
              secrets: secretTriggerExpression(
                props.paths.placed(secretTriggerFile(props.resultsDir, spec.name)),
                secretVariables,
              ),
            }
          : {}),
      },
      input: { name: spec.name, result_file: resultFile },
      dependsOn: spec.previous
        ? [...spec.dependsOn, spec.previous]
        : spec.dependsOn.length > 0
          ? spec.dependsOn
          : undefined,
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

    const result = new TerraformData(scope, `${id}_outcome`, {
      input: { [MESSAGE_OUTPUT]: resultMessage(address, resultFile) },
      triggersReplace: { job: `\${${address}.id}` },
    });
    result.overrideLogicalId(`${id}_outcome`);
    result.addOverride("lifecycle.ignore_changes", ["input"]);
    return new LocalJob(data, address, result.getStringAttribute(`output.${MESSAGE_OUTPUT}`));
  };
}
