// End-to-end: install-postgres with tls "stack-ca" on one sandbox VM, bundled and run as a job runs. The
// proof is made from outside the job: the host's psql connects with sslmode=verify-full and the stack's
// CA certificate as sslrootcert, and is refused with another CA's certificate or a host name the
// certificate does not name. A rerun changes nothing; a certificate near expiry, or signed by another CA,
// is replaced on the next run, and a check foresees it in the same words. Host prerequisite: psql.
import { execFile, execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { generateCa, type StackCa } from "../../construct/postgres-ca";
import { issueCertificate } from "../../handlers/install-postgres/tls-remote";
import { type Sandbox, startSandbox } from "../../sandbox/index";
import { describeE2E, expectSucceeded, root, runInstaller, watchProcesses } from "./support/e2e";
import { FACTS } from "./support/release";

const T = 15 * 60_000;
const CONF = `/etc/postgresql/${FACTS.pgMajor}/main`;
const CERT = `${CONF}/vm-install-server.crt`;
const KEY = `${CONF}/vm-install-server.key`;
const PW = "TlsPw1tok-long-enough";

/** The host's psql with a connection string: verify-full against `rootCert`; `host` may differ from the address. */
function verifyFull(
  sb: Sandbox,
  rootCert: string,
  host = sb.address,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const conninfo =
    `host=${host} hostaddr=${sb.address} port=5432 user=tls_app dbname=tlsdb ` +
    `sslmode=verify-full sslrootcert=${rootCert} connect_timeout=10`;
  return new Promise((resolve) => {
    execFile(
      "psql",
      ["-X", "-w", "-At", conninfo, "-c", "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()"],
      {
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", PGPASSWORD: PW, LC_ALL: "C" },
        timeout: 30_000,
        encoding: "utf8",
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout: stdout.trim(), stderr }),
    );
  });
}

/** The PEM bodies of a key, each line long enough to be told apart from anything else. */
const keyBodyLines = (pem: string) => pem.split("\n").filter((l) => l.length > 40 && !l.startsWith("-----"));

