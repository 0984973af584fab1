// One installer run on the deploying machine: a built-in terraform_data whose local-exec runs the same
// bundled directory through the job runner (bin/invoke.ts), with the same env and event contract as a
// sless_job. The command line, the env var names and the result state's outputs are the runner's
// protocol (lib/runner/invoke-protocol.ts), built here from typed options, never spelt out. Only
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
// from whichever working copy deploys, yet the state, which a team shares (pg, s3), must not let whoever
// reads it test a password guess cheaply: a plain or salted sha256 in state costs a guess one hash. The
// trigger is scrypt (N=2^17, r=8, p=1: OWASP's floor, 128 MiB and about 0.35 s here) over the job's secret
// values, so a guess costs a full scrypt. Terraform has no slow KDF (its bcrypt salts at random, so it
// cannot compare), and a plan can run nothing of ours, so synth computes it, from the TF_VAR_ values the
// deploy's environment already holds for the runner, into an owner-only file beside the results that
// Terraform reads at plan time: the value never reaches cdktf.out, only the digest reaches the state.
// Synth cannot read the state, so the salt is not kept there but derived from what every working copy
// sharing that state has alike, its configuration: stack, backend, job and the VM's address. A salt need
// not be secret, only unique per deployment, so that no table computed once serves every state; the
// same configuration gives the same trigger in every copy, and nothing per copy (the old random salt
// file) makes a colleague's deploy rerun the job. An HMAC keyed by something each copy has and the state
// lacks was the other way; the only such thing every copy surely has is the secret itself.

import { createHash, scryptSync } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import type { Construct } from "constructs";
import { PROJECT_ROOT } from "../bundling/bundle";
import { invokeCommandLine, type JobEnvVar, RESULT_STATE_DEFAULTS, type ResultOutput, writeResultFile } from "../runner/invoke-protocol";
import type { TerraformPaths } from "../terraform-paths";
import { type InstallerJob, type JobSpec, resourceAddress } from "./job-spec";
import { TerraformData } from "./terraform-data";

export interface LocalJobProps {
  /** Folder for the jobs' result files (outside cdktf.out, which each synth rewrites). */
  readonly resultsDir: string;
  /** How the result files, the salt and the runner are named in the configuration (relative to the stack folder). */
  readonly paths: TerraformPaths;
  /** The project whose bin/invoke.ts runs the jobs. @default this checkout */
  readonly projectRoot?: string;
  /** What names this deployment alike in every working copy that shares its state (stack, backend): part of the secret triggers' salt. */
  readonly deployment: string;
  /** Where the secrets' TF_VAR_ values are read, for their triggers. @default process.env */
  readonly env?: NodeJS.ProcessEnv;
}

/** scrypt's cost for the secret triggers; the file names it, so a change of cost reruns once, knowingly. */
export const SECRET_KDF = { N: 2 ** 17, r: 8, p: 1, keylen: 32 } as const;

/** Where `job`'s secret trigger is kept (owner-only, outside cdktf.out). */
export function secretTriggerFile(resultsDir: string, job: string): string {
  return path.join(resultsDir, `${job}.secret-trigger`);
}

/** The salt: the same for `job` in every working copy of `deployment`, different for any other job or deployment. */
export function secretTriggerSalt(deployment: string, job: string, address: string): string {
  return createHash("sha256")
    .update(JSON.stringify(["vm-install secret trigger v1", deployment, job, address]))
    .digest("hex");
}

/** The trigger for the job's secret values (in field order): a guess costs one full scrypt. */
export function secretTrigger(values: readonly string[], salt: string): string {
  const { N, r, p, keylen } = SECRET_KDF;
  const key = scryptSync(JSON.stringify(values), salt, keylen, { N, r, p, maxmem: 256 * 1024 * 1024 });
  return `scrypt-N${N}-r${r}-p${p}:${key.toString("hex")}`;
}

/**
 * Writes the job's trigger when the environment holds every one of its secrets; a synth without them
 * (`cdktf synth`, `npm run status`) leaves the last one. Rewritten only when it changed.
 */
function writeSecretTrigger(file: string, variables: string[], env: NodeJS.ProcessEnv, salt: string): void {
  const values = variables.map((v) => env[`TF_VAR_${v}`]);
  if (values.some((v) => v === undefined)) return;
  const trigger = secretTrigger(values as string[], salt);
  if (fs.existsSync(file) && fs.readFileSync(file, "utf8").trim() === trigger) return;
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  writeResultFile(file, trigger);
}

/**
 * The trigger as Terraform reads it at plan time. Without the file (a working copy that never synthesized
 * with the secrets set) it is a word that differs from any trigger: the job reruns rather than miss a change.
 */
function secretTriggerExpression(file: string, variables: string[]): string {
  const missing = `none: synthesized without ${variables.map((v) => `TF_VAR_${v}`).join(", ")}`;
  return `\${fileexists(${JSON.stringify(file)}) ? trimspace(file(${JSON.stringify(file)})) : ${JSON.stringify(missing)}}`;
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
      secretEnv: Object.entries(spec.secretEvent).map(([field, variable]) => ({ field, variable: `TF_VAR_${variable.friendlyUniqueId}` })),
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
    const command = jobCommandLine(spec, resultFile, props.paths.placed(path.join(props.resultsDir, "logs")), props.paths.placed(root));
    const jobEnv: Partial<Record<JobEnvVar, string>> = {
      VM_IP: c.address,
      SSH_USER: c.user,
      SSH_PORT: String(c.port),
      ...(c.hostKeySha256 ? { SSH_HOST_KEY_SHA256: c.hostKeySha256 } : {}),
    };
    const event = JSON.stringify(spec.event);
    const secretVariables = Object.keys(spec.secretEvent)
      .sort()
      .map((field) => spec.secretEvent[field].friendlyUniqueId);
    const triggerFile = secretTriggerFile(props.resultsDir, spec.name);
    if (secretVariables.length > 0) {
      writeSecretTrigger(triggerFile, secretVariables, props.env ?? process.env, secretTriggerSalt(props.deployment, spec.name, c.address));
    }

    const data = new TerraformData(scope, id, {
      // What makes a job run again: a new run_id, a changed bundle (its hash is in the path), a changed
      // event or connection. The previous installer's rerun is added below.
      triggersReplace: {
        run_id: String(spec.runId),
        source_dir: spec.asset.path,
        event,
        connection: JSON.stringify([c.address, c.user, c.port, c.privateKeyPath ?? "", c.hostKeySha256 ?? ""]),
        ...(secretVariables.length > 0 ? { secrets: secretTriggerExpression(props.paths.placed(triggerFile), secretVariables) } : {}),
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

    const result = new TerraformData(scope, `${id}_outcome`, {
      input: { [MESSAGE_OUTPUT]: resultMessage(address, resultFile) },
      triggersReplace: { job: `\${${address}.id}` },
    });
    result.overrideLogicalId(`${id}_outcome`);
    result.addOverride("lifecycle.ignore_changes", ["input"]);
    return new LocalJob(data, address, result.getStringAttribute(`output.${MESSAGE_OUTPUT}`));
  };
}
