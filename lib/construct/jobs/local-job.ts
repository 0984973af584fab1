// One installer run on the deploying machine: a built-in terraform_data whose local-exec runs the bundled job
// through the job runner with a sless_job's env and event contract (the command line is the runner's protocol,
// built from typed options), so `cdktf deploy` needs no provider. Nothing sensitive enters the provisioner,
// as Terraform would hide the job's progress: the key stays a path, a secret names its TF_VAR_ variable or
// (the stack's CA) its file.
// The result comes back through a file the runner writes, kept in state by <job>_outcome.

import * as path from "node:path";
import type { Construct } from "constructs";
import { PROJECT_ROOT } from "../../entry-points";
import { invokeCommandLine, type JobEnvVar } from "../../jobs/invoke-args";
import { JOB_SUCCEEDED } from "../../jobs/job-contract";
import { RESULT_STATE_DEFAULTS, type ResultOutput } from "../../jobs/job-result-file";
import { command } from "../../shared/shell-quote";
import { TerraformStack } from "../cdktf";
import { caTriggerExpression } from "../postgres-ca-output";
import type { TerraformPaths } from "../terraform-paths";
import { type InstallerJob, type JobSpec, resourceAddress } from "./job-spec";
import { secretSaltFile, secretSaltResource } from "./secret-salt";
import { secretTriggerExpression, secretTriggerFile } from "./secret-trigger";
import { TerraformData } from "./terraform-data";
import { uninstallOnDestroy } from "./uninstall-on-destroy";

/** The local target's settings: where its jobs' results go, how they are named, how many run at once. */
export interface LocalJobProps {
  /** Folder for the jobs' result files (outside cdktf.out, which each synth rewrites). */
  readonly resultsDir: string;
  /** How the result files, secret triggers and runner are named in the configuration (from the stack folder). */
  readonly paths: TerraformPaths;
  /** The project whose bin/invoke.ts runs the jobs. @default this checkout */
  readonly projectRoot?: string;
  /** At most this many of the stack's jobs at once (the `parallelism` setting), however Terraform is run. */
  readonly parallelism?: number;
}

/** An output of the result file the runner wrote, its default when there is none; read once the job has run. */
function resultOutput(jobAddress: string, resultFile: string, output: ResultOutput): string {
  const file = JSON.stringify(resultFile);
  const none = JSON.stringify(RESULT_STATE_DEFAULTS[output]);
  const read = `jsondecode(file(${file})).outputs.${output}.value`;
  return `\${${jobAddress}.id == "" || !fileexists(${file}) ? ${none} : ${read}}`;
}

/** The provisioner env var the event travels in: not a command line, so `ps` never shows it. */
const EVENT_ENV = "VM_INSTALL_EVENT";
/** The provisioner env var holding the previous installer's phase, for a job that tolerates failure. */
const PREVIOUS_PHASE_ENV = "VM_INSTALL_PREVIOUS_PHASE";

class LocalJob implements InstallerJob {
  uninstall?: TerraformData;
  constructor(
    readonly resource: TerraformData,
    readonly address: string,
    readonly message: string,
    readonly phase?: string,
  ) {}
  get fqn(): string {
    return this.resource.fqn;
  }
}

/** The runner's command line for `spec`; every path in it relative to the stack folder. */
function jobCommandLine(
  spec: JobSpec,
  resultFile: string,
  logDir: string,
  runnerRoot: string,
  jobSlots?: { count: number; dir: string },
): string {
  const line = invokeCommandLine(
    {
      name: spec.name,
      // Terraform fills in path.module before /bin/sh sees the line; single quotes keep it one word.
      dir: `\${path.module}/${spec.asset.path}`,
      eventEnv: EVENT_ENV,
      sshKeyFile: spec.connection.privateKeyPath,
      timeoutSec: spec.waitTimeoutSec,
      resultTfstate: resultFile,
      logDir,
      jobSlots,
      secretEnv: Object.entries(spec.secretEvent).map(([field, variable]) => ({
        field,
        variable: `TF_VAR_${variable.friendlyUniqueId}`,
      })),
      secretFile: Object.entries(spec.stackCa?.fields ?? {}).map(([field, property]) => ({
        field,
        file: spec.stackCa!.file,
        property,
      })),
    },
    runnerRoot,
    // node as the deploying machine's PATH finds it: cdktf itself runs on it.
    "node",
  );
  if (!spec.tolerateFailure) return line;
  // The runner exits 1 for a Failed job (2 for bad usage, which still fails the apply): a failure stays a
  // recorded phase for the gate. After a failed installer this VM's later ones leave no result ("NotRun").
  const notRun = command(`[${spec.name}]`, "not run: the installer before it on this VM did not succeed");
  const skip = spec.previous?.phase
    ? `[ "$${PREVIOUS_PHASE_ENV}" = ${JOB_SUCCEEDED} ] || { echo ${notRun}; exit 0; }; `
    : "";
  return `${skip}${line} || [ $? -eq 1 ]`;
}

/** The connection as the handler reads it from its environment. */
function jobEnvironment(c: JobSpec["connection"]): Partial<Record<JobEnvVar, string>> {
  return {
    VM_IP: c.address,
    SSH_USER: c.user,
    SSH_PORT: String(c.port),
    ...(c.keySetting ? { SSH_KEY_SETTING: c.keySetting } : {}),
    ...(c.hostKeySha256 ? { SSH_HOST_KEY_SHA256: c.hostKeySha256 } : {}),
    ...(c.hostKeySha256 && c.hostKeySource ? { SSH_HOST_KEY_SOURCE: c.hostKeySource } : {}),
  };
}

