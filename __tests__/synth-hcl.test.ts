// `cdktf synth --hcl` (main.ts through lib/construct/stack-files.ts): HCL that Terraform accepts and that means
// what the JSON means (the configuration Terraform reads from each, compared through `terraform show -json`
// of a plan), and no stack file of the other kind left behind for a later run to trip over. Terraform is
// real; only its built-in terraform_data is used, so the local target's stack runs offline.
import * as fs from "node:fs";
import * as path from "node:path";
import { configAsHcl } from "../lib/construct/json-config-as-hcl";
import { terraformIn } from "../lib/operator/terraform-cli";
import { context, synthApp, tempDir } from "./support/synth";

const PIN = `SHA256:${"C".repeat(43)}`;
/** The local target with every construct a job can carry: rollout gates, uninstall on destroy, a secret's check. */
const LOCAL = context({
  stackName: "hcl",
  jobTarget: "local",
  rollout: { waves: [1, 1], maxFailures: 1 },
  installers: {
    packages: { packages: ["jq"] },
    docker: { enabled: true },
    postgres: { enabled: true, passwordVariable: "pg_password" },
  },
  vms: [
    { name: "m", kind: "existing", onDestroy: "uninstall", address: "192.0.2.1", hostKeySha256: PIN },
    { name: "n", kind: "existing", address: "192.0.2.2" },
  ],
});

/** terraform <args> in `stackDir`; `projectDir` gets the empty CLI configuration when none is set. */
function tf(stackDir: string, args: string[], projectDir = path.dirname(path.dirname(stackDir))): string {
  const r = terraformIn(stackDir, projectDir, args);
  expect({ args, status: r.status, stderr: r.stderr }).toEqual({ args, status: 0, stderr: "" });
  return r.stdout;
}

/**
 * The configuration Terraform read, from a plan. JSON syntax keeps a template's text as a "constant_value"
 * beside its references, HCL only the references: that one difference is dropped.
 */
function plannedConfiguration(stackDir: string): unknown {
  tf(stackDir, ["init", "-input=false", "-no-color"]);
  tf(stackDir, ["plan", "-refresh=false", "-input=false", "-no-color", "-out=plan", "-var=pg_password=long enough pw"]);
  const drop = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(drop)
      : v && typeof v === "object"
        ? Object.fromEntries(
            Object.entries(v)
              .filter(([k, x]) => !(k === "constant_value" && JSON.stringify(x).includes("${")))
              .map(([k, x]) => [k, drop(x)]),
          )
        : v;
  return drop(JSON.parse(tf(stackDir, ["show", "-json", "plan"])).configuration);
}

const stackFiles = (outdir: string, stack: string) =>
  fs.readdirSync(path.join(outdir, "stacks", stack)).filter((f) => f.startsWith("cdk.tf"));

test("the local target's stack as HCL passes terraform validate and plans the configuration the JSON does", () => {
  // Side by side at the same depth, so the relative paths in both are the same.
  const base = tempDir("hcl");
  const { outdir: hclOut } = synthApp(LOCAL, { outdir: path.join(base, "hcl"), cwd: base, hcl: true });
  const { outdir: jsonOut } = synthApp(LOCAL, { outdir: path.join(base, "json"), cwd: base });
  const hclStack = path.join(hclOut, "stacks", "hcl");
  expect(stackFiles(hclOut, "hcl")).toEqual(["cdk.tf"]);
  tf(hclStack, ["init", "-backend=false", "-input=false", "-no-color"]);
  expect(tf(hclStack, ["validate", "-no-color"])).toContain("The configuration is valid.");
  expect(plannedConfiguration(hclStack)).toEqual(plannedConfiguration(path.join(jsonOut, "stacks", "hcl")));
}, 120_000);

test("the Nubes and sless stack as HCL parses (terraform fmt; its providers are not here to validate)", () => {
  const ctx = context({
    rollout: { waves: [1, 1], maxFailures: 1 },
    installers: {
      packages: { packages: ["jq"] },
      docker: { enabled: true },
      postgres: { enabled: true, passwordVariable: "pg_password", tls: "stack-ca" },
    },
    vms: [{ name: "vm1" }, { name: "vm2", hostKeys: "first-contact" }],
  });
  const { outdir } = synthApp(ctx, { hcl: true });
  const stackDir = path.join(outdir, "stacks", "vm-install");
  expect(stackFiles(outdir, "vm-install")).toEqual(["cdk.tf"]);
  tf(stackDir, ["fmt", "-no-color", "cdk.tf"]);
  const manifest = JSON.parse(fs.readFileSync(path.join(outdir, "manifest.json"), "utf8"));
  expect(manifest.stacks["vm-install"].synthesizedStackPath).toBe(path.join("stacks", "vm-install", "cdk.tf"));
}, 60_000);

test("each synth removes the stack file of the other kind an earlier one left", () => {
  const outdir = tempDir("hcl-stale");
  synthApp(LOCAL, { outdir, hcl: true });
  expect(stackFiles(outdir, "hcl")).toEqual(["cdk.tf"]);
  synthApp(LOCAL, { outdir });
  expect(stackFiles(outdir, "hcl")).toEqual(["cdk.tf.json"]);
  synthApp(LOCAL, { outdir, hcl: true });
  expect(stackFiles(outdir, "hcl")).toEqual(["cdk.tf"]);
}, 60_000);

test("strings as HCL templates: quotes, backslashes, newlines, escapes and directives mean what JSON syntax meant", () => {
  // Each value as Terraform reads it from JSON syntax and from the HCL written for it, compared as outputs.
  const values: Record<string, unknown> = {
    quotes: "rm -f \"${path.module}/a b\" 'c'",
    backslash: "C:\\dir\\ and \\n stays two characters",
    lines: "one\ntwo\r\n\tthree",
    escaped: "$${literal} and %%{literal} and $ alone and 100%",
    nested: '${format("%s-\\"%s\\"", "a}", "b{")} after',
    directive: '%{ for x in ["a", "b"] }${x};%{ endfor }',
    lone: '${jsonencode({ k = "v}" })}',
    list: ["a", '${upper("b")}'],
    object: { "key with space": "${1 + 1}", plain: true, n: 3, none: null },
  };
  const base = tempDir("hcl-strings");
  const outputs = (dir: string, file: string, text: string) => {
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, file), text);
    tf(dir, ["init", "-input=false", "-no-color"], base);
    tf(dir, ["apply", "-auto-approve", "-input=false", "-no-color"], base);
    return JSON.parse(tf(dir, ["output", "-json"], base));
  };
  const config = { output: Object.fromEntries(Object.entries(values).map(([k, v]) => [k, { value: v }])) };
  const fromJson = outputs(path.join(base, "json"), "main.tf.json", JSON.stringify(config));
  const fromHcl = outputs(path.join(base, "hcl"), "main.tf", configAsHcl(config as never));
  expect(Object.keys(fromJson).sort()).toEqual(Object.keys(values).sort());
  expect(fromHcl).toEqual(fromJson);
  // Not vacuous: the values are the templates' results.
  expect(fromHcl.quotes.value).toBe("rm -f \"./a b\" 'c'");
  expect(fromHcl.escaped.value).toBe("${literal} and %{literal} and $ alone and 100%");
  expect(fromHcl.directive.value).toBe("a;b;");
  expect(fromHcl.lines.value).toBe("one\ntwo\r\n\tthree");
}, 120_000);
