// The stack's PostgreSQL CA (installers.postgres.tls "stack-ca") as synthesized: the CA file the app makes
// (one, whatever runs at once), the output clients take as sslrootcert, and the key's way to the jobs (read
// from the file at plan or by the runner), never in cdktf.out. End to end: e2e/plain-cdktf-stack-ca.test.ts.
import { X509Certificate } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { App } from "../lib/construct/cdktf";
import { parseConfig } from "../lib/construct/config/parse";
import { resultsFolder } from "../lib/construct/jobs/secret-trigger";
import {
  caFile,
  knownCertificateNames,
  readCaFile,
  sharedCertificateNames,
  writeStackCa,
} from "../lib/construct/postgres-ca";
import { VmInstallStack } from "../lib/construct/stack";
import { filesUnder, tempDir, withTestKeys } from "./support/synth";

const postgres = (over: Record<string, unknown> = {}) => ({
  enabled: true,
  passwordVariable: "pg_password",
  tls: "stack-ca",
  ...over,
});
const ctx = (over: Record<string, unknown> = {}, target: "sless" | "local" = "sless") =>
  target === "sless"
    ? {
        nubes: { vdcUid: "vdc-1", nsxtUid: "nsxt-1" },
        vms: [{ name: "vm1" }],
        installers: { postgres: postgres(over) },
      }
    : {
        jobTarget: "local",
        vms: [{ name: "db", kind: "existing", address: "192.0.2.1" }],
        installers: { postgres: postgres(over) },
      };

function synthIn(project: string, context: Record<string, unknown>) {
  const config = parseConfig(withTestKeys(context, project));
  const outdir = path.join(project, "cdktf.out");
  const app = new App({ outdir });
  new VmInstallStack(app, config.stackName, { config, baseDir: project });
  app.synth();
  const tf = JSON.parse(fs.readFileSync(path.join(outdir, "stacks", config.stackName, "cdk.tf.json"), "utf8"));
  return { config, outdir, tf };
}