/**
 * What makes a job run again: a new run_id, a changed bundle (its hash is in the path), a changed event or
 * connection, a changed secret (./secret-trigger.ts: a changed password reruns its job as a changed
 * event_json does a sless_job's), a new stack CA (its certificate's hash). The previous installer's rerun is
 * added by replace_triggered_by.
 */
function jobTriggers(spec: JobSpec, props: LocalJobProps): Record<string, string> {
  const c = spec.connection;
  const secretVariables = Object.keys(spec.secretEvent)
    .sort()
    .map((field) => spec.secretEvent[field].friendlyUniqueId);
  const triggerFile = props.paths.placed(secretTriggerFile(props.resultsDir, spec.name));
  return {
    run_id: String(spec.runId),
    source_dir: spec.asset.path,
    event: JSON.stringify(spec.event),
    connection: JSON.stringify([c.address, c.user, c.port, c.privateKeyPath ?? "", c.hostKeySha256 ?? ""]),
    ...(secretVariables.length > 0 ? { secrets: secretTriggerExpression(triggerFile, secretVariables) } : {}),
    ...(spec.stackCa ? { stack_ca: caTriggerExpression(spec.stackCa.file) } : {}),
  };
}

/** One job: the terraform_data that runs it and the one that keeps its outcome in state. */
function localJob(props: LocalJobProps, root: string, scope: Construct, id: string, spec: JobSpec): InstallerJob {
  const resultFile = props.paths.placed(path.join(props.resultsDir, `${spec.name}.tfstate`));
  const logDir = props.paths.placed(path.join(props.resultsDir, "logs"));
  // Beside the results folder, not in it: that folder's listing is the jobs' results, logs and triggers.
  const slotDir = `${props.resultsDir}.job-slots`;
  const slots = props.parallelism ? { count: props.parallelism, dir: props.paths.placed(slotDir) } : undefined;
  const previousPhase = spec.tolerateFailure ? spec.previous?.phase : undefined;
  const after = spec.previous ? [...spec.dependsOn, spec.previous] : spec.dependsOn;
  const data = new TerraformData(scope, id, {
    triggersReplace: jobTriggers(spec, props),
    input: { name: spec.name, result_file: resultFile },
    dependsOn: after.length > 0 ? after : undefined,
    provisioners: [
      {
        type: "local-exec",
        command: jobCommandLine(spec, resultFile, logDir, props.paths.placed(root), slots),
        environment: {
          ...jobEnvironment(spec.connection),
          [EVENT_ENV]: JSON.stringify(spec.event),
          ...(previousPhase ? { [PREVIOUS_PHASE_ENV]: previousPhase } : {}),
        },
      },
      // Destroy forgets the result with the job, so a later deploy cannot show a stale one.
      { type: "local-exec", when: "destroy", command: 'rm -f "${self.input.result_file}"' },
    ],
  });
  data.overrideLogicalId(id);
  const address = resourceAddress(data, id);
  if (spec.previous) data.addOverride("lifecycle.replace_triggered_by", [spec.previous.address]);

  // Replaced with the job (its input names the job's new id), so the file is only read once the job has run.
  // Kept in state, the message reaches `cdktf output` as a sless_job's does; ignore_changes lets a colleague's
  // copy sharing that state plan without the file.
  const result = new TerraformData(scope, `${id}_outcome`, {
    input: {
      message: resultOutput(address, resultFile, "message"),
      ...(spec.tolerateFailure ? { phase: resultOutput(address, resultFile, "phase") } : {}),
    },
    triggersReplace: { job: `\${${address}.id}` },
  });
  result.overrideLogicalId(`${id}_outcome`);
  result.addOverride("lifecycle.ignore_changes", ["input"]);
  const phase = spec.tolerateFailure ? result.getStringAttribute("output.phase") : undefined;
  const job = new LocalJob(data, address, result.getStringAttribute("output.message"), phase);
  if (spec.uninstallOnDestroy) {
    const name = `${spec.name}-uninstall`;
    const file = props.paths.placed(path.join(props.resultsDir, `${name}.tfstate`));
    // Its secrets as the install's: --secret-env names their TF_VAR_ variables, read from the destroying
    // shell (which Terraform makes set them: a variable without a default is required by a destroy too).
    const absent = { ...spec, name, tolerateFailure: false, event: { ...spec.event, state: "absent" } };
    job.uninstall = uninstallOnDestroy(scope, id, {
      job: data,
      previous: spec.previous?.uninstall,
      command: jobCommandLine(absent, file, logDir, props.paths.placed(root), slots),
      environment: { ...jobEnvironment(spec.connection), [EVENT_ENV]: JSON.stringify(absent.event) },
    });
  }
  return job;
}

export function localJobTarget(props: LocalJobProps) {
  const root = props.projectRoot ?? PROJECT_ROOT;
  let salt: TerraformData | undefined;
  return (scope: Construct, id: string, spec: JobSpec): InstallerJob => {
    // One record of the deployment's salt in the state, once a job has a secret trigger to salt.
    if (!salt && Object.keys(spec.secretEvent).length > 0)
      salt = secretSaltResource(TerraformStack.of(scope), props.paths.placed(secretSaltFile(props.resultsDir)));
    return localJob(props, root, scope, id, spec);
  };
}
