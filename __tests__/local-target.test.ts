// The local job target and existing hosts, at synth time: what Terraform gets, that it validates offline
// (only built-ins), that its command line is the runner's protocol, and that real Terraform reads the
// result state the runner writes.
import { execFileSync, spawnSync } from "node:child_process";
import { createHash, scryptSync } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { writeCdktfProject } from "../dev/demo/project";
import { App } from "../lib/construct/cdktf";
import { parseConfig } from "../lib/construct/config/parse";
import {
  secretTrigger,
  secretTriggerJobs,
  secretTriggerSalt,
  writeSecretTriggers,
} from "../lib/construct/jobs/secret-trigger";
import { VmInstallStack } from "../lib/construct/stack";
import { PROJECT_ROOT } from "../lib/entry-points";
import { invokeProgram, parseInvokeArgs } from "../lib/jobs/invoke-args";
import { RESULT_STATE_DEFAULTS, resultAsTfstate, writeResultFile } from "../lib/jobs/job-result-file";
import { shellWords } from "./runner/fixtures";
import { filesUnder, synth, synthApp, type TfJson, tempDir, testKeyPair, withTestKeys } from "./support/synth";

const tfEnv = (): NodeJS.ProcessEnv => {
  const rc = path.join(tempDir("tfrc"), "terraformrc");
  fs.writeFileSync(rc, "");
  return { ...process.env, TF_CLI_CONFIG_FILE: rc, CHECKPOINT_DISABLE: "1", TF_IN_AUTOMATION: "1" };
};

/** Synthesizes `context` as a working copy in `dir` would (its own cdktf.out and .vm-install). */
function synthIn(dir: string, context: Record<string, unknown>): { tf: TfJson; outdir: string } {
  const config = parseConfig(withTestKeys(context, dir));
  const outdir = path.join(dir, "cdktf.out");
  const app = new App({ outdir });
  new VmInstallStack(app, config.stackName, { config, baseDir: dir });
  app.synth();
  return {
    tf: JSON.parse(fs.readFileSync(path.join(outdir, "stacks", config.stackName, "cdk.tf.json"), "utf8")),
    outdir,
  };
}

const pin = `SHA256:${"E".repeat(43)}`;
/** The hosts' key files, absolute as a user may write them (they must exist: synth checks them). */
const H1_KEY = testKeyPair().privateKeyPath;
const H2_KEY = H1_KEY;
const ctx = {
  stackName: "local",
  jobTarget: "local",
  runId: 3,
  installers: {
    docker: { enabled: true, channel: "distro" },
    postgres: { enabled: true, passwordVariable: "pg_password" },
  },
  vms: [
    {
      name: "h1",
      kind: "existing",
      address: "192.0.2.10",
      sshPort: 2201,
      user: "deploy",
      privateKeyPath: H1_KEY,
      hostKeySha256: pin,
    },
    {
      name: "h2",
      kind: "existing",
      address: "192.0.2.11",
      privateKeyPath: H2_KEY,
      installers: { docker: { enabled: false } },
    },
  ],
};

