// PostgreSQL tls "stack-ca" through the cdktf CLI run directly (not bin/cdktf): the app makes the stack's CA at
// synth, Terraform and the job runner read it from its file, the host's psql connects with verify-full against
// the CA certificate the stack outputs. The CA key is in no file but the CA file: not cdktf.out, the state, the
// plan file or the outputs. A new CA file reruns the job; an unchanged one reruns nothing. Then a plain destroy.
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { readOutputs, writeCdktfProject } from "../../dev/demo/project";
import type { Sandbox } from "../../dev/sandbox/index";
import { resultsFolder } from "../../lib/construct/jobs/secret-trigger";
import { caFile, readCaFile } from "../../lib/construct/postgres-ca";
import { terraformIn } from "../../lib/operator/terraform-cli";
import { filesUnder, tempDir } from "../support/synth";
import { host, jobsRun } from "./support/deploy";
import { describeE2E, sandboxPerSuite } from "./support/e2e";
import { plainCdktf } from "./support/plain-cdktf";

const STACK = "plainca";
const PW = "plain cdktf stack-ca password";
const secrets = { TF_VAR_pg_password: PW };

/** The host's psql, verify-full against `rootCert`, as the stack's role; "t" when the session is TLS. */
function verifyFull(sb: Sandbox, rootCert: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const conninfo =
    `host=${sb.address} port=5432 user=ca_app dbname=cadb sslmode=verify-full sslrootcert=${rootCert} ` +
    "connect_timeout=10";
  return new Promise((resolve) => {
    execFile(
      "psql",
      ["-X", "-w", "-At", conninfo, "-c", "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()"],
      { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", PGPASSWORD: PW, LC_ALL: "C" }, timeout: 30_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout: stdout.trim(), stderr }),
    );
  });
}

/** The PEM body lines of a key, each long enough to be told apart from anything else. */
const keyBodyLines = (pem: string) => pem.split("\n").filter((l) => l.length > 40 && !l.startsWith("-----"));

describeE2E("PostgreSQL tls stack-ca through the cdktf CLI run directly: deploy, a new CA, destroy", () => {
  let sb: Sandbox;
  let dir: string;
  const ca = () => readCaFile(caFile(resultsFolder(dir, STACK)));
  const deploy = () =>
    plainCdktf(dir, ["deploy", "--auto-approve", "--outputs-file", path.join(dir, "outputs.json")], secrets);
  /** The CA certificate the stack outputs, written where psql reads it. */
  const outputCert = (name: string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, readOutputs(dir, STACK).postgres_ca_cert);
    return file;
  };
  /**
   * Every file of the project but the CA file that holds a line of the CA key, and the plan file's contents
   * as Terraform shows them (a zip: its own bytes would hide the key), as "plan (terraform show)". The plan
   * file is the last `cdktf diff`'s (a deploy leaves it empty).
   */
  const holdingKey = (key: string) => {
    const own = caFile(resultsFolder(dir, STACK));
    const holds = (text: string) => keyBodyLines(key).some((l) => text.includes(l));
    const stackDir = path.join(dir, "cdktf.out", "stacks", STACK);
    const shown = terraformIn(stackDir, dir, ["show", "-json", "plan"]);
    expect({ status: shown.status, stderr: shown.stderr }).toEqual({ status: 0, stderr: "" });
    expect(JSON.parse(shown.stdout)).toHaveProperty("variables.pg_password");
    return [
      ...filesUnder(dir)
        .filter((f) => f !== own && !f.includes(`${path.sep}.terraform${path.sep}`))
        .filter((f) => holds(fs.readFileSync(f, "latin1")))
        .map((f) => path.relative(dir, f)),
      ...(holds(shown.stdout) ? ["plan (terraform show)"] : []),
    ];
  };

  sandboxPerSuite((s) => (sb = s));
  beforeAll(() => {
    dir = tempDir("plain-cdktf-ca");
    writeCdktfProject(dir, {
      stackName: STACK,
      jobTarget: "local",
      installers: {
        postgres: {
          enabled: true,
          dbName: "cadb",
          dbUser: "ca_app",
          passwordVariable: "pg_password",
          listenAddresses: sb.address,
          allowRemote: true,
          // The host (the client here) and the VM itself (the job's login check connects to the listen address).
          allowedCidrs: [`${sb.hostAddress}/32`, `${sb.address}/32`],
          tls: "stack-ca",
        },
      },
      vms: [host("one", sb)],
    });
  });

  test("deploy: the app makes the CA; verify-full connects with the output certificate; the key is only in its file", async () => {
    const run = await deploy();
    expect({ code: run.code, tail: run.code === 0 ? "" : run.output.slice(-3000) }).toEqual({ code: 0, tail: "" });
    expect(jobsRun(run)).toEqual(["one_packages", "one_postgres"]);
    const made = ca();
    expect(made).toBeDefined();
    expect(fs.statSync(caFile(resultsFolder(dir, STACK))).mode & 0o777).toBe(0o600);
    expect(readOutputs(dir, STACK).postgres_ca_cert).toBe(made!.cert);
    expect(await verifyFull(sb, outputCert("ca.pem"))).toEqual({ code: 0, stdout: "t", stderr: "" });
    // State and its backup, the plan file a diff writes, cdktf.out, the outputs, results, logs: none holds a
    // line of the key (through bin/cdktf before, the plan file held it: the CA was a Terraform variable).
    const diff = await plainCdktf(dir, ["diff"], secrets);
    expect({ code: diff.code, tail: diff.code === 0 ? "" : diff.output.slice(-3000) }).toEqual({ code: 0, tail: "" });
    expect(holdingKey(made!.key)).toEqual([]);
  }, 900_000);

  test("unchanged, nothing reruns; a new CA file reruns the job and the new certificate verifies, the old CA does not", async () => {
    const again = await deploy();
    expect({ code: again.code, tail: again.code === 0 ? "" : again.output.slice(-3000) }).toEqual({
      code: 0,
      tail: "",
    });
    expect(jobsRun(again)).toEqual([]);

    const old = ca()!;
    fs.rmSync(caFile(resultsFolder(dir, STACK)));
    const run = await deploy();
    expect({ code: run.code, tail: run.code === 0 ? "" : run.output.slice(-3000) }).toEqual({ code: 0, tail: "" });
    expect(jobsRun(run)).toEqual(["one_postgres"]);
    expect(ca()!.key).not.toBe(old.key);
    expect(await verifyFull(sb, outputCert("new-ca.pem"))).toEqual({ code: 0, stdout: "t", stderr: "" });
    const stale = await verifyFull(sb, path.join(dir, "ca.pem"));
    expect(stale.code).not.toBe(0);
    expect(stale.stderr).toMatch(/certificate verify failed/);
    expect(await plainCdktf(dir, ["diff"], secrets)).toMatchObject({ code: 0 });
    expect(holdingKey(ca()!.key)).toEqual([]);
  }, 900_000);

  test("destroy: clean, the state empty", async () => {
    const run = await plainCdktf(dir, ["destroy", "--auto-approve"], secrets);
    expect({ code: run.code, tail: run.code === 0 ? "" : run.output.slice(-3000) }).toEqual({ code: 0, tail: "" });
    const state = path.join(dir, `terraform.${STACK}.tfstate`);
    expect(JSON.parse(fs.readFileSync(state, "utf8")).resources).toEqual([]);
  }, 300_000);
});