describe("the stack's PostgreSQL CA", () => {
  test("one owner-only CA file per stack, a CA that signs certificates only, never replaced once whole", async () => {
    const project = tempDir("pgca");
    const config = parseConfig(ctx());
    const file = caFile(resultsFolder(project, config.stackName));
    expect(await writeStackCa(project, config)).toBe(file);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    const ca = readCaFile(file)!;
    const cert = new X509Certificate(ca.cert);
    expect(cert.ca).toBe(true);
    expect(cert.checkPrivateKey(require("node:crypto").createPrivateKey(ca.key))).toBe(true);
    expect(await writeStackCa(project, config)).toBeUndefined();
    expect(readCaFile(file)).toEqual(ca);
    // No VM asks for it: no file.
    const none = tempDir("pgca-none");
    const debian = parseConfig(ctx({ tls: "debian" }));
    expect(await writeStackCa(none, debian)).toBeUndefined();
    expect(fs.existsSync(caFile(resultsFolder(none, debian.stackName)))).toBe(false);
  });

  test("synths at once make one CA: each is handed the same file, and no stray file is left", async () => {
    const project = tempDir("pgca-race");
    const config = parseConfig(ctx());
    const made = await Promise.all(Array.from({ length: 6 }, () => writeStackCa(project, config)));
    const file = caFile(resultsFolder(project, config.stackName));
    expect(made.filter((m) => m === file)).toHaveLength(1);
    expect(readCaFile(file)).toBeDefined();
    expect(fs.readdirSync(path.dirname(file))).toEqual(["postgres-ca.json"]);
  });

  test("a CA file that is not whole is refused, naming it, and left as it is", async () => {
    const project = tempDir("pgca-torn");
    const config = parseConfig(ctx());
    const file = caFile(resultsFolder(project, config.stackName));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, '{"cert": "-----BEGIN CERTIFICATE-----"}');
    await expect(writeStackCa(project, config)).rejects.toThrow(
      `${file} is not a whole PostgreSQL CA (cert and key): restore it, or move it away to make a new CA`,
    );
    expect(fs.readFileSync(file, "utf8")).toBe('{"cert": "-----BEGIN CERTIFICATE-----"}');
  });

  test.each(["sless", "local"] as const)(
    "%s target: Terraform reads the CA file at plan, no variable carries it, and no byte of the key or certificate body is in cdktf.out",
    async (target) => {
      const project = tempDir(`pgca-${target}`);
      const config = parseConfig(ctx({}, target));
      await writeStackCa(project, config);
      const ca = readCaFile(caFile(resultsFolder(project, config.stackName)))!;
      const { tf, outdir } = synthIn(project, ctx({}, target));
      const file = "../../../.vm-install/vm-install/postgres-ca.json";
      expect(tf.output.postgres_ca_cert.value).toBe(`\${try(jsondecode(file("${file}")).cert, "")}`);
      expect(Object.keys(tf.variable).filter((name) => name.includes("tls_ca"))).toEqual([]);
      // A missing or torn file stops the plan by name, not with Terraform's own file() error.
      const check = tf.resource.terraform_data.postgres_ca_check.lifecycle.precondition[0];
      expect(check.condition).toContain(`try(jsondecode(file("\${path.module}/${file}")).key, "") != ""`);
      expect(check.error_message).toContain(`the stack's PostgreSQL CA file ${file} (relative to the stack folder)`);
      const synthesized = filesUnder(outdir)
        .map((f) => fs.readFileSync(f, "latin1"))
        .join("\n");
      const body = (pem: string) => pem.split("\n").filter((l) => l.length > 20 && !l.startsWith("-----"));
      for (const line of [...body(ca.key), ...body(ca.cert)]) expect(synthesized).not.toContain(line);
      if (target === "sless") {
        expect(tf.resource.sless_job.vm1_postgres.event_json).toContain(
          `"tls_ca_key" = sensitive(try(jsondecode(file("${file}")).key, ""))`,
        );
      } else {
        const data = tf.resource.terraform_data.db_postgres;
        const command = String(data.provisioner[0]["local-exec"].command);
        expect(command).toContain(`--secret-file 'tls_ca_key=${file}#key'`);
        expect(command).toContain(`--secret-file 'tls_ca_cert=${file}#cert'`);
        expect(command).not.toContain("postgres_tls_ca");
        // A new CA reruns the job: its certificate's hash is a trigger; the key is in none.
        expect(data.triggers_replace.stack_ca).toBe(`\${sha256(try(jsondecode(file("${file}")).cert, ""))}`);
        expect(JSON.stringify(data.triggers_replace)).not.toContain(".key");
      }
    },
  );

  test("tls other than stack-ca: no output, no CA variables", () => {
    const { tf } = synthIn(tempDir("pgca-debian"), ctx({ tls: "debian" }));
    expect(tf.output.postgres_ca_cert).toBeUndefined();
    expect(tf.variable.postgres_tls_ca_key).toBeUndefined();
  });

  test('tls "given" needs both variables; tlsValidDays must exceed tlsRenewDays', () => {
    expect(() => parseConfig(ctx({ tls: "given" }))).toThrow(/tlsCertVariable, tlsKeyVariable: required/);
    expect(() => parseConfig(ctx({ tlsValidDays: 30, tlsRenewDays: 30 }))).toThrow(/tlsValidDays: 30 is not more/);
    const { tf } = synthIn(
      tempDir("pgca-given"),
      ctx({ tls: "given", tlsCertVariable: "pg_tls_cert", tlsKeyVariable: "pg_tls_key" }),
    );
    expect(tf.variable.pg_tls_key).toMatchObject({ sensitive: true });
    expect(JSON.stringify(tf.resource.sless_job.vm1_postgres.event_json)).toContain("var.pg_tls_key");
    expect(tf.output.postgres_ca_cert).toBeUndefined();
  });

  test("a name two stack-ca VMs are both given is named at synth (any case, any IPv6 form); tls debian's are not", () => {
    const local = (vms: object[]) =>
      parseConfig({
        jobTarget: "local",
        vms,
        installers: { postgres: { enabled: true, passwordVariable: "pg_password" } },
      });
    const vm = (name: string, address: string, pg: Record<string, unknown>) => ({
      name,
      kind: "existing",
      address,
      installers: { postgres: { tls: "stack-ca", ...pg } },
    });
    const shared = local([
      vm("a", "192.0.2.1", { tlsNames: ["db.example.test"], listenAddresses: "2001:db8::5" }),
      vm("b", "192.0.2.2", { tlsNames: ["DB.example.test"], listenAddresses: "2001:db8:0:0:0:0:0:5,localhost" }),
      vm("c", "192.0.2.1", { tls: "debian", tlsNames: ["db.example.test"] }),
      vm("d", "192.0.2.4", { listenAddresses: "*", tlsNames: ["d.example.test"] }),
    ]);
    expect(knownCertificateNames(shared.vms[3])).toEqual(["192.0.2.4", "d.example.test"]);
    expect(sharedCertificateNames(shared)).toEqual([
      expect.stringMatching(/^vms\[a\], vms\[b\]: each is given 2001:db8::5 \(address, listenAddresses or tlsNames\)/),
      expect.stringMatching(/^vms\[a\], vms\[b\]: each is given db\.example\.test .*give each VM names of its own/),
    ]);
    const { tf, outdir } = synthIn(tempDir("pgca-shared"), {
      jobTarget: "local",
      vms: [vm("a", "192.0.2.1", {}), vm("b", "192.0.2.1", {})],
      installers: { postgres: { enabled: true, passwordVariable: "pg_password" } },
    });
    expect(tf.output.postgres_ca_cert).toBeDefined();
    const manifest = JSON.parse(fs.readFileSync(path.join(outdir, "manifest.json"), "utf8"));
    const warns = Object.values<{ annotations: { level: string; message: string }[] }>(manifest.stacks).flatMap((st) =>
      st.annotations.filter((a) => a.level === "@cdktf/warn").map((a) => a.message),
    );
    expect(warns).toEqual(
      expect.arrayContaining([expect.stringMatching(/^vms\[a\], vms\[b\]: each is given 192\.0\.2\.1 /)]),
    );
  });
});
