// The twin speaks Terraform's plugin protocol (handshake, mTLS, gRPC, msgpack) well enough for real
// Terraform to install it from the filesystem mirror and read its schemas, and those schemas are the
// files the stack's bindings are generated from, attribute for attribute.
import { loadProviderSchema } from "../../dev/twin/protocol/schema";
import { REQUIRED_PROVIDERS, TwinTerraform } from "./terraform";

describe("the twin providers through real Terraform", () => {
  const tf = new TwinTerraform();
  let served: Record<
    string,
    {
      provider: { block: { attributes: unknown } };
      resource_schemas: Record<string, { version: number; block: { attributes: unknown } }>;
    }
  >;

  beforeAll(() => {
    tf.write(REQUIRED_PROVIDERS);
    tf.ok(["init", "-input=false"]);
    served = JSON.parse(tf.ok(["providers", "schema", "-json"])).provider_schemas;
  }, 120_000);

  test("terraform init installs both from the twin's mirror, at the versions the stack asks for", () => {
    const lock = require("node:fs").readFileSync(`${tf.dir}/.terraform.lock.hcl`, "utf8") as string;
    expect(lock).toMatch(/provider "terra\.k8c\.ru\/nubes\/nubes" \{\s+version\s+= "2\.0\.0"/);
    expect(lock).toMatch(/provider "sless\.kube5s\.ru\/sless\/sless" \{\s+version\s+= "1\.0\.0"/);
  });

  test.each(["nubes", "sless"])(
    "%s: terraform providers schema -json matches providers/schemas attribute for attribute",
    (name) => {
      const want = loadProviderSchema(name);
      const got = served[want.source];
      expect(got).toBeDefined();
      expect(got.provider.block).toEqual(want.provider.block);
      expect(Object.keys(got.resource_schemas).sort()).toEqual(Object.keys(want.resource_schemas).sort());
      for (const [type, schema] of Object.entries(want.resource_schemas)) {
        expect({ type, version: got.resource_schemas[type].version }).toEqual({ type, version: schema.version });
        expect(got.resource_schemas[type].block).toEqual(schema.block);
      }
    },
  );

  test("a provider started by hand says what it is and exits", () => {
    const { spawnSync } = require("node:child_process");
    const launcher = `${tf.twin.mirror}/terra.k8c.ru/nubes/nubes/2.0.0/linux_amd64/terraform-provider-nubes_v2.0.0`;
    const r = spawnSync(launcher, [], { encoding: "utf8", env: { PATH: process.env.PATH } });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/Terraform provider plugin: Terraform starts it/);
  });

  test("npm run twin -- install: one command writes the mirror and the CLI configuration, and prints the line to export", () => {
    const { spawnSync } = require("node:child_process");
    const dir = `${tf.dir}/by-cli`;
    const r = spawnSync(
      process.execPath,
      ["-r", "./bin/ts-register.js", "dev/twin/install.ts", "install", "--dir", dir],
      {
        encoding: "utf8",
      },
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(
      `export TF_CLI_CONFIG_FILE=${dir}/terraformrc CDKTF_DISABLE_PLUGIN_CACHE_ENV=true TF_PLUGIN_CACHE_DIR=\n`,
    );
    const rc = require("node:fs").readFileSync(`${dir}/terraformrc`, "utf8") as string;
    expect(rc).toContain(`filesystem_mirror {\n    path    = "${dir}/mirror"`);
    expect(rc).toContain('include = ["terra.k8c.ru/nubes/nubes", "sless.kube5s.ru/sless/sless"]');
  });
});