describeE2E("install-postgres tls stack-ca on a sandbox VM: a remote verify-full client", () => {
  let sb: Sandbox;
  let ca: StackCa;
  let other: StackCa;
  let dir: string;
  const caFile = () => path.join(dir, "ca.pem");
  const otherFile = () => path.join(dir, "other-ca.pem");
  const event = (over: Record<string, unknown> = {}) => ({
    db_name: "tlsdb",
    db_user: "tls_app",
    db_password: PW,
    listen_addresses: sb.address,
    allow_remote: true,
    // The host (the remote client) and the VM itself (the job's login check connects to the listen address).
    allowed_cidrs: [`${sb.hostAddress}/32`, `${sb.address}/32`],
    tls: "stack-ca",
    tls_names: ["db.vm-install.test"],
    tls_ca_cert: ca.cert,
    tls_ca_key: ca.key,
    ...over,
  });
  const job = (ev: Record<string, unknown>) => runInstaller(sb, "install-postgres", ev, { secrets: [PW] });
  /** Nothing the job let out holds a key: not the CA's, not the server's. */
  const expectNoKeys = async (lines: string[], message: string) => {
    const out = [...lines, message].join("\n");
    const served = await root(sb, `cat ${KEY}`);
    for (const l of [...keyBodyLines(ca.key), ...keyBodyLines(served)]) expect(out).not.toContain(l);
  };
  const servedCert = async () => new X509Certificate(await root(sb, `cat ${CERT}`));

  beforeAll(async () => {
    try {
      execFileSync("psql", ["--version"], { stdio: "ignore" });
    } catch {
      throw new Error("the host needs psql for these tests: apt-get install -y postgresql-client");
    }
    [ca, other] = await Promise.all([generateCa("test stack CA"), generateCa("another CA")]);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "pg-tls-"));
    fs.writeFileSync(caFile(), ca.cert);
    fs.writeFileSync(otherFile(), other.cert);
    sb = await startSandbox();
  }, T);
  afterAll(async () => {
    await sb?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, T);

  test(
    "fresh VM: the stack's CA issues the certificate; verify-full connects; another CA and a wrong name are refused",
    async () => {
      // The CA key's lines, and the "PRIVATE KEY" marker of the server key the job sends on stdin.
      const {
        value: run,
        hits,
        polls,
      } = await watchProcesses(sb, [...keyBodyLines(ca.key), "PRIVATE KEY"], () => job(event()));
      expectSucceeded(run);
      expect(polls).toBeGreaterThan(20);
      expect(hits).toEqual([]);
      // The CA key never reaches the VM: no file there holds a line of it.
      const grep = keyBodyLines(ca.key)
        .map((l) => `-e '${l}'`)
        .join(" ");
      expect(await root(sb, `grep -rlF ${grep} /etc /var /tmp /root /home 2>/dev/null; true`)).toBe("");
      expect(run.result.changes).toEqual(
        expect.arrayContaining([
          `server certificate for ${sb.address}, ${(await root(sb, "hostname")).trim()}, db.vm-install.test ` +
            `issued by the stack's CA (${CERT})`,
          `ssl_cert_file and ssl_key_file -> ${CERT}, ${KEY} (${CONF}/conf.d/91-vm-install-tls.conf)`,
        ]),
      );
      await expectNoKeys(run.lines, run.message);
      expect((await root(sb, `stat -c '%U %a' ${KEY} ${CERT}`)).trim().split("\n")).toEqual([
        "postgres 600",
        "postgres 644",
      ]);
      const cert = await servedCert();
      expect(
        cert.checkIssued(new X509Certificate(ca.cert)) && cert.verify(new X509Certificate(ca.cert).publicKey),
      ).toBe(true);

      expect(await verifyFull(sb, caFile())).toEqual({ code: 0, stdout: "t", stderr: "" });
      expect(await verifyFull(sb, caFile(), "db.vm-install.test")).toEqual({ code: 0, stdout: "t", stderr: "" });
      const wrongCa = await verifyFull(sb, otherFile());
      expect(wrongCa.code).not.toBe(0);
      expect(wrongCa.stderr).toMatch(/certificate verify failed/);
      const wrongName = await verifyFull(sb, caFile(), "not-this-vm.test");
      expect(wrongName.code).not.toBe(0);
      expect(wrongName.stderr).toMatch(/does not match host name "not-this-vm.test"/);
    },
    T,
  );

  test(
    "rerun: nothing changes, a check foresees nothing and the certificate is the same",
    async () => {
      const before = (await servedCert()).fingerprint256;
      const check = await job(event({ check: true }));
      expectSucceeded(check);
      expect(check.result).toMatchObject({ changed: false, would_change: [] });
      const run = await job(event());
      expectSucceeded(run);
      expect(run.result.changes).toEqual([]);
      expect((await servedCert()).fingerprint256).toBe(before);
    },
    T,
  );

  test.each([
    ["near expiry", "expires", () => ca, 5],
    ["signed by another CA", "it was not signed by the stack's CA", () => other, 365],
    ["without a name of tls_names", "it does not cover db.vm-install.test", () => ca, 365],
  ])(
    "a certificate %s is replaced on the next run; a check foresees it in the same words",
    async (_what, reason, signer, days) => {
      const names = [sb.address, (await root(sb, "hostname")).trim(), "db.vm-install.test"];
      const planted = await issueCertificate(
        { ...event(), tls_ca_cert: signer().cert, tls_ca_key: signer().key, tls_valid_days: days } as never,
        reason.includes("does not cover") ? names.slice(0, 2) : names,
      );
      await sb.rootExec(`runuser -u postgres -- sh -c 'cat > ${KEY}'`, { input: planted.key, timeoutMs: 30_000 });
      await sb.rootExec(`runuser -u postgres -- sh -c 'cat > ${CERT}'`, { input: planted.cert, timeoutMs: 30_000 });
      await root(sb, `systemctl reload postgresql@${FACTS.pgMajor}-main`);
      const expiry = new Date(new X509Certificate(planted.cert).validTo).toISOString().slice(0, 10);
      const line =
        reason === "expires"
          ? `server certificate replaced (expires ${expiry}, within 30 days): issued by the stack's CA for ${names.join(", ")}`
          : `server certificate replaced (${reason}): issued by the stack's CA for ${names.join(", ")}`;

      const check = await job(event({ check: true }));
      expectSucceeded(check);
      expect(check.result.would_change).toEqual([line]);
      expect(await root(sb, `cat ${CERT}`)).toBe(planted.cert);

      const run = await job(event());
      expectSucceeded(run);
      expect(run.result.changes).toEqual([line]);
      await expectNoKeys(run.lines, run.message);
      const now = await servedCert();
      expect(new Date(now.validTo).getTime() - Date.now()).toBeGreaterThan(300 * 24 * 3600 * 1000);
      expect(await verifyFull(sb, caFile())).toEqual({ code: 0, stdout: "t", stderr: "" });
    },
    T,
  );
});
