// The local job target and existing hosts, at synth time: what Terraform gets, that it validates offline
// (only built-ins), that its command line is the runner's protocol, and that real Terraform reads the
// result state the runner writes.
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_ROOT } from "../lib/bundling/bundle";
import { invokeProgram, parseInvokeArgs, RESULT_STATE_DEFAULTS, resultAsTfstate, writeResultFile } from "../lib/runner/invoke-protocol";
import { shellWords } from "./runner/fixtures";
import { synth, synthApp, tempDir } from "./support/synth";

const tfEnv = (): NodeJS.ProcessEnv => {
  const rc = path.join(tempDir("tfrc"), "terraformrc");
  fs.writeFileSync(rc, "");
  return { ...process.env, TF_CLI_CONFIG_FILE: rc, CHECKPOINT_DISABLE: "1", TF_IN_AUTOMATION: "1" };
};

const pin = `SHA256:${"E".repeat(43)}`;
const ctx = {
  stackName: "local",
  jobTarget: "local",
  runId: 3,
  installers: { docker: { enabled: true, channel: "distro" }, postgres: { enabled: true, passwordVariable: "pg_password" } },
  vms: [
    { name: "h1", kind: "existing", address: "192.0.2.10", sshPort: 2201, user: "deploy", privateKeyPath: "/keys/h1", hostKeySha256: pin },
    { name: "h2", kind: "existing", address: "192.0.2.11", privateKeyPath: "/keys/h2", installers: { docker: { enabled: false } } },
  ],
};

