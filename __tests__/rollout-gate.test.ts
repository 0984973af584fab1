// The rollout's gates: what the stack synthesizes for waves (which jobs wait on which gate, what a job does
// with a failure), and the gate's budget run by real Terraform over stand-in jobs whose phase and message are
// given, so the conditions, the counts and the messages are Terraform's own verdict, not a reading of JSON.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { App, LocalBackend, TerraformStack } from "../lib/construct/cdktf";
import { parseConfig } from "../lib/construct/config/parse";
import { planRollout } from "../lib/construct/config/rollout";
import type { InstallerJob } from "../lib/construct/jobs/job-spec";
import { type GatedVm, rolloutGate } from "../lib/construct/jobs/rollout-gate";
import { TerraformData } from "../lib/construct/jobs/terraform-data";
import { context, synth, type TfJson, tempDir } from "./support/synth";
import { HOSTILE, NOT_ONE_PRINTABLE_LINE } from "./support/vm-says";

const pin = `SHA256:${"E".repeat(43)}`;
const hosts = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    name: `h${i + 1}`,
    kind: "existing",
    address: `192.0.2.${i + 1}`,
    hostKeySha256: pin,
  }));

describe("a rollout in waves, as synthesized", () => {
  test("the default (one wave, no budget) adds no gate and keeps each job failing by itself", () => {
    for (const jobTarget of ["local", "sless"]) {
      const { tf } = synth({ jobTarget, vms: hosts(3) });
      expect(Object.keys(tf.resource.terraform_data ?? {}).filter((id) => id.startsWith("rollout_"))).toEqual([]);
      expect(tf.output.rollout_failures).toBeUndefined();
      if (jobTarget === "sless") expect(tf.resource.sless_job.h1_packages.lifecycle.postcondition).toHaveLength(1);
      else expect(tf.resource.terraform_data.h1_packages.provisioner[0]["local-exec"].command).not.toMatch(/\|\|/);
    }
  });

  test("waves [1, 2] with no budget: wave 2's jobs wait on the gate over wave 1's; jobs still fail by themselves", () => {
    // (The gate still judges the results: a partial one stops the rollout.)
    const { tf } = synth({ jobTarget: "local", rollout: { waves: [1, 2] }, vms: hosts(3) });
    const data = tf.resource.terraform_data;
    expect(data.rollout_wave_1.depends_on).toEqual(["terraform_data.h1_packages"]);
    expect(data.rollout_wave_1.input).toEqual({ h1: '${local.rollout_wave_1_failures["h1"]}' });
    expect(tf.locals.rollout_wave_1_failures.h1).toMatch(/"partial"/);
    expect(data.rollout_wave_1.lifecycle.precondition[0].condition).toBe(
      '${length([for vm in ["h1"] : vm if local.rollout_wave_1_failures[vm] != ""]) <= 0}',
    );
    expect(data.rollout_wave_2.depends_on).toEqual([
      "terraform_data.rollout_wave_1",
      "terraform_data.h2_packages",
      "terraform_data.h3_packages",
    ]);
    expect(data.h1_packages.depends_on).toBeUndefined();
    for (const vm of ["h2", "h3"]) expect(data[`${vm}_packages`].depends_on).toEqual(["terraform_data.rollout_wave_1"]);
    expect(data.h2_packages.provisioner[0]["local-exec"].command).not.toMatch(/\|\|/);
  });

  test("with a budget, jobs record a failure for the gates instead of failing the apply", () => {
    const { tf } = synth({
      jobTarget: "local",
      rollout: { waves: [1, 2], maxFailures: 1 },
      installers: { docker: { enabled: true, channel: "distro" } },
      vms: hosts(3),
    });
    const data = tf.resource.terraform_data;
    const [packages, docker] = [data.h2_packages, data.h2_docker].map((r) => r.provisioner[0]["local-exec"]);
    expect(packages.command).toMatch(/ \|\| \[ \$\? -eq 1 \]$/);
    // The second installer runs only after the first succeeded on its VM.
    expect(docker.command).toMatch(/^\[ "\$VM_INSTALL_PREVIOUS_PHASE" = Succeeded \] \|\| \{ echo /);
    expect(docker.environment.VM_INSTALL_PREVIOUS_PHASE).toBe("${terraform_data.h2_packages_outcome.output.phase}");
    expect(data.h2_packages_outcome.input.phase).toMatch(/outputs\.phase\.value/);
    expect(Object.keys(data.rollout_wave_2.input)).toEqual(["h1", "h2", "h3"]);
    expect(tf.output.rollout_failures.value).toMatch(/terraform_data\.rollout_wave_2\.output/);
  });

  test("with a budget on sless, no per-job postcondition, and a later installer gets no address after a failure", () => {
    const { tf } = synth({
      rollout: { waves: [1, 2], maxFailures: 1 },
      installers: { docker: { enabled: true, channel: "distro" } },
      vms: hosts(3).map((h) => ({ ...h })),
      nubes: undefined,
    });
    const jobs = tf.resource.sless_job;
    expect(jobs.h1_packages.lifecycle?.postcondition).toBeUndefined();
    expect(jobs.h1_packages.env_vars.VM_IP).toBe("192.0.2.1");
    expect(jobs.h1_docker.env_vars.VM_IP).toBe('${(sless_job.h1_packages.phase == "Succeeded") ? "192.0.2.1" : ""}');
    expect(jobs.h2_packages.depends_on).toEqual(["terraform_data.rollout_wave_1"]);
  });

  test("per-VM runId and runIds add to the global runId for that VM and installer only", () => {
    const vms = hosts(2);
    const { tf } = synth({
      runId: 5,
      jobTarget: "sless",
      installers: { docker: { enabled: true, channel: "distro" } },
      vms: [{ ...vms[0], runId: 2, runIds: { docker: 1 } }, vms[1]],
    });
    const runIds = Object.fromEntries(
      Object.entries(tf.resource.sless_job).map(([id, j]: [string, any]) => [id, j.run_id]),
    );
    expect(runIds).toEqual({ h1_packages: 7, h1_docker: 8, h2_packages: 5, h2_docker: 5 });
  });

  test("synth prints a line per wave", () => {
    const config = parseConfig(context({ jobTarget: "local", rollout: { waves: [1, 2] }, vms: hosts(3) }));
    const app = new App({ outdir: tempDir("waves") });
    const { VmInstallStack } = require("../lib/construct/stack");
    const stack = new VmInstallStack(app, "s", { config });
    const infos = stack.node.metadata.filter((m: { type: string }) => m.type === "@cdktf/info").map((m: any) => m.data);
    expect(infos).toEqual([
      "rollout wave 1 of 2: h1 (tolerates 0 failed of 1; 0 over the rollout)",
      "rollout wave 2 of 2: h2, h3 (tolerates 0 failed of 2; 0 over the rollout)",
    ]);
  });
});

/** A stand-in job: a terraform_data whose output is the phase and message given. */
function standIn(stack: TerraformStack, id: string, phase: string, message: string, after?: TerraformData) {
  const data = new TerraformData(stack, id, { input: { phase, message }, dependsOn: after ? [after] : undefined });
  data.overrideLogicalId(id);
  const job: InstallerJob = {
    fqn: data.fqn,
    address: `terraform_data.${id}`,
    phase: data.getStringAttribute("output.phase"),
    message: data.getStringAttribute("output.message"),
  };
  return { data, job };
}

/**
 * Applies a fleet of stand-ins in the waves given, each VM one job with `phases[vm]` ("Succeeded" or
 * "Failed"), with real Terraform; returns what it printed and the resources it made.
 */
function applyRollout(
  phases: string[],
  rollout: Record<string, unknown>,
  says = (vm: string) => `apt says no on ${vm}\nsecond line`,
) {
  const partial = JSON.stringify({ status: "partial", warnings: ["tree was not installed: unknown package"] });
  const vms = phases.map((_, i) => ({ name: `h${i + 1}` }));
  const config = parseConfig(context({ rollout, vms }));
  const plan = planRollout(config.vms, config.rollout);
  const outdir = tempDir("gate");
  const app = new App({ outdir });
  const stack = new TerraformStack(app, "gate");
  new LocalBackend(stack, { path: path.join(outdir, "terraform.tfstate") });
  const gated: GatedVm[] = [];
  let gate: TerraformData | undefined;
  for (const wave of plan.waves) {
    for (const vm of wave.vms) {
      const i = Number(vm.slice(1)) - 1;
      const [phase, message] = phases[i] === "partial" ? ["Succeeded", partial] : [phases[i], says(vm)];
      const { job } = standIn(stack, `${vm}_packages`, phase, message, gate);
      gated.push({ name: vm, jobs: [{ name: `${vm}-install-packages`, job }] });
    }
    gate = rolloutGate(stack, wave, plan, gated, gate);
  }
  app.synth();
  const dir = path.join(outdir, "stacks", "gate");
  const rc = path.join(outdir, "terraformrc");
  fs.writeFileSync(rc, "");
  const env = { ...process.env, TF_CLI_CONFIG_FILE: rc, CHECKPOINT_DISABLE: "1", TF_IN_AUTOMATION: "1" };
  const run = (...args: string[]) => spawnSync("terraform", args, { cwd: dir, env, encoding: "utf8" });
  expect(run("init", "-input=false").status).toBe(0);
  const apply = run("apply", "-auto-approve", "-input=false", "-no-color", "-parallelism=1");
  const state = run("state", "list").stdout.split("\n").filter(Boolean);
  // Terraform wraps its messages in boxes: read them as one line.
  const text = `${apply.stdout}\n${apply.stderr}`.replace(/[\s│]+/g, " ");
  return {
    status: apply.status,
    errors: apply.stderr.split("\n"),
    text,
    state,
    tf: JSON.parse(fs.readFileSync(path.join(dir, "cdk.tf.json"), "utf8")) as TfJson,
  };
}

describe("the gate's budget, as Terraform applies it", () => {
  const S = "Succeeded";
  const F = "Failed";

  test("a failed canary over its wave's budget stops the rollout, naming it and its message", () => {
    const r = applyRollout([F, S, S, S], { waves: [1, 3], maxFailures: "50%" });
    expect(r.status).not.toBe(0);
    expect(r.text).toMatch(
      /rollout stopped at wave 1 of 2: 1 of 1 VMs failed, more than rollout\.maxFailures allows in a wave \(0\): h1 \(h1-install-packages: apt says no on h1 second line\)/,
    );
    expect(r.state.filter((a) => /h[234]_packages/.test(a))).toEqual([]);
  }, 60_000);

  test("failures within both budgets do not stop it", () => {
    const r = applyRollout([S, F, S, S, S, F], { waves: [1, 2, 3], maxFailures: 2 });
    expect(r.text).not.toMatch(/rollout stopped/);
    expect(r.status).toBe(0);
    expect(r.state).toEqual(expect.arrayContaining(["terraform_data.h6_packages", "terraform_data.rollout_wave_3"]));
  }, 60_000);

  test("the overall budget stops a later wave even when each wave is within its own", () => {
    // 1 failure per wave is allowed, 1 in all: the second failure (wave 3) is one too many.
    const r = applyRollout([S, F, S, S, F, S, S], { waves: [1, 3, 3], maxFailures: 1 });
    expect(r.status).not.toBe(0);
    expect(r.text).toMatch(
      /rollout stopped at wave 3 of 3: 2 VMs failed so far, more than rollout\.maxFailures allows over the rollout \(1\): h2 \(h2-install-packages: apt says no on h2 second line\); h5 \(/,
    );
  }, 60_000);

  test("a partial result (a package not installed) is a failure too, named with its first warning", () => {
    const r = applyRollout([S, "partial", S], { waves: [2, 1] });
    expect(r.status).not.toBe(0);
    expect(r.text).toMatch(
      /rollout stopped at wave 1 of 2: 1 of 2 VMs failed, .*: h2 \(h2-install-packages: tree was not installed: unknown package\)/,
    );
    expect(r.state).not.toContain("terraform_data.h3_packages");
  }, 60_000);

  test("what a VM said reaches Terraform's error as one line of text: no control, escape, bidi or separator", () => {
    const r = applyRollout([F, S], { waves: [1, 1] }, (vm) => `apt says no on ${vm}: ${HOSTILE}`);
    expect(r.status).not.toBe(0);
    expect(r.text).toMatch(
      /h1 \(h1-install-packages: apt says no on h1: 24\.0\.5 vm2 install-docker ok yes - fake row \[2J/,
    );
    for (const line of r.errors) expect(line).not.toMatch(NOT_ONE_PRINTABLE_LINE);
  }, 60_000);

  test("a wave's percentage budget: 1 of 3 failed within 34%, 2 of 3 not", () => {
    expect(applyRollout([F, S, S, S, S, S], { waves: [3], maxFailures: "34%" }).status).toBe(0);
    const r = applyRollout([F, F, S, S, S, S], { waves: [3], maxFailures: "34%" });
    expect(r.text).toMatch(/rollout stopped at wave 1 of 2: 2 of 3 VMs failed/);
    expect(r.state.filter((a) => /h[456]_packages/.test(a))).toEqual([]);
  }, 60_000);
});
