// What `npm run demo` shows of cdktf deploy, from real runs' output (fixtures/cdktf/, recorded through
// bin/cdktf piped, i.e. cdktf in CI mode; paths shortened, the password's scrypt hash redacted): a fresh
// deploy of all three installers, a job refused by its host key pin, a plan stopped by a precondition.
import * as fs from "node:fs";
import * as path from "node:path";
import { DeploySummary, describeJobResult } from "../dev/demo/deploy-summary";

function recorded(name: string): string[] {
  return fs.readFileSync(path.join(__dirname, "fixtures", "cdktf", name), "utf8").split("\n");
}

function summarize(stack: string, lines: string[]) {
  const said: string[] = [];
  const shown: string[] = [];
  const summary = new DeploySummary(stack, "deploy", (l) => said.push(l), {
    update: (t) => shown.push(t),
    end: () => undefined,
  });
  for (const l of lines) summary.line(l);
  return { said, shown, failure: summary.failure() };
}

test("a fresh deploy: the plan, each job's status and summary as it ends, the result (351 lines of output)", () => {
  const lines = recorded("deploy-fresh.log");
  expect(lines.length).toBeGreaterThan(300);
  const { said, shown } = summarize("vm-install-demo", lines);
  expect(said).toEqual([
    "plan: 7 to add, 0 to change, 0 to destroy",
    "demo-install-packages: ok: installed 4, already installed 1, failed 0",
    "demo-install-docker: ok: Docker 20.10.24+dfsg1 (server 20.10.24+dfsg1) installed from the distribution; added ubuntu to group docker",
    "demo-install-postgres: ok: PostgreSQL 15.20 (15/main, port 5432): 3 changes",
    "apply complete: 7 added, 0 changed, 0 destroyed",
  ]);
  // The progress line follows each job's own steps, under the job's name.
  expect(shown[0]).toBe("cdktf deploy: synthesizing");
  expect(shown).toContain("cdktf deploy: demo-install-docker: apt-get install docker.io ...");
  expect(shown.filter((s) => s.includes("(local-exec)"))).toEqual([]);
});

test("a job that fails: its whole message once, then only the titles of Terraform's errors (the rest repeats it)", () => {
  const { said, failure } = summarize("nc-fail", recorded("deploy-job-failed.log"));
  expect(said).toHaveLength(2);
  expect(said[0]).toBe("plan: 7 to add, 0 to change, 0 to destroy");
  expect(said[1]).toMatch(
    /^demo-install-packages: failed: install-packages failed while connecting over SSH: host key mismatch for 10\.200\.1\.2:22: .*do not accept it\.$/,
  );
  expect(failure).toEqual(["Error: local-exec provisioner error"]);
});

test("a plan that fails: Terraform's error, its text indented, without cdktf's own closing lines", () => {
  const { said, failure } = summarize("nc-fail", recorded("deploy-plan-failed.log"));
  expect(said).toEqual(["plan: 6 to add, 0 to change, 0 to destroy"]);
  expect(failure).toEqual([
    "Error: Resource precondition failed",
    expect.stringMatching(/^ {2}on cdk\.tf\.json line \d+, in resource\.terraform_data\.pg_password_check/),
    expect.stringMatching(/^ {2}\d+: +"condition": "\$\{length\(var\.pg_password\) >= 12\}",$/),
    "  TF_VAR_pg_password (install-postgres's db_password) is shorter than 12",
    "  characters; set a longer one. The value is not shown.",
  ]);
});

test("a failure with no error in the output (cdktf sometimes loses Terraform's last lines): the last lines instead", () => {
  const { failure } = summarize("s", [
    "s  Initializing the backend...",
    "s  terraform_data.x: Creating...",
    "Invoking Terraform CLI failed with exit code 1",
  ]);
  expect(failure).toEqual([
    "Initializing the backend...",
    "terraform_data.x: Creating...",
    "Invoking Terraform CLI failed with exit code 1",
  ]);
});

test("a job's result: the handler's status and summary, else the runner's message", () => {
  expect(describeJobResult("Succeeded", JSON.stringify({ status: "partial", summary: "installed 1, failed 1" }))).toBe(
    "partial: installed 1, failed 1",
  );
  expect(describeJobResult("Failed", "timed out after 600 s\nlast output: ...")).toBe("failed: timed out after 600 s");
});

test("a run that succeeded but whose output cdktf cut short (no 'Destroy complete!'): the outcome is said anyway", () => {
  const said: string[] = [];
  const summary = new DeploySummary("s", "destroy", (l) => said.push(l), {
    update: () => undefined,
    end: () => undefined,
  });
  summary.line("s  Plan: 0 to add, 0 to change, 7 to destroy.");
  summary.finish(0);
  expect(said).toEqual([
    "plan: 0 to add, 0 to change, 7 to destroy",
    "destroy succeeded (exit 0; cdktf cut Terraform's last lines short, its summary among them)",
  ]);
  const complete: string[] = [];
  const whole = new DeploySummary("s", "destroy", (l) => complete.push(l), {
    update: () => undefined,
    end: () => undefined,
  });
  whole.line("s  Destroy complete! Resources: 7 destroyed.");
  whole.finish(0);
  expect(complete).toEqual(["destroy complete: 7 destroyed"]);
});
