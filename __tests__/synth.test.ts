import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { App } from "../lib/construct/cdktf";
import { parseConfig } from "../lib/construct/config/parse";
import { localStateSecretsWarning, secretsInState } from "../lib/construct/risky-settings";
import { VmInstallStack } from "../lib/construct/stack";
import { PROJECT_ROOT } from "../lib/entry-points";
import { context, filesUnder, synth, synthApp, type TfJson, tempDir, testKeyPair } from "./support/synth";

/** A key file given relative to the project, as a user writes one (it must exist: synth checks it). */
const TEST_KEY = path.relative(PROJECT_ROOT, testKeyPair().privateKeyPath);

const nubesSchema = require("../providers/schemas/nubes.json").provider_schemas["terra.k8c.ru/nubes/nubes"];
const slessSchema = require("../providers/schemas/sless.json").provider_schemas["sless.kube5s.ru/sless/sless"];

const allOn = {
  packages: { enabled: true },
  docker: { enabled: true },
  postgres: { enabled: true, passwordVariable: "pg_password" },
};
const jobsOf = (tf: TfJson) => tf.resource.sless_job ?? {};

describe("installers toggled", () => {
  test("default: packages only; docker and postgres outputs say skipped", () => {
    const { tf } = synth(context());
    expect(Object.keys(tf.resource).sort()).toEqual(["nubes_vapp", "nubes_vc_vm_v3", "sless_job", "terraform_data"]);
    // The VM's host key is delivered (__tests__/delivered-host-keys.test.ts): no probe, no record.
    expect(Object.keys(jobsOf(tf))).toEqual(["vm1_packages"]);
    expect(Object.keys(tf.resource.terraform_data)).toEqual(["vm1_delivered_host_key", "vm1_vm_generation"]);
    expect(tf.output.vm1_packages_result.value).toBe("${sless_job.vm1_packages.message}");
    expect(tf.output.vm1_docker_result.value).toBe("skipped");
    expect(tf.output.vm1_postgres_result.value).toBe("skipped");
  });

  test("all off: no job (not even the host-key probe), every output skipped", () => {
    const { tf } = synth(
      context({ vms: [{ name: "vm1", hostKeys: "first-contact" }], installers: { packages: { enabled: false } } }),
    );
    expect(tf.resource.sless_job).toBeUndefined();
    expect(tf.resource.terraform_data).toBeUndefined();
    // A VM that gets a delivered key keeps only that record.
    const delivered = synth(context({ installers: { packages: { enabled: false } } })).tf;
    expect(delivered.resource.sless_job).toBeUndefined();
    expect(Object.keys(delivered.resource.terraform_data)).toEqual(["vm1_delivered_host_key"]);
    for (const k of ["packages", "docker", "postgres"]) expect(tf.output[`vm1_${k}_result`].value).toBe("skipped");
  });

  test("all on: one job each, chained packages -> docker -> postgres after the VM", () => {
    const { tf } = synth(context({ vms: [{ name: "vm1", hostKeys: "first-contact" }], installers: allOn }));
    const jobs = jobsOf(tf);
    expect(Object.keys(jobs).sort()).toEqual(["vm1_docker", "vm1_host_key_probe", "vm1_packages", "vm1_postgres"]);
    expect(jobs.vm1_host_key_probe.depends_on).toEqual(["nubes_vc_vm_v3.vm1_vm", "terraform_data.vm1_vm_generation"]);
    expect(jobs.vm1_packages.depends_on).toEqual(["nubes_vc_vm_v3.vm1_vm", "terraform_data.vm1_host_key"]);
    expect(jobs.vm1_docker.depends_on).toEqual(["nubes_vc_vm_v3.vm1_vm", "sless_job.vm1_packages"]);
    expect(jobs.vm1_postgres.depends_on).toEqual(["nubes_vc_vm_v3.vm1_vm", "sless_job.vm1_docker"]);
    // A rerun of one installer reruns the ones after it on that VM; a new VM (its id) reruns the probe, a
    // new record of its key the first installer (__tests__/host-trust.test.ts).
    expect(jobs.vm1_host_key_probe.lifecycle.replace_triggered_by).toEqual(["terraform_data.vm1_vm_generation"]);
    expect(jobs.vm1_packages.lifecycle.replace_triggered_by).toEqual(["terraform_data.vm1_host_key"]);
    expect(jobs.vm1_docker.lifecycle.replace_triggered_by).toEqual(["sless_job.vm1_packages"]);
    expect(jobs.vm1_postgres.lifecycle.replace_triggered_by).toEqual(["sless_job.vm1_docker"]);
    expect(jobs.vm1_docker.wait_timeout_sec).toBe(900);
    expect(jobs.vm1_postgres.wait_timeout_sec).toBe(900);
    expect(jobs.vm1_packages.wait_timeout_sec).toBe(600);
  });

  test("every sless_job, the host-key probe too, fails the deploy unless its phase is Succeeded, naming itself and its message", () => {
    const { tf } = synth(context({ installers: allOn }));
    for (const [id, job] of Object.entries(jobsOf(tf)) as [
      string,
      { name: string; lifecycle: Record<string, unknown> },
    ][]) {
      expect(job.lifecycle.postcondition).toEqual([
        {
          condition: '${self.phase == "Succeeded"}',
          error_message: `sless job ${job.name} (${id}) ended in phase \${self.phase}, not Succeeded: \${self.message}`,
        },
      ]);
    }
  });

  test("docker off, postgres on: postgres follows packages directly", () => {
    const { tf } = synth(context({ installers: { ...allOn, docker: { enabled: false } } }));
    expect(jobsOf(tf).vm1_postgres.depends_on).toEqual(["nubes_vc_vm_v3.vm1_vm", "sless_job.vm1_packages"]);
  });
});

