// The checks that stop a plan in vm-install's words, run by real Terraform: a precondition whose condition
// names nothing of the configuration is refused at init ("Invalid precondition expression"), so its message
// would never be seen. Each stop: init passes, the plan fails with the stop's own message.
import * as path from "node:path";
import { App } from "../lib/construct/cdktf";
import { parseConfig } from "../lib/construct/config/parse";
import { VmInstallStack, type VmInstallStackProps } from "../lib/construct/stack";
import { prepareForTerraform } from "../lib/construct/synth-preparation";
import { terraformIn } from "../lib/operator/terraform-cli";
import { tempDir, withTestKeys } from "./support/synth";

const PW = "long enough pw";
const postgres = { enabled: true, passwordVariable: "pg_password" };
const local = (pg: Record<string, unknown>) => ({
  jobTarget: "local",
  installers: { postgres: { ...postgres, ...pg } },
  vms: [{ name: "db", kind: "existing", address: "192.0.2.1", hostKeySha256: `SHA256:${"C".repeat(43)}` }],
});

/**
 * init, then plan, of `ctx` synthesized in a project folder of its own, `prepared` as the app's synth prepares
 * it (the stack's CA, the secret salt and triggers) or not; the plan's output on one line.
 */
async function plan(
  ctx: Record<string, unknown>,
  props: Pick<VmInstallStackProps, "secretTriggers" | "parallelism"> = {},
  prepared = false,
) {
  const project = tempDir("plan-stops");
  const config = parseConfig(withTestKeys(ctx, project));
  const stackDir = path.join(project, "cdktf.out", "stacks", config.stackName);
  if (prepared) await prepareForTerraform(project, stackDir, config, { TF_VAR_pg_password: PW }, () => {});
  const app = new App({ outdir: path.join(project, "cdktf.out") });
  new VmInstallStack(app, config.stackName, { config, baseDir: project, ...props });
  app.synth();
  const init = terraformIn(stackDir, project, ["init", "-input=false", "-no-color"]);
  const run = terraformIn(stackDir, project, ["plan", "-input=false", "-no-color", `-var=pg_password=${PW}`]);
  return { init: init.status, status: run.status, output: `${run.stdout}${run.stderr}`.replace(/\s+/g, " ") };
}

test.each([
  [
    "the local jobs' secret triggers unknown",
    local({}),
    { secretTriggers: "unknown" as const },
    "vm-install: cdktf ran this app without the TF_VAR_ values",
  ],
  [
    "the parallelism setting not held by the Terraform cdktf runs",
    local({}),
    { parallelism: "not-held" as const },
    "vm-install: cdktf.json's parallelism is 10, but this cdktf was run without --terraform-parallelism",
  ],
  [
    "the stack's CA file missing",
    local({ tls: "stack-ca" }),
    {},
    "vm-install: the stack's PostgreSQL CA file ../../../.vm-install/vm-install/postgres-ca.json (relative to the stack folder) is missing",
  ],
])("%s: init passes, the plan stops with vm-install's message", async (_, ctx, props, message) => {
  const run = await plan(ctx, props);
  expect({ init: run.init, status: run.status }).toEqual({ init: 0, status: 1 });
  expect(run.output).toContain(message);
  expect(run.output).not.toContain("Invalid precondition expression");
});

test("the stack's CA file made: the plan goes on, its job's trigger read from the file", async () => {
  const run = await plan(local({ tls: "stack-ca" }), {}, true);
  expect({ init: run.init, status: run.status, tail: run.status ? run.output.slice(-1500) : "" }).toEqual({
    init: 0,
    status: 0,
    tail: "",
  });
  expect(run.output).toContain("terraform_data.db_postgres will be created");
  expect(run.output).toContain("terraform_data.postgres_ca_check will be created");
});
