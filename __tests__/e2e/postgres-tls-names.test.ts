// End-to-end (issue 30, finding 2): the stack's CA signs for the stack's names only. One sandbox, one install
// with tls "stack-ca"; then the postgres user forges "--- host" lines naming another VM into the server
// certificate file and root sets a hostile `hostname`, and the rerun's certificate names exactly the VM's
// address and tlsNames; a stack-CA certificate naming another VM (as an earlier version issued one) is
// replaced too. The names are read from outside the job: the host's openssl on the file's bytes.
import { execFileSync } from "node:child_process";
import type { Sandbox } from "../../dev/sandbox/index";
import { issueCertificate } from "../../handlers/install-postgres/tls-remote";
import { generateCa, type StackCa } from "../../lib/construct/postgres-ca";
import { describeE2E, expectSucceeded, root, runInstaller, sandboxPerSuite } from "./support/e2e";
import { FACTS } from "./support/release";

const T = 15 * 60_000;
const CONF = `/etc/postgresql/${FACTS.pgMajor}/main`;
const CERT = `${CONF}/vm-install-server.crt`;
const KEY = `${CONF}/vm-install-server.key`;
const OTHER = ["other-vm.db.internal", "10.200.99.7"];

/** The subjectAltName entries of the certificate in `file` on the VM, as the host's openssl reads them. */
async function sansOf(sb: Sandbox, file: string): Promise<string[]> {
  const pem = await root(sb, `cat ${file}`);
  const out = execFileSync("openssl", ["x509", "-noout", "-ext", "subjectAltName"], { input: pem, encoding: "utf8" });
  return out
    .split("\n")
    .slice(1)
    .join(",")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .sort();
}

/** Writes `content` into `file` as the postgres user (who owns the cluster's configuration directory). */
const asPostgres = (sb: Sandbox, file: string, content: string) =>
  sb.rootExec(`runuser -u postgres -- sh -c 'cat > ${file}'`, { input: content, timeoutMs: 30_000 });

describeE2E("install-postgres tls stack-ca: the certificate names the stack's names, never the VM's words", () => {
  let sb: Sandbox;
  let ca: StackCa;
  sandboxPerSuite((s) => (sb = s), T);
  beforeAll(async () => {
    ca = await generateCa("test stack CA");
  });

  const event = () => ({
    db_name: "namesdb",
    db_user: "names_app",
    db_password: "NamesPw1-long-enough",
    tls: "stack-ca",
    tls_names: ["db.vm-install.test"],
  });
  const job = (ev: object) =>
    runInstaller(sb, "install-postgres", ev, {
      secrets: ["NamesPw1-long-enough"],
      secretEnv: { tls_ca_cert: ca.cert, tls_ca_key: ca.key },
    });
  const stackSans = () => ["DNS:db.vm-install.test", `IP Address:${sb.address}`];
  const issuedFor = () => `issued by the stack's CA for ${sb.address}, db.vm-install.test`;

  test(
    "installed; forged --- host lines in the certificate file and a hostile hostname: reissued for the stack's names",
    async () => {
      const first = await job(event());
      expectSucceeded(first);
      expect(await sansOf(sb, CERT)).toEqual(stackSans());

      expect((await asPostgres(sb, CERT, `--- host\n${OTHER.join("\n")}\n\0--- existing\n`)).code).toBe(0);
      await root(sb, `hostname ${OTHER[0]}`);
      expect((await root(sb, "hostname")).trim()).toBe(OTHER[0]);

      const run = await job(event());
      expectSucceeded(run);
      // No PEM in the file: read as no certificate yet, issued afresh (the old code took the forged lines).
      expect(run.result.changes).toEqual([
        `server certificate for ${sb.address}, db.vm-install.test issued by the stack's CA (${CERT})`,
      ]);
      expect(await sansOf(sb, CERT)).toEqual(stackSans());
    },
    T,
  );

  test(
    "a stack-CA certificate that also names another VM (with its key) is replaced; then nothing changes",
    async () => {
      const wide = await issueCertificate({ tls_ca_cert: ca.cert, tls_ca_key: ca.key, tls_valid_days: 365 } as never, [
        sb.address,
        "db.vm-install.test",
        ...OTHER,
      ]);
      expect((await asPostgres(sb, KEY, wide.key)).code).toBe(0);
      expect((await asPostgres(sb, CERT, wide.cert)).code).toBe(0);
      expect(await sansOf(sb, CERT)).toEqual(
        [...stackSans(), "DNS:other-vm.db.internal", "IP Address:10.200.99.7"].sort(),
      );

      const line = `server certificate replaced (it also names ${OTHER.join(", ")}, which the settings do not): ${issuedFor()}`;
      const check = await job({ ...event(), check: true });
      expectSucceeded(check);
      expect(check.result.would_change).toEqual([line]);
      const run = await job(event());
      expectSucceeded(run);
      expect(run.result.changes).toEqual([line]);
      expect(await sansOf(sb, CERT)).toEqual(stackSans());
      const again = await job(event());
      expectSucceeded(again);
      expect(again.result.changes).toEqual([]);
    },
    T,
  );
});