describe("local job target with existing hosts", () => {
  const { tf, stackDir } = synth(ctx);
  const jobs = tf.resource.terraform_data;

  test("the Terraform version check runs once per synth, not once per job", () => {
    // A `terraform` first on PATH that logs each call: cdktf's own DataResource ran it once per job.
    const bin = tempDir("fake-terraform");
    const log = path.join(bin, "calls.log");
    fs.writeFileSync(
      path.join(bin, "terraform"),
      `#!/bin/sh\necho "$*" >> ${JSON.stringify(log)}\necho "Terraform v1.11.0"\n`,
      { mode: 0o755 },
    );
    const many = {
      ...ctx,
      vms: Array.from({ length: 6 }, (_, i) => ({ name: `h${i}`, kind: "existing", address: `192.0.2.${i + 1}` })),
    };
    const { outdir } = synthApp(many, { env: { PATH: `${bin}:${process.env.PATH}` } });
    const many6 = JSON.parse(fs.readFileSync(path.join(outdir, "stacks", "local", "cdk.tf.json"), "utf8"));
    // Per host: probe, record, 3 installers, an outcome per job (4); one password check, one salt record.
    expect(Object.keys(many6.resource.terraform_data)).toHaveLength(56);
    expect(fs.readFileSync(log, "utf8").trim().split("\n")).toEqual(["version"]);
  });

  test("only built-ins: no provider, no Nubes resource, no sless job", () => {
    expect(tf.provider).toBeUndefined();
    expect(Object.keys(tf.resource)).toEqual(["terraform_data"]);
    expect(tf.terraform.required_providers).toBeUndefined();
    // h1 is pinned: no probe and no record; h2 records its key at first contact.
    expect(Object.keys(jobs).sort()).toEqual([
      "h1_docker",
      "h1_docker_outcome",
      "h1_packages",
      "h1_packages_outcome",
      "h1_postgres",
      "h1_postgres_outcome",
      "h2_host_key",
      "h2_host_key_probe",
      "h2_host_key_probe_outcome",
      "h2_packages",
      "h2_packages_outcome",
      "h2_postgres",
      "h2_postgres_outcome",
      "pg_password_check",
      "vm_install_secret_salt",
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
      sshKeyFile: H1_KEY,
      timeoutSec: 900,
      resultTfstate: job.input.result_file,
      logDir: path.relative(stackDir, path.join(PROJECT_ROOT, ".vm-install", "local", "logs")),
      secretEnv: [{ field: "db_password", variable: "TF_VAR_pg_password" }],
      // The stack's parallelism (10 by default), held by the jobs however Terraform is run.
      jobSlots: { count: 10, dir: path.relative(stackDir, path.join(PROJECT_ROOT, ".vm-install", "local.job-slots")) },
    });
    expect(run.environment).toEqual({
      VM_IP: "192.0.2.10",
      SSH_USER: "deploy",
      SSH_PORT: "2201",
      SSH_HOST_KEY_SHA256: pin,
      SSH_HOST_KEY_SOURCE: "pin",
      // Where the key comes from in cdktf.json: the job's messages name it (the key itself stays a path).
      SSH_KEY_SETTING: `vms[h1].privateKeyPath (${H1_KEY})`,
      VM_INSTALL_EVENT: expect.any(String),
    });
    const event = JSON.parse(run.environment.VM_INSTALL_EVENT);
    expect(event).toMatchObject({ db_name: "myapp", db_user: "app_user" });
    expect(event.db_password).toBeUndefined();
    // Nothing that Terraform would mark sensitive (which would hide the job's progress).
    expect(JSON.stringify(job.provisioner)).not.toMatch(/var\.|sensitive\(|file\(/);
    expect(cleanup).toEqual({ command: 'rm -f "${self.input.result_file}"', when: "destroy" });
  });

  test("a changed secret reruns its job from any working copy: the trigger is scrypt over the value, salted by the deployment's own salt and the job, in an owner-only file outside cdktf.out", () => {
    const copies = [tempDir("copy-a"), tempDir("copy-b")];
    const config = parseConfig(ctx);
    const triggerOf = (dir: string, job: string) =>
      fs.readFileSync(path.join(dir, ".vm-install", "local", `${job}.secret-trigger`), "utf8");
    // What Terraform reads at plan time: the file, named relative to the stack folder, and no variable,
    // so nothing secret in cdktf.out; the same configuration in both copies.
    const synthesized = copies.map((dir) => synthIn(dir, ctx));
    const file = path.join("..", "..", "..", ".vm-install", "local", "h1-install-postgres.secret-trigger");
    for (const { tf } of synthesized) {
      expect(tf.resource.terraform_data.h1_postgres.triggers_replace.secrets).toBe(
        `\${fileexists(${JSON.stringify(file)}) ? trimspace(file(${JSON.stringify(file)})) : "none: deployed without TF_VAR_pg_password"}`,
      );
    }
    // The two copies share one deployment's state (a pg backend, say): the first deploy makes the salt, the
    // state keeps it (here: a state that holds what the first copy's plan records), the second reads it back.
    const salt = () => fs.readFileSync(path.join(copies[0], ".vm-install", "local", "deployment-salt"), "utf8").trim();
    const shared = () => ({
      resources: [
        {
          type: "terraform_data",
          name: "vm_install_secret_salt",
          instances: [{ attributes: { output: { value: { salt: salt() } } } }],
        },
      ],
    });
    const nothingYet = () => undefined;
    // The class: the files bin/cdktf writes are exactly the files the jobs' triggers read.
    const written = copies.map((dir, i) =>
      writeSecretTriggers(
        dir,
        config,
        { TF_VAR_pg_password: "first password, long" },
        undefined,
        i === 0 ? nothingYet : shared,
      ),
    );
    copies.forEach((dir, i) => {
      const read = Object.values<any>(synthesized[i].tf.resource.terraform_data)
        .map((r) => r.triggers_replace?.secrets?.match(/fileexists\("([^"]+)"\)/)?.[1])
        .filter(Boolean)
        .map((rel: string) => path.resolve(dir, "cdktf.out", "stacks", "local", rel));
      expect(read.sort()).toEqual(written[i].sort());
      expect(read).toHaveLength(2);
    });
    // scrypt (N=2^17, r=8, p=1) over the values, salted by the deployment's random salt and the job: the
    // same in every working copy of this deployment, so a colleague's deploy does not rerun the job, and a
    // guess against the state costs a full scrypt.
    expect(salt()).toMatch(/^[0-9a-f]{64}$/);
    const scrypt = (password: string, job: string, deployment = salt()) => {
      const jobSalt = createHash("sha256")
        .update(JSON.stringify(["vm-install secret trigger v2", deployment, job]))
        .digest("hex");
      return `scrypt-N131072-r8-p1:${scryptSync(JSON.stringify([password]), jobSalt, 32, { N: 2 ** 17, r: 8, p: 1, maxmem: 2 ** 28 }).toString("hex")}\n`;
    };
    for (const dir of copies) {
      expect(triggerOf(dir, "h1-install-postgres")).toBe(scrypt("first password, long", "h1-install-postgres"));
      expect(triggerOf(dir, "h2-install-postgres")).toBe(scrypt("first password, long", "h2-install-postgres"));
      for (const f of ["h1-install-postgres.secret-trigger", "deployment-salt"])
        expect(fs.statSync(path.join(dir, ".vm-install", "local", f)).mode & 0o777).toBe(0o600);
      expect(fs.statSync(path.join(dir, ".vm-install", "local")).mode & 0o777).toBe(0o700);
    }
    // Unchanged: not rewritten. Another password, in either copy: another trigger. Without the variable
    // (cdktf synth in a shell without it) the last one stays.
    expect(writeSecretTriggers(copies[0], config, { TF_VAR_pg_password: "first password, long" })).toEqual([]);
    writeSecretTriggers(copies[1], config, { TF_VAR_pg_password: "second password, long" });
    expect(triggerOf(copies[1], "h1-install-postgres")).toBe(scrypt("second password, long", "h1-install-postgres"));
    expect(writeSecretTriggers(copies[1], config, {})).toEqual([]);
    expect(triggerOf(copies[1], "h1-install-postgres")).toBe(scrypt("second password, long", "h1-install-postgres"));
    // Jobs without a secret carry no such trigger; the sless target none at all (its event_json is the trigger).
    expect(jobs.h1_packages.triggers_replace.secrets).toBeUndefined();
    expect(
      secretTriggerJobs(
        parseConfig({ ...ctx, jobTarget: "sless", vms: [{ name: "h1" }], nubes: { vdcUid: "v", nsxtUid: "n" } }),
      ),
    ).toEqual([]);
  });

  test("bin/cdktf writes the triggers from its environment before cdktf runs (cdktf passes no TF_VAR_ to synth)", () => {
    const dir = tempDir("wrapper-trigger");
    const project = {
      stackName: "wrapped",
      jobTarget: "local",
      installers: { postgres: { enabled: true, passwordVariable: "app_pw" } },
      vms: [{ name: "db", kind: "existing", address: "192.0.2.1", privateKeyPath: H1_KEY }],
    };
    writeCdktfProject(dir, project);
    const run = spawnSync("bash", [path.join(PROJECT_ROOT, "bin", "cdktf"), "synth"], {
      cwd: dir,
      env: { ...tfEnv(), TF_VAR_app_pw: "wrapped password, long" },
      encoding: "utf8",
    });
    expect(run.status).toBe(0);
    const deployment = fs.readFileSync(path.join(dir, ".vm-install", "wrapped", "deployment-salt"), "utf8").trim();
    const salt = secretTriggerSalt(deployment, "db-install-postgres");
    expect(
      fs.readFileSync(path.join(dir, ".vm-install", "wrapped", "db-install-postgres.secret-trigger"), "utf8"),
    ).toBe(`${secretTrigger(["wrapped password, long"], salt)}\n`);
    for (const f of filesUnder(path.join(dir, "cdktf.out")))
      expect(fs.readFileSync(f, "utf8")).not.toContain("wrapped password, long");
  }, 60000);

  test("Terraform reads that trigger at plan time; without the file it is a word no trigger equals, so the job reruns rather than miss a change", () => {
    const env = tfEnv();
    const dir = tempDir("trigger");
    const file = path.join(dir, "h1-install-postgres.secret-trigger");
    const expression = jobs.h1_postgres.triggers_replace.secrets
      .split(jobs.h1_postgres.triggers_replace.secrets.match(/fileexists\(("[^"]+")\)/)[1])
      .join(JSON.stringify(file));
    fs.writeFileSync(path.join(dir, "main.tf.json"), JSON.stringify({ output: { d: { value: expression } } }));
    execFileSync("terraform", ["init", "-input=false"], { cwd: dir, env, stdio: "pipe" });
    const read = () => {
      execFileSync("terraform", ["apply", "-auto-approve", "-input=false", "-no-color"], {
        cwd: dir,
        env,
        stdio: "pipe",
      });
      return execFileSync("terraform", ["output", "-raw", "d"], { cwd: dir, env, encoding: "utf8" });
    };
    expect(read()).toBe("none: deployed without TF_VAR_pg_password");
    fs.writeFileSync(file, "scrypt-N131072-r8-p1:00ff\n");
    expect(read()).toBe("scrypt-N131072-r8-p1:00ff");
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

  test("each result reaches an output of the sless shape through a resource kept in state, replaced with its job", () => {
    expect(tf.output.h1_packages_result.value).toBe("${terraform_data.h1_packages_outcome.output.message}");
    expect(tf.output.h2_docker_result.value).toBe("skipped");
    const result = tf.resource.terraform_data.h1_packages_outcome;
    expect(result.triggers_replace).toEqual({ job: "${terraform_data.h1_packages.id}" });
    expect(result.lifecycle.ignore_changes).toEqual(["input"]);
    const file = jobs.h1_packages.input.result_file;
    expect(result.input.message).toBe(
      `\${terraform_data.h1_packages.id == "" || !fileexists(${JSON.stringify(file)}) ? "not run" : jsondecode(file(${JSON.stringify(file)})).outputs.message.value}`,
    );
    const args = parseInvokeArgs(shellWords(jobs.h1_packages.provisioner[0]["local-exec"].command).slice(4));
    expect(args).toMatchObject({ resultTfstate: file });
  });

  test("Terraform keeps the runner's result in state: read once the job ran, kept without the file, renewed with the job", () => {
    // The synthesized job (without its provisioners) and result resource, pointed at a file of this test's.
    const dir = tempDir("result-state");
    const file = path.join(dir, "h1-install-packages.tfstate");
    const job = { triggers_replace: { run: "${var.run}" } };
    const result = JSON.parse(
      JSON.stringify(tf.resource.terraform_data.h1_packages_outcome)
        .split(jobs.h1_packages.input.result_file)
        .join(file),
    );
    fs.writeFileSync(
      path.join(dir, "main.tf.json"),
      JSON.stringify({
        variable: { run: { type: "string" } },
        resource: { terraform_data: { h1_packages: job, h1_packages_outcome: result } },
        output: { h1_packages_result: tf.output.h1_packages_result },
      }),
    );
    const env = tfEnv();
    const terraform = (...args: string[]) =>
      execFileSync("terraform", args, { cwd: dir, env, encoding: "utf8", stdio: "pipe" });
    const apply = (run: string) => {
      const out = terraform("apply", "-auto-approve", "-input=false", "-no-color", `-var=run=${run}`);
      return { out, message: JSON.parse(terraform("output", "-json")).h1_packages_result.value };
    };
    terraform("init", "-input=false");
    // The job ran but wrote nothing: "not run", as a sless job that never reported.
    expect(apply("1").message).toBe(RESULT_STATE_DEFAULTS.message);
    const message = JSON.stringify({ status: "ok", note: 'it\'s "quoted" $HOME ${x}' });
    writeResultFile(file, resultAsTfstate({ phase: "Succeeded", message }, "h1-install-packages"));
    expect(apply("2").message).toBe(message);
    // Another working copy sharing the state has no result file: nothing to change, the message stays.
    fs.rmSync(file);
    const again = apply("2");
    expect(again.out).toContain("No changes.");
    expect(again.message).toBe(message);
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
    // A project of its own: the plan reads the deployment's salt there (bin/cdktf caches it before a run).
    const project = tempDir("plan");
    const planDir = path.join(synthIn(project, ctx).outdir, "stacks", "local");
    execFileSync("terraform", ["init", "-input=false", "-reconfigure"], { cwd: planDir, env, stdio: "pipe" });
    fs.mkdirSync(path.join(project, ".vm-install", "local"), { recursive: true });
    fs.writeFileSync(path.join(project, ".vm-install", "local", "deployment-salt"), `${"5".repeat(64)}\n`);
    const plan = (password: string) =>
      spawnSync("terraform", ["plan", "-input=false", "-no-color", "-lock=false", "-refresh=false"], {
        cwd: planDir,
        env: { ...env, TF_VAR_pg_password: password },
        encoding: "utf8",
      });
    const short = plan("Sh0rt-pw!");
    expect(short.status).toBe(1);
    // Terraform folds its messages at 80 columns.
    expect(short.stderr.replace(/\s+/g, " ")).toContain(
      "TF_VAR_pg_password (install-postgres's db_password) is shorter than 12 characters",
    );
    expect(`${short.stdout}${short.stderr}`).not.toContain("Sh0rt-pw!");
    // Long enough: the plan goes on (the jobs are planned, not run).
    const ok = plan("twelve+ characters");
    expect(ok.stderr).toBe("");
    expect(ok.status).toBe(0);
  }, 60000);
});

describe('vms[].onDestroy "uninstall": cdktf destroy runs each installer with state absent first', () => {
  const uninstall = {
    stackName: "gone",
    jobTarget: "local",
    installers: { docker: { enabled: true, channel: "distro" } },
    vms: [{ name: "h1", kind: "existing", address: "192.0.2.10", privateKeyPath: H1_KEY, onDestroy: "uninstall" }],
  };
  const { tf, stackDir } = synth(uninstall);
  const data = tf.resource.terraform_data;
  const ids = Object.keys(data).filter((id) => id.endsWith("_uninstall"));

  test("one per installer, destroyed in the reverse order of install, each after its own job", () => {
    expect(ids.sort()).toEqual(["h1_docker_uninstall", "h1_packages_uninstall"]);
    expect(data.h1_docker_uninstall.depends_on).toEqual([
      "terraform_data.h1_docker",
      "terraform_data.h1_packages_uninstall",
    ]);
    expect(data.h1_packages_uninstall.depends_on).toEqual(["terraform_data.h1_packages"]);
    // No triggers: a job's rerun replaces the job, never this, so a rerun does not uninstall first.
    for (const id of ids) expect(data[id].triggers_replace).toBeUndefined();
  });

  test("its destroy-time step references only self; the event says absent; the key stays a path", () => {
    const r = data.h1_docker_uninstall;
    const [step] = r.provisioner;
    expect(step["local-exec"].when).toBe("destroy");
    expect(JSON.stringify(step)).not.toMatch(/\$\{(?!self\.input\.)/);
    expect(JSON.parse(r.input.VM_INSTALL_EVENT)).toMatchObject({ channel: "distro", state: "absent" });
    expect(r.input.command).toContain(H1_KEY);
    expect(r.input.command).toContain("h1-install-docker-uninstall");
    expect(data.h1_docker.provisioner[0]["local-exec"].environment.VM_INSTALL_EVENT).toContain('"state":"present"');
  });

  test("terraform validate passes on it, offline", () => {
    const env = tfEnv();
    execFileSync("terraform", ["init", "-input=false", "-backend=false"], { cwd: stackDir, env, stdio: "pipe" });
    const result = JSON.parse(
      execFileSync("terraform", ["validate", "-json"], { cwd: stackDir, env, encoding: "utf8" }),
    );
    expect(result.diagnostics).toEqual([]);
  }, 60000);

  test.each([
    ["a Nubes VM (it goes with the stack)", { kind: "nubes", address: undefined }, {}, /is for kind "existing"/],
    ["the sless target (its jobs run only when created)", {}, { jobTarget: "sless" }, /needs jobTarget "local"/],
  ])("refused at synth for %s", (_what, vm, root, message) => {
    const vms = [{ ...uninstall.vms[0], ...vm }];
    expect(() => parseConfig({ ...uninstall, nubes: { vdcUid: "v", nsxtUid: "n" }, ...root, vms })).toThrow(message);
  });

  test("install-postgres: its uninstall names the password's TF_VAR_ (--secret-env); no value, no var. in it", () => {
    // The value is in this process's environment while it synthesizes: none of it may reach cdktf.out.
    const secret = "uninstall-synth-secret-value";
    const before = process.env.TF_VAR_pg_password;
    process.env.TF_VAR_pg_password = secret;
    try {
      const postgres = { enabled: true, passwordVariable: "pg_password", tls: "given" };
      const tls = { tlsCertVariable: "pg_tls_cert", tlsKeyVariable: "pg_tls_key" };
      const out = synth({ ...uninstall, installers: { ...uninstall.installers, postgres: { ...postgres, ...tls } } });
      const r = out.tf.resource.terraform_data.h1_postgres_uninstall;
      // Taken back first, as it was installed last: a destroy takes a dependent before what it depends on.
      expect(r.depends_on).toEqual(["terraform_data.h1_postgres", "terraform_data.h1_docker_uninstall"]);
      expect(parseInvokeArgs(shellWords(r.input.command).slice(4))).toMatchObject({
        name: "h1-install-postgres-uninstall",
        secretEnv: [
          { field: "db_password", variable: "TF_VAR_pg_password" },
          { field: "tls_cert", variable: "TF_VAR_pg_tls_cert" },
          { field: "tls_key", variable: "TF_VAR_pg_tls_key" },
        ],
      });
      const event = JSON.parse(r.input.VM_INSTALL_EVENT);
      expect(event).toMatchObject({ state: "absent", db_user: "app_user", tls: "given" });
      for (const field of ["db_password", "tls_cert", "tls_key"]) expect(event[field]).toBeUndefined();
      // Nothing Terraform would evaluate to a secret (and keep in state): no variable, no file read.
      expect(JSON.stringify(r)).not.toMatch(/var\.|sensitive\(|file\(/);
      expect(JSON.stringify(r.provisioner)).not.toMatch(/\$\{(?!self\.input\.)/);
      for (const f of filesUnder(out.outdir)) expect(fs.readFileSync(f, "utf8")).not.toContain(secret);
    } finally {
      if (before === undefined) delete process.env.TF_VAR_pg_password;
      else process.env.TF_VAR_pg_password = before;
    }
  });
});