describe("local job target with existing hosts", () => {
  const { tf, stackDir } = synth(ctx);
  const jobs = tf.resource.terraform_data;

  test("the Terraform version check runs once per synth, not once per job", () => {
    // A `terraform` first on PATH that logs each call: cdktf's own DataResource ran it once per job.
    const bin = tempDir("fake-terraform");
    const log = path.join(bin, "calls.log");
    fs.writeFileSync(path.join(bin, "terraform"), `#!/bin/sh\necho "$*" >> ${JSON.stringify(log)}\necho "Terraform v1.11.0"\n`, { mode: 0o755 });
    const many = { ...ctx, vms: Array.from({ length: 6 }, (_, i) => ({ name: `h${i}`, kind: "existing", address: `192.0.2.${i + 1}` })) };
    const { outdir } = synthApp(many, { env: { PATH: `${bin}:${process.env.PATH}` } });
    const many6 = JSON.parse(fs.readFileSync(path.join(outdir, "stacks", "local", "cdk.tf.json"), "utf8"));
    expect(Object.keys(many6.resource.terraform_data)).toHaveLength(31); // per host: probe, record, 3 installers; one password check
    expect(fs.readFileSync(log, "utf8").trim().split("\n")).toEqual(["version"]);
  });

  test("only built-ins: no provider, no Nubes resource, no sless job", () => {
    expect(tf.provider).toBeUndefined();
    expect(Object.keys(tf.resource)).toEqual(["terraform_data"]);
    expect(tf.terraform.required_providers).toBeUndefined();
    // h1 is pinned: no probe and no record; h2 records its key at first contact.
    expect(Object.keys(jobs).sort()).toEqual([
      "h1_docker",
      "h1_packages",
      "h1_postgres",
      "h2_host_key",
      "h2_host_key_probe",
      "h2_packages",
      "h2_postgres",
      "pg_password_check",
    ]);
  });

  test("each job runs the bundled directory through the runner, with the job env and no secret in its config", () => {
    const job = jobs.h1_postgres;
    const [run, cleanup] = job.provisioner.map((p: any) => p["local-exec"]);
    // The round trip: the shell's words of the line local-job built parse back, through the runner's own
    // parser, to exactly the options the job was built from.
    const words = shellWords(run.command);
    // The runner named relative to the stack folder, and node from PATH: nothing of this machine's layout.
    expect(words.slice(0, 4)).toEqual(invokeProgram(path.relative(stackDir, PROJECT_ROOT), "node"));
    expect(parseInvokeArgs(words.slice(4))).toEqual({
      name: "h1-install-postgres",
      // Terraform fills this in before the shell runs; single quotes kept it literal here.
      dir: `\${path.module}/${job.triggers_replace.source_dir}`,
      eventEnv: "VM_INSTALL_EVENT",
      sshKeyFile: "/keys/h1",
      timeoutSec: 900,
      resultTfstate: job.input.result_file,
      logDir: path.relative(stackDir, path.join(PROJECT_ROOT, ".vm-install", "local", "logs")),
      secretEnv: [{ field: "db_password", variable: "TF_VAR_pg_password" }],
    });
    expect(run.environment).toEqual({
      VM_IP: "192.0.2.10",
      SSH_USER: "deploy",
      SSH_PORT: "2201",
      SSH_HOST_KEY_SHA256: pin,
      VM_INSTALL_EVENT: expect.any(String),
    });
    const event = JSON.parse(run.environment.VM_INSTALL_EVENT);
    expect(event).toMatchObject({ db_name: "myapp", db_user: "app_user" });
    expect(event.db_password).toBeUndefined();
    // Nothing that Terraform would mark sensitive (which would hide the job's progress).
    expect(JSON.stringify(job.provisioner)).not.toMatch(/var\.|sensitive\(|file\(/);
    expect(cleanup).toEqual({ command: 'rm -f "${self.input.result_file}"', when: "destroy" });
  });

  test("a changed secret reruns its job: the trigger is a salted digest, the salt in a 0600 file outside state and cdktf.out", () => {
    const trigger = jobs.h1_postgres.triggers_replace.secrets;
    const salt = path.join(PROJECT_ROOT, ".vm-install", "local", "secret-salt");
    expect(trigger).toBe(`\${nonsensitive(sha256(join("\\n", [file(${JSON.stringify(path.relative(stackDir, salt))}), var.pg_password])))}`);
    expect(fs.statSync(salt).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(salt, "utf8")).toMatch(/^[0-9a-f]{64}\n$/);
    // The salt stays the same from one synth to the next, or every deploy would rerun the job.
    const before = fs.readFileSync(salt, "utf8");
    expect(synth(ctx).tf.resource.terraform_data.h1_postgres.triggers_replace.secrets).toBe(trigger);
    expect(fs.readFileSync(salt, "utf8")).toBe(before);
    // Jobs without a secret carry no such trigger.
    expect(jobs.h1_packages.triggers_replace.secrets).toBeUndefined();
  });

  test("Terraform computes that digest at plan time, and it differs with the password", () => {
    const env = tfEnv();
    const dir = tempDir("digest");
    const salt = path.join(dir, "salt");
    fs.writeFileSync(salt, "0123abcd\n");
    fs.writeFileSync(
      path.join(dir, "main.tf.json"),
      JSON.stringify({
        variable: { pg_password: { type: "string", sensitive: true } },
        output: { d: { value: jobs.h1_postgres.triggers_replace.secrets.replace(/file\("[^"]+"\)/, `file(${JSON.stringify(salt)})`) } },
      }),
    );
    execFileSync("terraform", ["init", "-input=false"], { cwd: dir, env, stdio: "pipe" });
    const digest = (password: string) => {
      const run = { cwd: dir, env: { ...env, TF_VAR_pg_password: password }, encoding: "utf8" as const };
      execFileSync("terraform", ["apply", "-auto-approve", "-input=false", "-no-color"], run);
      return execFileSync("terraform", ["output", "-raw", "d"], run);
    };
    const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
    expect(digest("first password, long")).toBe(sha256("0123abcd\n\nfirst password, long"));
    expect(digest("second password, long")).toBe(sha256("0123abcd\n\nsecond password, long"));
  }, 60000);

  test("reruns: run_id, bundle, event and connection trigger a job; the previous job's rerun triggers the next", () => {
    expect(jobs.h1_packages.triggers_replace).toMatchObject({
      run_id: "3",
      source_dir: expect.stringMatching(/^assets\//),
      event: expect.stringContaining('"packages"'),
    });
    expect(jobs.h1_packages.lifecycle).toBeUndefined();
    expect(jobs.h1_docker.lifecycle.replace_triggered_by).toEqual(["terraform_data.h1_packages"]);
    expect(jobs.h1_postgres.lifecycle.replace_triggered_by).toEqual(["terraform_data.h1_docker"]);
    expect(jobs.h2_postgres.lifecycle.replace_triggered_by).toEqual(["terraform_data.h2_packages"]);
    expect(jobs.h2_postgres.depends_on).toEqual(["terraform_data.h2_packages"]);
    expect(jobs.h1_packages.depends_on).toBeUndefined();
  });

  test("each result reaches an output of the sless shape through a state the runner writes", () => {
    expect(tf.output.h1_packages_result.value).toBe("${data.terraform_remote_state.h1_packages_state.outputs.message}");
    expect(tf.output.h2_docker_result.value).toBe("skipped");
    const state = tf.data.terraform_remote_state.h1_packages_state;
    expect(state.depends_on).toEqual(["terraform_data.h1_packages"]);
    expect(state.config.path).toBe(jobs.h1_packages.input.result_file);
    const args = parseInvokeArgs(shellWords(jobs.h1_packages.provisioner[0]["local-exec"].command).slice(4));
    expect(args).toMatchObject({ resultTfstate: jobs.h1_packages.input.result_file });
  });

  test("Terraform reads the state file the runner writes, in the synthesized data source's shape", () => {
    // The synthesized data source and output, pointed at a file of this test's, run by real Terraform.
    const dir = tempDir("result-state");
    const file = path.join(dir, "results", "h1-install-packages.tfstate");
    const { depends_on: _, ...state } = tf.data.terraform_remote_state.h1_packages_state;
    fs.writeFileSync(
      path.join(dir, "main.tf.json"),
      JSON.stringify({
        data: { terraform_remote_state: { h1_packages_state: { ...state, config: { path: file } } } },
        output: { h1_packages_result: tf.output.h1_packages_result, phase: { value: "${data.terraform_remote_state.h1_packages_state.outputs.phase}" } },
      }),
    );
    const env = tfEnv();
    const terraform = (...args: string[]) => execFileSync("terraform", args, { cwd: dir, env, encoding: "utf8", stdio: "pipe" });
    const outputs = () => {
      terraform("apply", "-auto-approve", "-input=false", "-no-color");
      const o = JSON.parse(terraform("output", "-json"));
      return { phase: o.phase.value, message: o.h1_packages_result.value };
    };
    terraform("init", "-input=false");
    // No file at all is an error, not the defaults (the README's troubleshooting entry names it).
    expect(outputs).toThrow(/No stored state was found/);
    // A state without the outputs gives the defaults: their names are the ones the runner writes.
    fs.mkdirSync(path.dirname(file));
    writeResultFile(file, JSON.stringify({ version: 4, terraform_version: "1.0.0", serial: 1, lineage: "empty", outputs: {}, resources: [] }));
    expect(outputs()).toEqual(RESULT_STATE_DEFAULTS);
    const message = JSON.stringify({ status: "ok", note: 'it\'s "quoted" $HOME ${x}' });
    writeResultFile(file, resultAsTfstate({ phase: "Succeeded", message }, "h1-install-packages"));
    expect(outputs()).toEqual({ phase: "Succeeded", message });
  }, 60000);

  test("terraform validate passes on it, offline", () => {
    const env = tfEnv();
    execFileSync("terraform", ["init", "-input=false", "-backend=false"], { cwd: stackDir, env, stdio: "pipe" });
    const out = execFileSync("terraform", ["validate", "-json"], { cwd: stackDir, env, encoding: "utf8" });
    const result = JSON.parse(out);
    expect(result.diagnostics).toEqual([]);
    expect(result.valid).toBe(true);
  }, 60000);

  test("a password shorter than 12 characters stops terraform plan before any job runs, naming the variable, never the value", () => {
    const env = tfEnv();
    execFileSync("terraform", ["init", "-input=false", "-reconfigure"], { cwd: stackDir, env, stdio: "pipe" });
    const plan = (password: string) =>
      spawnSync("terraform", ["plan", "-input=false", "-no-color", "-lock=false", "-refresh=false"], {
        cwd: stackDir,
        env: { ...env, TF_VAR_pg_password: password },
        encoding: "utf8",
      });
    const short = plan("Sh0rt-pw!");
    expect(short.status).toBe(1);
    // Terraform folds its messages at 80 columns.
    expect(short.stderr.replace(/\s+/g, " ")).toContain("TF_VAR_pg_password (install-postgres's db_password) is shorter than 12 characters");
    expect(`${short.stdout}${short.stderr}`).not.toContain("Sh0rt-pw!");
    // Long enough: the plan goes on (the jobs are planned, not run).
    const ok = plan("twelve+ characters");
    expect(ok.stderr).toBe("");
    expect(ok.status).toBe(0);
  }, 60000);
});
