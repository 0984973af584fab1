// The local job target and existing hosts, at synth time: what Terraform gets, and that it validates
// offline (only built-ins).
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { PROJECT_ROOT } from "../lib/bundling/bundle";
import { synth, tempDir } from "./support/synth";

const pin = "SHA256:" + "E".repeat(43);
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

  test("only built-ins: no provider, no Nubes resource, no sless job", () => {
    expect(tf.provider).toBeUndefined();
    expect(Object.keys(tf.resource)).toEqual(["terraform_data"]);
    expect(tf.terraform.required_providers).toBeUndefined();
    expect(Object.keys(jobs).sort()).toEqual(["h1_docker", "h1_packages", "h1_postgres", "h2_packages", "h2_postgres"]);
  });

  test("each job runs the bundled directory through the runner, with the job env and no secret in its config", () => {
    const job = jobs.h1_postgres;
    const [run, cleanup] = job.provisioner.map((p: any) => p["local-exec"]);
    expect(run.command).toContain(`'${path.join(PROJECT_ROOT, "bin", "invoke.ts")}'`);
    expect(run.command).toContain(`--dir "\${path.module}/${job.triggers_replace.source_dir}"`);
    expect(run.command).toContain("--ssh-key-file '/keys/h1'");
    expect(run.command).toContain("--secret-env 'db_password=TF_VAR_pg_password'");
    expect(run.command).toContain("--timeout 900");
    expect(run.environment).toEqual({
      VM_IP: "192.0.2.10", SSH_USER: "deploy", SSH_PORT: "2201", SSH_HOST_KEY_SHA256: pin,
      VM_INSTALL_EVENT: expect.any(String),
    });
    const event = JSON.parse(run.environment.VM_INSTALL_EVENT);
    expect(event).toMatchObject({ db_name: "myapp", db_user: "app_user" });
    expect(event.db_password).toBeUndefined();
    // Nothing that Terraform would mark sensitive (which would hide the job's progress).
    expect(JSON.stringify(job.provisioner)).not.toMatch(/var\.|sensitive\(|file\(/);
    expect(cleanup).toEqual({ command: 'rm -f "${self.input.result_file}"', when: "destroy" });
  });

  test("reruns: run_id, bundle, event and connection trigger a job; the previous job's rerun triggers the next", () => {
    expect(jobs.h1_packages.triggers_replace).toMatchObject({ run_id: "3", source_dir: expect.stringMatching(/^assets\//), event: expect.stringContaining('"packages"') });
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
    expect(jobs.h1_packages.provisioner[0]["local-exec"].command).toContain(`--result-tfstate '${jobs.h1_packages.input.result_file}'`);
  });

  test("terraform validate passes on it, offline", () => {
    const rc = path.join(tempDir("tfrc"), "terraformrc");
    fs.writeFileSync(rc, "");
    const env = { ...process.env, TF_CLI_CONFIG_FILE: rc, CHECKPOINT_DISABLE: "1", TF_IN_AUTOMATION: "1" };
    execFileSync("terraform", ["init", "-input=false", "-backend=false"], { cwd: stackDir, env, stdio: "pipe" });
    const out = execFileSync("terraform", ["validate", "-json"], { cwd: stackDir, env, encoding: "utf8" });
    const result = JSON.parse(out);
    expect(result.diagnostics).toEqual([]);
    expect(result.valid).toBe(true);
  }, 60000);
});
