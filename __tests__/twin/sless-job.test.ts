// sless_job in the twin through real Terraform: a bundled directory run as the platform runs it, phase
// and message filled, a failing handler a Failed job (the stack's postcondition stops the deploy), a
// new run_id, source_dir or event_json a new run, bad input refused at plan time.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { REQUIRED_PROVIDERS, TwinTerraform } from "./terraform";

const HANDLER = `exports.install = async (event) => {
  if (event.fail) throw new Error("could not: " + event.fail);
  if (event.mark) require("node:fs").writeFileSync(event.mark, "started");
  if (event.sleep) await new Promise((r) => setTimeout(r, event.sleep * 1000));
  return { seen: event, env: Object.keys(process.env).filter((k) => k.startsWith("JOB_")).sort(), cwd: process.cwd() };
};
`;

function config(jobDir: string): string {
  return `${REQUIRED_PROVIDERS}
provider "sless" {}
variable "run" { default = 1 }
variable "event" { default = "{}" }
variable "timeout" { default = 30 }
resource "sless_job" "j" {
  name             = "vm1-install-test"
  runtime          = "nodejs20"
  entrypoint       = "handler.install"
  source_dir       = ${JSON.stringify(jobDir)}
  env_vars         = { JOB_A = "1", JOB_B = "2" }
  event_json       = var.event
  run_id           = var.run
  wait_timeout_sec = var.timeout
  lifecycle {
    postcondition {
      condition     = self.phase == "Succeeded"
      error_message = "sless_job \${self.name} \${self.phase}: \${self.message}"
    }
  }
}
output "phase" { value = sless_job.j.phase }
output "message" { value = sless_job.j.message }
`;
}

describe("sless_job in the twin", () => {
  const tf = new TwinTerraform();
  const jobDir = path.join(tf.dir, "job");
  const apply = (vars: Record<string, string | number> = {}) =>
    tf.run(["apply", "-auto-approve", "-input=false", ...Object.entries(vars).map(([k, v]) => `-var=${k}=${v}`)]);
  const outputs = () => JSON.parse(tf.ok(["output", "-json"])) as Record<string, { value: string }>;

  beforeAll(() => {
    fs.mkdirSync(jobDir);
    fs.writeFileSync(path.join(jobDir, "handler.js"), HANDLER);
    tf.write(config(jobDir));
    tf.ok(["init", "-input=false"]);
  }, 120_000);

  test("create runs the handler in its directory with only env_vars and the event", () => {
    const r = apply({ event: '{"packages":["git"]}' });
    expect(r.code).toBe(0);
    const out = outputs();
    expect(out.phase.value).toBe("Succeeded");
    expect(JSON.parse(out.message.value)).toEqual({
      seen: { packages: ["git"] },
      env: ["JOB_A", "JOB_B"],
      cwd: jobDir,
    });
  });

  test("unchanged: no run; a raised run_id replaces the job", () => {
    expect(apply({ event: '{"packages":["git"]}' }).output).toContain("No changes.");
    const r = apply({ event: '{"packages":["git"]}', run: 2 });
    expect(r.output).toMatch(/run_id\s+= 1 -> 2 # forces replacement/);
    expect(r.output).toContain("Resources: 1 added, 0 changed, 1 destroyed.");
  });

  test("a failing handler: phase Failed with the error in message, and the postcondition names the job", () => {
    const r = apply({ event: '{"fail":"no such package zzz"}', run: 2 });
    expect(r.code).not.toBe(0);
    expect(r.output).toContain("Resource postcondition failed");
    expect(r.output).toContain("sless_job vm1-install-test Failed: could not: no such package zzz");
    // After the fix the next apply succeeds.
    expect(apply({ event: '{"packages":["jq"]}', run: 2 }).code).toBe(0);
    expect(outputs().phase.value).toBe("Succeeded");
  });

  test("secrets in the event (password-like fields) are scrubbed from the job's message, as the runner does", () => {
    const secret = "s3cret-value-of-some-length";
    const r = apply({ event: JSON.stringify({ db_password: secret, fail: `leaked ${secret}` }), run: 3 });
    expect(r.code).not.toBe(0);
    // (The plan above the error shows event_json: this test's variable is not sensitive; the stack's is.)
    const error = r.output.slice(r.output.indexOf("Error:"));
    expect(error).toContain("Failed: could not: leaked [redacted]");
    expect(error).not.toContain(secret);
  });

  test("wait_timeout_sec: a job past it is Failed, naming the timeout", () => {
    const r = apply({ event: '{"sleep":5}', timeout: 1 });
    expect(r.code).not.toBe(0);
    expect(r.output).toMatch(/Failed: .*timed out after 1 s/);
  });

  test("Ctrl-C during a job: Terraform's StopProvider cancels it, the job is Failed and the apply ends", async () => {
    // Interrupted once the handler says it runs (its mark), never on a timer: under load the provider may
    // take seconds to start it. The job sleeps 60 s; that the apply ends at all within the test's time, Failed
    // with "cancelled", is the proof.
    const mark = path.join(tf.dir, "job-started");
    const child = spawn(
      "terraform",
      [
        "apply",
        "-auto-approve",
        "-input=false",
        "-no-color",
        `-var=event=${JSON.stringify({ sleep: 60, mark })}`,
        "-var=timeout=120",
        "-var=run=9",
      ],
      {
        cwd: tf.dir,
        env: tf.env(),
      },
    );
    let output = "";
    const watch = setInterval(() => {
      if (!fs.existsSync(mark)) return;
      clearInterval(watch);
      child.kill("SIGINT");
    }, 50);
    const code = await new Promise<number | null>((resolve) => {
      const take = (chunk: Buffer) => {
        output += chunk.toString();
      };
      child.stdout.on("data", take);
      child.stderr.on("data", take);
      child.on("close", (c) => resolve(c));
    });
    clearInterval(watch);
    expect(fs.existsSync(mark)).toBe(true);
    expect(code).not.toBe(0);
    expect(output.replace(/\s+/g, " ")).toContain("sless_job vm1-install-test Failed: cancelled before it finished");
  }, 90_000);

  test("event_json that is not JSON is refused at plan time, naming the attribute", () => {
    const r = tf.run(["plan", "-input=false", "-var=event={not json"]);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain("sless_job: event_json is not JSON");
    expect(r.output).toMatch(
      /with sless_job\.j,\s+on main\.tf line \d+, in resource "sless_job" "j":\s+\d+:\s+event_json/,
    );
  });
});

describe("plan-time validation in the twin", () => {
  test("a required attribute that is null is refused at plan time, naming it and where it was set", () => {
    const tf = new TwinTerraform();
    tf.write(`${REQUIRED_PROVIDERS}
variable "name" { default = null }
variable "runtime" { default = "nodejs20" }
resource "sless_job" "j" {
  name       = var.name
  runtime    = var.runtime
  entrypoint = "handler.install"
  source_dir = "/nonexistent"
}
`);
    tf.ok(["init", "-input=false"]);
    const r = tf.run(["plan", "-input=false"]);
    expect(r.code).not.toBe(0);
    expect(r.output).toContain("Error: sless_job: name is required");
    expect(r.output).toMatch(/on main\.tf line \d+, in resource "sless_job" "j":\s+\d+:\s+name\s+= var\.name/);
    // Another runtime than Node's is refused too, before anything runs.
    const py = tf.run(["plan", "-input=false", "-var=name=j", "-var=runtime=python3.11"]);
    expect(py.code).not.toBe(0);
    expect(py.output).toContain('Error: sless_job: runtime "python3.11" is not a Node runtime');
  }, 120_000);
});