describe("job contents", () => {
  const { tf, stackDir } = synth(
    context({
      runId: 7,
      sless: { runtime: "nodejs22" },
      installers: { ...allOn, docker: { enabled: true, channel: "distro", verify: "daemon" } },
      vms: [
        {
          name: "vm1",
          user: "admin",
          sshPort: 2222,
          hostKeySha256: `SHA256:${"A".repeat(43)}`,
          privateKeyPath: TEST_KEY,
        },
      ],
    }),
  );
  const jobs = jobsOf(tf);

  test("the platform contract: name, runtime, entrypoint, source_dir, run_id", () => {
    for (const [key, job] of Object.entries<any>(jobs)) {
      expect(job.name).toBe(`vm1-install-${key.replace("vm1_", "")}`);
      expect(job.runtime).toBe("nodejs22");
      expect(job.entrypoint).toBe("handler.install");
      expect(job.source_dir).toMatch(/^assets\//);
      expect(job.run_id).toBe(7);
    }
  });

  test("env_vars: address from state_out_flat, user, port, pin, and the key read by file() at apply time", () => {
    expect(jobs.vm1_packages.env_vars).toEqual({
      VM_IP: '${nubes_vc_vm_v3.vm1_vm.state_out_flat["externalConnect"]}',
      SSH_USER: "admin",
      SSH_PORT: "2222",
      SSH_HOST_KEY_SHA256: `SHA256:${"A".repeat(43)}`,
      SSH_HOST_KEY_SOURCE: "pin",
      // Relative to the stack folder, where Terraform runs: the same file wherever the project is copied.
      SSH_KEY: `\${sensitive(file("${path.relative(stackDir, path.resolve(PROJECT_ROOT, TEST_KEY))}"))}`,
      SSH_KEY_SETTING: `vms[vm1].privateKeyPath (${TEST_KEY})`,
    });
  });

  test("event_json carries each installer's settings; the password only as var.pg_password in postgres", () => {
    // time_budget_sec: the job's wait_timeout_sec less the runner's margin; every inner limit is cut to it.
    expect(JSON.parse(jobs.vm1_packages.event_json)).toEqual({
      packages: ["git", "curl", "htop", "jq", "unzip"],
      update: true,
      state: "present",
      time_budget_sec: 585,
    });
    expect(jobs.vm1_packages.wait_timeout_sec).toBe(600);
    // Later installers on a VM take the lists the one before refreshed as fresh.
    expect(JSON.parse(jobs.vm1_docker.event_json)).toEqual({
      cache_valid_sec: 900,
      compose: true,
      channel: "distro",
      repo_url: "https://download.docker.com/linux",
      repo_key_fingerprint: ["9DC858229FC7DD38854AE2D88D81803C0EBFCD88"],
      verify: "daemon",
      log_rotation: true,
      log_max_size: "10m",
      log_max_file: 3,
      registry_mirrors: [],
      daemon_config: {},
      update: true,
      state: "present",
      time_budget_sec: 885,
    });
    expect(JSON.parse(jobs.vm1_packages.event_json).cache_valid_sec).toBeUndefined();
    const pg = jobs.vm1_postgres.event_json as string;
    expect(pg).toMatch(/^\$\{jsonencode\(\{/);
    expect(pg).toContain('"cache_valid_sec" = 900');
    expect(pg).toContain('"db_password" = var.pg_password');
    for (const kv of [
      '"db_name" = "myapp"',
      '"db_user" = "app_user"',
      '"listen_addresses" = "localhost"',
      '"allow_remote" = false',
      '"allowed_cidrs" = ["0.0.0.0/0"]',
      '"repo_key_fingerprint" = ["B97B0AFCAA1A47F044F244A07FCC7D46ACCC4CF8"]',
    ])
      expect(pg).toContain(kv);
    expect(jobs.vm1_packages.event_json).not.toContain("password");
    expect(jobs.vm1_docker.event_json).not.toContain("password");
    // Never Terraform's prompt for it (a run without a terminal would wait for ever): "" is refused by name.
    expect(tf.variable.pg_password).toEqual({
      description: "install-postgres's db_password (TF_VAR_pg_password)",
      sensitive: true,
      type: "string",
      default: "",
      validation: [
        {
          condition: '${var.pg_password != ""}',
          error_message:
            "vm-install: TF_VAR_pg_password is not set (install-postgres's db_password); export TF_VAR_pg_password=... and run the command again.",
        },
      ],
    });
    // Its length is checked at plan time, before any job runs, by a precondition: the message names the
    // variable, never the value (a validation block's error would print the value).
    expect(tf.resource.terraform_data.pg_password_check.lifecycle.precondition).toEqual([
      {
        condition: "${length(var.pg_password) >= 12}",
        error_message:
          "TF_VAR_pg_password (install-postgres's db_password) is shorter than 12 characters; set a longer one. The value is not shown.",
      },
    ]);
  });

  test("a VM's sshRetry reaches every job's event as the handlers' ssh key", () => {
    const { tf: withRetry } = synth(
      context({ vms: [{ name: "vm1", sshRetry: { attempts: 6, delaySec: 5, budgetSec: 300 } }] }),
    );
    expect(JSON.parse(jobsOf(withRetry).vm1_packages.event_json).ssh).toEqual({
      attempts: 6,
      delay_sec: 5,
      budget_sec: 300,
    });
    expect(JSON.parse(jobs.vm1_packages.event_json).ssh).toBeUndefined();
  });

  test("a VM's aptProxy reaches every enabled installer's event as apt_proxy; without it, none", () => {
    const installers = { docker: { enabled: true }, postgres: { enabled: true, passwordVariable: "pg_password" } };
    const { tf: proxied } = synth(
      context({ installers, vms: [{ name: "vm1", aptProxy: "http://10.0.0.5:3142" }, { name: "vm2" }] }),
    );
    // Plain JSON, or HCL's jsonencode where a secret is merged in (postgres): the key and value either way.
    const proxyOf = (event: string) =>
      event.startsWith("${jsonencode(")
        ? /"apt_proxy" = "([^"]*)"/.exec(event)?.[1]
        : (JSON.parse(event).apt_proxy as string | undefined);
    const events = Object.entries(jobsOf(proxied)).map(
      ([name, job]) => [name, proxyOf((job as { event_json: string }).event_json)] as const,
    );
    expect(events.map(([n]) => n).sort()).toEqual([
      "vm1_docker",
      "vm1_packages",
      "vm1_postgres",
      "vm2_docker",
      "vm2_packages",
      "vm2_postgres",
    ]);
    for (const [name, proxy] of events)
      expect([name, proxy]).toEqual([name, name.startsWith("vm1_") ? "http://10.0.0.5:3142" : undefined]);
  });

  test("tokens are sensitive variables wired into the providers", () => {
    expect(tf.provider.nubes[0].api_token).toBe("${var.nubes_api_token}");
    expect(tf.provider.sless[0].token).toBe("${var.sless_token}");
    expect(tf.variable.nubes_api_token.sensitive).toBe(true);
    expect(tf.variable.sless_token.sensitive).toBe(true);
  });

  test("provider sources and versions come from settings", () => {
    const { tf: custom } = synth(
      context({
        nubes: { vdcUid: "v", nsxtUid: "n", providerSource: "example.org/x/nubes", providerVersion: "~> 2.1" },
        sless: { providerSource: "example.org/x/sless", providerVersion: "0.1.62" },
      }),
    );
    expect(custom.terraform.required_providers).toEqual({
      nubes: { source: "example.org/x/nubes", version: "~> 2.1" },
      sless: { source: "example.org/x/sless", version: "0.1.62" },
    });
  });

  test("no sless.providerVersion: any version, spelled as a constraint (cdktf deploy refuses a provider without one)", () => {
    const { tf } = synth(context({}));
    expect(tf.terraform.required_providers.sless).toEqual({
      source: "sless.kube5s.ru/sless/sless",
      version: ">= 0.0.0",
    });
  });

  test("a fixed address or internalConnect replaces externalConnect", () => {
    const { tf: fixed } = synth(
      context({
        vms: [
          { name: "a", address: "203.0.113.5" },
          { name: "b", addressKey: "internalConnect" },
        ],
      }),
    );
    expect(jobsOf(fixed).a_packages.env_vars.VM_IP).toBe("203.0.113.5");
    expect(jobsOf(fixed).b_packages.env_vars.VM_IP).toBe('${nubes_vc_vm_v3.b_vm.state_out_flat["internalConnect"]}');
    expect(fixed.output.a_address.value).toBe("203.0.113.5");
  });

  test("vApp and VM: sizing, ports, explicit delete_mode", () => {
    expect(tf.resource.nubes_vapp.vm1_vapp).toMatchObject({
      vapp_name: "vm-install-vm1",
      vdc_uid: "vdc-1",
      nsxt_uid: "nsxt-1",
      delete_mode: "delete",
      resume_if_exists: true,
    });
    expect(tf.resource.nubes_vc_vm_v3.vm1_vm).toMatchObject({
      vapp_uid: "${nubes_vapp.vm1_vapp.id}",
      vm_cpu: 2,
      vm_ram: 2,
      vm_disk: 20,
      image_vm: "Ubuntu_22-20G",
      user_login: "admin",
      access_port_list: '["22"]',
      need_add_zabbix_template: false,
      delete_mode: "delete",
    });
  });
});

describe("two VMs", () => {
  const { tf } = synth(
    context({
      installers: allOn,
      vms: [
        { name: "web", hostKeys: "first-contact" },
        { name: "db", hostKeys: "first-contact", installers: { docker: { enabled: false } } },
      ],
    }),
  );

  test("each VM has its own vApp, VM, jobs and outputs; job names unique per VM", () => {
    expect(Object.keys(tf.resource.nubes_vapp).sort()).toEqual(["db_vapp", "web_vapp"]);
    expect(Object.keys(tf.resource.nubes_vc_vm_v3).sort()).toEqual(["db_vm", "web_vm"]);
    expect(Object.keys(jobsOf(tf)).sort()).toEqual([
      "db_host_key_probe",
      "db_packages",
      "db_postgres",
      "web_docker",
      "web_host_key_probe",
      "web_packages",
      "web_postgres",
    ]);
    const names = Object.values<any>(jobsOf(tf)).map((j) => j.name);
    expect(new Set(names).size).toBe(names.length);
    expect(tf.output.db_docker_result.value).toBe("skipped");
    expect(tf.output.web_docker_result.value).toBe("${sless_job.web_docker.message}");
  });

  test("jobs of different VMs are independent: no chain crosses VMs", () => {
    for (const [key, job] of Object.entries<any>(jobsOf(tf))) {
      const vm = key.split("_")[0];
      for (const dep of job.depends_on) expect(dep).toMatch(new RegExp(`\\.${vm}_`));
    }
    expect(jobsOf(tf).db_postgres.depends_on).toEqual(["nubes_vc_vm_v3.db_vm", "sless_job.db_packages"]);
  });

  test("one password variable shared by both VMs", () => {
    expect(Object.keys(tf.variable).sort()).toEqual([
      "accepted_host_keys",
      "nubes_api_token",
      "pg_password",
      "sless_token",
    ]); // accepted_host_keys: npm run trust;
  });
});

describe("every synthesized resource conforms to the provider schema JSON", () => {
  const typeOk = (type: unknown, value: unknown): boolean => {
    if (typeof value === "string" && value.startsWith("${")) return true; // an expression: typed by Terraform
    if (type === "string") return typeof value === "string";
    if (type === "number") return typeof value === "number";
    if (type === "bool") return typeof value === "boolean";
    if (Array.isArray(type) && type[0] === "map")
      return typeof value === "object" && value !== null && Object.values(value).every((v) => typeOk(type[1], v));
    return false;
  };
  const check = (block: any, body: Record<string, unknown>, where: string): string[] => {
    const problems: string[] = [];
    const attrs = block.attributes as Record<string, any>;
    for (const [name, value] of Object.entries(body)) {
      if (["//", "depends_on", "provider", "count", "for_each", "lifecycle"].includes(name)) continue;
      const attr = attrs[name];
      if (!attr) problems.push(`${where}.${name}: not in the schema`);
      else if (attr.computed && !attr.optional && !attr.required)
        problems.push(`${where}.${name}: computed only, must not be set`);
      else if (!typeOk(attr.type, value))
        problems.push(`${where}.${name}: ${JSON.stringify(value)} is not ${JSON.stringify(attr.type)}`);
    }
    for (const [name, attr] of Object.entries(attrs))
      if (attr.required && !(name in body)) problems.push(`${where}.${name}: required, missing`);
    return problems;
  };

  test.each([
    ["defaults", context()],
    [
      "everything on, two VMs, every optional setting",
      context({
        installers: allOn,
        nubes: { vdcUid: "v", nsxtUid: "n", endpoint: "https://api.nubes.example" },
        vms: [
          { name: "a", hostKeySha256: `SHA256:${"B".repeat(43)}` },
          { name: "b", address: "10.1.2.3" },
        ],
      }),
    ],
  ])("%s", (_label, ctx) => {
    const { tf } = synth(ctx);
    const problems: string[] = [];
    const schemas: Record<string, any> = { ...nubesSchema.resource_schemas, ...slessSchema.resource_schemas };
    let count = 0;
    for (const [type, resources] of Object.entries<any>(tf.resource)) {
      if (type === "terraform_data") continue; // Terraform's own built-in, not a provider's
      expect(schemas[type]).toBeDefined();
      for (const [name, body] of Object.entries<any>(resources)) {
        problems.push(...check(schemas[type].block, body, `${type}.${name}`));
        count++;
      }
    }
    problems.push(...check(nubesSchema.provider.block, tf.provider.nubes[0], "provider.nubes"));
    problems.push(...check(slessSchema.provider.block, tf.provider.sless[0], "provider.sless"));
    expect(problems).toEqual([]);
    expect(count).toBeGreaterThanOrEqual(3);
  });

  test("the checker itself catches an unknown, a missing and a mistyped attribute", () => {
    const block = slessSchema.resource_schemas.sless_job.block;
    expect(check(block, { name: "x", runtime: 1, entrypoint: "e", colour: "red" }, "j")).toEqual([
      'j.runtime: 1 is not "string"',
      "j.colour: not in the schema",
      "j.source_dir: required, missing",
    ]);
  });
});

describe("state backends", () => {
  let stackDir = "";
  const backendOf = (backend?: Record<string, unknown>) => {
    const out = synth(
      context({ ...(backend ? { backend } : {}), vms: [{ name: "vm1", kind: "existing", address: "192.0.2.1" }] }),
    );
    stackDir = out.stackDir;
    return out.tf.terraform.backend;
  };

  test("local by default: the state beside the project, named relative to the stack folder", () => {
    expect(backendOf()).toEqual({
      local: { path: path.relative(stackDir, path.join(PROJECT_ROOT, "terraform.vm-install.tfstate")) },
    });
  });

  test("pg: the schema only; the connection string stays in PG_CONN_STR", () => {
    expect(backendOf({ type: "pg", schemaName: "vm_install" })).toEqual({ pg: { schema_name: "vm_install" } });
  });

  test("s3-compatible: bucket, key, region, endpoint, encrypted, locked by a lock file; no credential", () => {
    expect(
      backendOf({
        type: "s3",
        bucket: "tf-state",
        key: "vm-install/terraform.tfstate",
        region: "ru-1",
        endpoint: "https://s3.example.net",
        usePathStyle: true,
      }),
    ).toEqual({
      s3: {
        bucket: "tf-state",
        key: "vm-install/terraform.tfstate",
        region: "ru-1",
        encrypt: true,
        endpoints: { s3: "https://s3.example.net" },
        skip_credentials_validation: true,
        skip_region_validation: true,
        skip_requesting_account_id: true,
        skip_metadata_api_check: true,
        use_path_style: true,
        use_lockfile: true,
      },
    });
  });
});

describe("template syntax", () => {
  test("a project folder whose path holds ${ or %{ is refused: its paths land in the configuration", () => {
    for (const name of ['proj-${file("x")}', "proj-%{if true}"]) {
      const dir = path.join(tempDir("tpl"), name);
      fs.mkdirSync(dir);
      const config = parseConfig(context({ vms: [{ name: "vm1", kind: "existing", address: "192.0.2.1" }] }));
      expect(() => new VmInstallStack(new App({ outdir: tempDir("out") }), "s", { config, baseDir: dir })).toThrow(
        /the project folder .* contains "\$\{" or "%\{", which Terraform would read as template syntax/,
      );
    }
  });
});

describe("through main.ts, as cdktf runs it", () => {
  test("cdktf.out names no absolute path of this machine: every path is relative to the stack folder", () => {
    for (const jobTarget of ["sless", "local"]) {
      const ctx = context({
        jobTarget,
        installers: allOn,
        vms: [{ name: "vm1" }, { name: "h2", kind: "existing", address: "192.0.2.2" }],
      });
      const { outdir } = synthApp(ctx);
      const roots = [outdir, PROJECT_ROOT, os.tmpdir(), process.execPath];
      for (const file of filesUnder(outdir).filter((f) => !f.includes(`${path.sep}assets${path.sep}`))) {
        const text = fs.readFileSync(file, "utf8");
        // An absolute path starts a JSON string, a word of a command line, or a file("...") argument.
        const absolute = [...text.matchAll(/(?:^|["'( ]|\\")(\/(?:work|tmp|usr|root|home|run|var)\/[^"' )\\]*)/g)].map(
          (m) => m[1],
        );
        expect({ file: path.relative(outdir, file), absolute }).toEqual({
          file: path.relative(outdir, file),
          absolute: [],
        });
        for (const root of roots) expect(text.includes(`"${root}`)).toBe(false);
      }
    }
  });

  test("no secret value appears in any file under cdktf.out", () => {
    const dir = tempDir("secrets");
    // A real key (synth reads it to check it); its body's middle line is what must not leak.
    const keyText = fs.readFileSync(testKeyPair().privateKeyPath, "utf8");
    fs.writeFileSync(path.join(dir, "vm_key"), keyText, { mode: 0o600 });
    fs.copyFileSync(testKeyPair().publicKeyPath, path.join(dir, "vm_key.pub"));
    const secrets = {
      TF_VAR_nubes_api_token: "SENTINEL-NUBES-7a1",
      TF_VAR_sless_token: "SENTINEL-SLESS-9b2",
      TF_VAR_pg_password: "SENTINEL-PG-'$\\ 3c3",
    };
    const { outdir } = synthApp(
      context({
        installers: allOn,
        vms: [{ name: "vm1", privateKeyPath: path.join(dir, "vm_key"), publicKeyPath: path.join(dir, "vm_key.pub") }],
      }),
      { env: { ...secrets, NUBES_API_TOKEN: "SENTINEL-NUBES-ENV-4d4" } },
    );
    const files = filesUnder(outdir);
    expect(files.length).toBeGreaterThan(3);
    const needles = [...Object.values(secrets), "SENTINEL-NUBES-ENV-4d4", ...keyText.split("\n").slice(3, 5)];
    for (const file of files) {
      const text = fs.readFileSync(file, "utf8");
      for (const needle of needles) expect({ file, found: text.includes(needle) }).toEqual({ file, found: false });
    }
    // ...while the references to them are there.
    const tf = fs.readFileSync(path.join(outdir, "stacks", "vm-install", "cdk.tf.json"), "utf8");
    expect(tf).toContain("var.pg_password");
    // Given absolute in cdktf.json, so written absolute.
    expect(tf).toContain(`file(\\"${path.join(dir, "vm_key")}\\")`);
  });

  test("synth --hcl shows every attribute of every block", () => {
    const ctx = context({ installers: allOn, vms: [{ name: "vm1", hostKeySha256: `SHA256:${"C".repeat(43)}` }] });
    const { outdir } = synthApp(ctx, { hcl: true });
    const hcl = fs.readFileSync(path.join(outdir, "stacks", "vm-install", "cdk.tf"), "utf8");
    const { tf } = synth(ctx);
    let checked = 0;
    for (const [type, resources] of Object.entries<any>(tf.resource)) {
      for (const [name, body] of Object.entries<any>(resources)) {
        const start = hcl.indexOf(`resource "${type}" "${name}" {`);
        expect(start).toBeGreaterThanOrEqual(0);
        // Up to the next top-level block (the app writes HCL unformatted: nested braces close at column 0 too).
        const rest = hcl.slice(start + 1).search(/\n(resource|output|variable|provider|terraform|data) /);
        const block = hcl.slice(start, rest < 0 ? undefined : start + 1 + rest);
        for (const attr of Object.keys(body).filter((a) => a !== "//")) {
          expect({
            block: `${type}.${name}`,
            attr,
            present: new RegExp(`\\n\\s*${attr}\\s*(=|\\{)`).test(block),
          }).toEqual({
            block: `${type}.${name}`,
            attr,
            present: true,
          });
          checked++;
        }
        for (const [envName] of Object.entries(body.env_vars ?? {}))
          expect(block).toMatch(new RegExp(`\\n\\s*${envName}\\s*=`));
      }
    }
    for (const name of Object.keys(tf.output)) expect(hcl).toContain(`output "${name}" {`);
    for (const name of Object.keys(tf.variable))
      expect(hcl).toMatch(new RegExp(`variable "${name}" \\{[^}]*sensitive\\s*= true`));
    expect(hcl).toMatch(/provider "nubes" \{\n\s*api_token\s*= \(var\.nubes_api_token\)/);
    expect(hcl).toMatch(
      /provider "sless" \{\n\s*endpoint\s*= "https:\/\/sless\.kube5s\.ru"\n\s*token\s*= \(var\.sless_token\)/,
    );
    expect(checked).toBeGreaterThan(40);
  });

  test("a bad configuration fails the app with one message per problem", () => {
    let stderr = "";
    try {
      synthApp(context({ vms: [{ name: "vm1", cpu: 0, installers: { packages: { packages: ["git;id"] } } }] }));
    } catch (err) {
      stderr = String((err as { stderr?: string }).stderr);
    }
    expect(stderr).toContain("vm-install: invalid configuration in cdktf.json context.vmInstall: 2 problems:");
    expect(stderr).toContain("  - vms[0].cpu: expected a whole number from 1 to 64, got number 0");
    expect(stderr).toMatch(
      / {2}- vms\[0\]\.installers\.packages\.packages\[0\]: "git;id" is not a Debian package name/,
    );
  });

  test("a private key file others can read fails the synth with OpenSSH's refusal", () => {
    const keyFile = path.join(tempDir("key"), "vm_key");
    fs.copyFileSync(testKeyPair().privateKeyPath, keyFile);
    fs.chmodSync(keyFile, 0o640);
    const ctx = context({ vms: [{ name: "vm1", kind: "existing", address: "192.0.2.1", privateKeyPath: keyFile }] });
    let stderr = "";
    try {
      synthApp(ctx);
    } catch (err) {
      stderr = String((err as { stderr?: string }).stderr);
    }
    expect(stderr).toContain(
      `vms[vm1].privateKeyPath (${keyFile}): UNPROTECTED PRIVATE KEY FILE! Permissions 0640 for '${keyFile}' are too open.`,
    );
    fs.chmodSync(keyFile, 0o600);
    expect(() => synthApp(ctx)).not.toThrow();
  });

  test("risky but allowed settings are named at synth as warnings (cdktf annotations), safe ones are not", () => {
    const warnings = (ctx: Record<string, unknown>) => {
      const { outdir } = synthApp(ctx);
      const manifest = JSON.parse(fs.readFileSync(path.join(outdir, "manifest.json"), "utf8"));
      return Object.values<any>(manifest.stacks).flatMap((stack) =>
        stack.annotations.filter((a: any) => a.level === "@cdktf/warn").map((a: any) => a.message),
      );
    };
    const risky = warnings(
      context({
        nubes: { vdcUid: "vdc", nsxtUid: "nsxt", deleteMode: "state_only" },
        vms: [{ name: "vm1", hostKeys: "first-contact" }],
        installers: {
          docker: { enabled: true, repoUrl: "http://mirror.example/docker" },
          postgres: {
            enabled: true,
            passwordVariable: "pg_password",
            listenAddresses: "*",
            allowRemote: true,
            allowedCidrs: ["10.0.0.0/8", "0.0.0.0/0"],
          },
        },
      }),
    );
    expect(risky).toEqual([
      expect.stringMatching(
        /^backend "local" with jobTarget "sless": terraform\.vm-install\.tfstate and its \.backup, beside cdktf\.json, will hold in clear text/,
      ),
      expect.stringMatching(
        /^vms\[vm1\]: no host key pin \(hostKeySha256\) and strictHostKeys off: the first contact's key is trusted as it comes/,
      ),
      expect.stringMatching(
        /^vms\[vm1\]\.installers\.postgres\.allowedCidrs: 0\.0\.0\.0\/0 admits every address to database myapp as app_user/,
      ),
      expect.stringMatching(
        /^vms\[vm1\]\.installers\.docker\.repoUrl: http:\/\/mirror\.example\/docker is plain http: accepted only because the repository key's fingerprint is checked/,
      ),
      'nubes.deleteMode: "state_only": cdktf destroy forgets vm1 and leaves it running (and billed); use "delete" or "suspend"',
    ]);
    const safe = warnings(
      context({
        backend: { type: "pg" },
        vms: [{ name: "vm1", hostKeySha256: `SHA256:${"A".repeat(43)}` }],
        installers: {
          postgres: {
            enabled: true,
            passwordVariable: "pg_password",
            listenAddresses: "*",
            allowRemote: true,
            allowedCidrs: ["10.0.0.0/8"],
          },
        },
      }),
    );
    expect(safe).toEqual([]);
  });

  test("sless with the local backend: the warning names, per VM, each secret the state file will hold in clear text, and where to keep it instead", () => {
    const ctx = (patch: Record<string, unknown>) =>
      parseConfig(
        context({
          installers: { postgres: { enabled: true, passwordVariable: "pg_password" } },
          vms: [
            { name: "vm1" },
            {
              name: "db2",
              hostKeys: "first-contact",
              privateKeyPath: "keys/db2",
              installers: { postgres: { passwordVariable: "db2_password" } },
            },
            { name: "bare", installers: { packages: { enabled: false }, postgres: { enabled: false } } },
            {
              name: "old",
              hostKeys: "first-contact",
              installers: { packages: { enabled: false }, postgres: { enabled: false } },
            },
          ],
          ...patch,
        }),
      );
    // Derived from the configuration: each VM's key file and its installers' secret fields with their
    // variables, the host key delivered to a Nubes VM (whatever its jobs); a first-contact VM that runs no
    // job (only the key-less host-key probe, if that) holds nothing.
    expect(secretsInState(ctx({}))).toEqual([
      "vms[vm1]: the SSH private key vm_key, the host private key delivered to it, install-postgres's db_password (TF_VAR_pg_password)",
      "vms[db2]: the SSH private key keys/db2, install-postgres's db_password (TF_VAR_db2_password)",
      "vms[bare]: the host private key delivered to it",
    ]);
    expect(localStateSecretsWarning(ctx({}))).toBe(
      'backend "local" with jobTarget "sless": terraform.vm-install.tfstate and its .backup, beside cdktf.json, will hold in clear text ' +
        "vms[vm1]: the SSH private key vm_key, the host private key delivered to it, install-postgres's db_password (TF_VAR_pg_password); " +
        "vms[db2]: the SSH private key keys/db2, install-postgres's db_password (TF_VAR_db2_password); " +
        "vms[bare]: the host private key delivered to it. " +
        "bin/cdktf keeps them owner-only (0600), but whoever reads the file or a copy of it (a backup, a shared folder, git) has those secrets; " +
        'keep the state in an encrypted, access-controlled backend: "backend": {"type": "s3", ...} (encrypted at rest) or {"type": "pg"} over TLS, ' +
        'or use "jobTarget": "local", which keeps the SSH key and the passwords out of state (docs/secrets.md)',
    );
    // Without a postgres job, the key alone.
    expect(
      localStateSecretsWarning(ctx({ installers: {}, vms: [{ name: "vm1", hostKeys: "first-contact" }] })),
    ).toContain("in clear text vms[vm1]: the SSH private key vm_key. bin/cdktf");
    // Shared backends and the local target: no warning.
    expect(localStateSecretsWarning(ctx({ backend: { type: "pg" } }))).toBeUndefined();
    expect(
      localStateSecretsWarning(
        ctx({ backend: { type: "s3", bucket: "states", key: "vm-install/tfstate", region: "eu-1" } }),
      ),
    ).toBeUndefined();
    expect(localStateSecretsWarning(ctx({ jobTarget: "local" }))).toBeUndefined();
  });
});
