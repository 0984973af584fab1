// End-to-end: install-postgres' server certificate on one sandbox VM, bundled and run as a job runs, the
// CA and the given pair sent as the deployed job sends them (the runner's --secret-env). Proved from outside
// the job: the host's psql connects with sslmode=verify-full and the right CA, and is refused with another CA
// or a name the certificate lacks. stack-ca: issued, kept, replaced when it goes bad; back to "debian": its
// files go and the snakeoil certificate serves; "given": a pair made here with openssl is installed, kept,
// replaced, and a pair that cannot serve is refused. Host prerequisites: psql, openssl.
import { execFile, execFileSync } from "node:child_process";
import { generateKeyPairSync, X509Certificate } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { type Sandbox, startSandbox } from "../../dev/sandbox/index";
import { issueCertificate } from "../../handlers/install-postgres/tls-remote";
import { issueServerCertificate } from "../../handlers/install-postgres/x509-issue";
import { generateCa, type StackCa } from "../../lib/construct/postgres-ca";
import { describeE2E, expectSucceeded, root, runInstaller, watchProcesses } from "./support/e2e";
import { FACTS } from "./support/release";

const T = 15 * 60_000;
const CONF = `/etc/postgresql/${FACTS.pgMajor}/main`;
const CERT = `${CONF}/vm-install-server.crt`;
const KEY = `${CONF}/vm-install-server.key`;
const DROPIN = `${CONF}/conf.d/91-vm-install-tls.conf`;
const SNAKEOIL = "/etc/ssl/certs/ssl-cert-snakeoil.pem";
const PW = "TlsPw1tok-long-enough";

/** The host's psql with `ssl` options; `host` (the name checked) may differ from the address. */
function hostPsql(
  sb: Sandbox,
  ssl: string,
  host = sb.address,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const conninfo = `host=${host} hostaddr=${sb.address} port=5432 user=tls_app dbname=tlsdb ${ssl} connect_timeout=10`;
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
const verifyFull = (sb: Sandbox, rootCert: string, host = sb.address) =>
  hostPsql(sb, `sslmode=verify-full sslrootcert=${rootCert}`, host);

/** The SHA-256 fingerprint of the certificate the server presents to the host (STARTTLS postgres). */
function presented(sb: Sandbox): string {
  const out = execFileSync(
    "sh",
    [
      "-c",
      `timeout 30 openssl s_client -connect ${sb.address}:5432 -starttls postgres </dev/null 2>/dev/null | ` +
        "openssl x509 -noout -fingerprint -sha256",
    ],
    { encoding: "utf8" },
  );
  return /Fingerprint=([0-9A-F:]+)/i.exec(out)?.[1]?.toUpperCase() ?? `none: ${out}`;
}

/** openssl on the host, in the test's own folder: a P-256 CA, or a server pair it signs for `sans`. */
function openssl(dir: string, args: string): void {
  execFileSync("openssl", args.split(" "), { cwd: dir, stdio: "pipe" });
}
const P256 = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
function opensslCa(dir: string, name: string): { cert: string; key: string; file: string } {
  fs.writeFileSync(
    path.join(dir, `${name}.ext`),
    "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\n",
  );
  openssl(dir, `req ${P256} -keyout ${name}.key -out ${name}.csr -subj /CN=${name}`);
  openssl(dir, `x509 -req -in ${name}.csr -key ${name}.key -days 90 -extfile ${name}.ext -out ${name}.crt`);
  const file = path.join(dir, `${name}.crt`);
  return { cert: fs.readFileSync(file, "utf8"), key: fs.readFileSync(path.join(dir, `${name}.key`), "utf8"), file };
}
function opensslServer(dir: string, ca: string, name: string, sans: string[]): { cert: string; key: string } {
  fs.writeFileSync(
    path.join(dir, `${name}.ext`),
    `subjectAltName=${sans.join(",")}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n` +
      "extendedKeyUsage=serverAuth\n",
  );
  openssl(dir, `req ${P256} -keyout ${name}.key -out ${name}.csr -subj /CN=${name}`);
  openssl(
    dir,
    `x509 -req -in ${name}.csr -CA ${ca}.crt -CAkey ${ca}.key -CAcreateserial -days 90 -extfile ${name}.ext -out ${name}.crt`,
  );
  const read = (ext: string) => fs.readFileSync(path.join(dir, `${name}.${ext}`), "utf8");
  return { cert: read("crt"), key: read("key") };
}

/** The PEM bodies of a key, each line long enough to be told apart from anything else. */
const keyBodyLines = (pem: string) => pem.split("\n").filter((l) => l.length > 40 && !l.startsWith("-----"));

describeE2E(
  "install-postgres tls (stack-ca, back to debian, given) on a sandbox VM: a remote verify-full client",
  () => {
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
      ...over,
    });
    /** The job, the stack's CA (tls "stack-ca") or `given` sent through the runner's --secret-env, as deployed. */
    const job = (ev: Record<string, unknown>, given?: { cert: string; key: string }) =>
      runInstaller(sb, "install-postgres", ev, {
        secrets: [PW],
        secretEnv: given
          ? { tls_cert: given.cert, tls_key: given.key }
          : ev.tls === "stack-ca"
            ? { tls_ca_cert: ca.cert, tls_ca_key: ca.key }
            : undefined,
      });
    /** Nothing the job let out holds a key: not the CA's, not the server's. */
    const expectNoKeys = async (lines: string[], message: string) => {
      const out = [...lines, message].join("\n");
      const served = await root(sb, `cat ${KEY}`);
      for (const l of [...keyBodyLines(ca.key), ...keyBodyLines(served)]) expect(out).not.toContain(l);
    };
    const servedCert = async () => new X509Certificate(await root(sb, `cat ${CERT}`));

    beforeAll(async () => {
      for (const [tool, pkg] of [
        ["psql", "postgresql-client"],
        ["openssl", "openssl"],
      ]) {
        try {
          execFileSync(
            tool,
            ["version"].map((v) => (tool === "psql" ? "--version" : v)),
            { stdio: "ignore" },
          );
        } catch {
          throw new Error(`the host needs ${tool} for these tests: apt-get install -y ${pkg}`);
        }
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
            `server certificate for ${sb.address}, db.vm-install.test issued by the stack's CA (${CERT})`,
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
        const names = [sb.address, "db.vm-install.test"];
        const planted = await issueCertificate(
          { ...event(), tls_ca_cert: signer().cert, tls_ca_key: signer().key, tls_valid_days: days } as never,
          reason.includes("does not cover") ? names.slice(0, 1) : names,
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

    test(
      'back to "debian": a check names the removal; the run removes the drop-in and both files, snakeoil serves',
      async () => {
        const removed =
          `vm-install's server certificate removed (tls "debian"): ${DROPIN}, ${CERT}, ${KEY}; ` +
          `ssl_cert_file is ${SNAKEOIL} again`;
        const debian = event({ tls: "debian", tls_names: [] });
        const check = await job({ ...debian, check: true });
        expectSucceeded(check);
        expect(check.result.would_change).toEqual([removed]);
        const left = () => root(sb, `for f in ${DROPIN} ${CERT} ${KEY}; do [ -e "$f" ] && echo "$f"; done; true`);
        expect(await left()).toBe(`${DROPIN}\n${CERT}\n${KEY}\n`);

        const run = await job(debian);
        expectSucceeded(run);
        expect(run.result.changes).toEqual([removed]);
        expect(await left()).toBe("");
        const show = await root(sb, "cd / && runuser -u postgres -- psql -X -At -c 'SHOW ssl_cert_file'");
        expect(show.trim()).toBe(SNAKEOIL);
        expect(presented(sb)).toBe(new X509Certificate(await root(sb, `cat ${SNAKEOIL}`)).fingerprint256);
        const refused = await verifyFull(sb, caFile());
        expect(refused.code).not.toBe(0);
        expect(refused.stderr).toMatch(/certificate verify failed/);
        expect(await hostPsql(sb, "sslmode=require")).toEqual({ code: 0, stdout: "t", stderr: "" });

        const again = await job(debian);
        expectSucceeded(again);
        expect(again.result.changes).toEqual([]);
      },
      T,
    );

    describe('tls "given": a pair made with openssl on the host, for the VM\'s address', () => {
      let givenCa: { cert: string; key: string; file: string };
      let pair: { cert: string; key: string };
      const given = () => event({ tls: "given" });
      beforeAll(() => {
        givenCa = opensslCa(dir, "given-ca");
        pair = opensslServer(dir, "given-ca", "server1", [`IP:${sb.address}`, "DNS:db.vm-install.test"]);
      });

      test(
        "installed: verify-full with its CA connects, the stack's CA is refused; key 0600 postgres, never in ps",
        async () => {
          const {
            value: run,
            hits,
            polls,
          } = await watchProcesses(sb, [...keyBodyLines(pair.key), "PRIVATE KEY"], () => job(given(), pair));
          expectSucceeded(run);
          // The job takes about a second here (no install): a few looks, each the whole process list.
          expect(polls).toBeGreaterThan(3);
          expect(hits).toEqual([]);
          expect(run.result.changes).toEqual([
            `server certificate installed: the given one (${CERT})`,
            `ssl_cert_file and ssl_key_file -> ${CERT}, ${KEY} (${DROPIN})`,
          ]);
          // It names the VM's address and tlsNames, the stack's names (never the VM's hostname): no warning.
          expect(run.result.warnings).toEqual([]);
          const out = [...run.lines, run.message].join("\n");
          for (const l of keyBodyLines(pair.key)) expect(out).not.toContain(l);
          expect((await root(sb, `stat -c '%U %a' ${KEY} ${CERT}`)).trim().split("\n")).toEqual([
            "postgres 600",
            "postgres 644",
          ]);
          expect(await root(sb, `cat ${CERT}`)).toBe(pair.cert);
          expect(presented(sb)).toBe(new X509Certificate(pair.cert).fingerprint256);
          expect(await verifyFull(sb, givenCa.file)).toEqual({ code: 0, stdout: "t", stderr: "" });
          expect(await verifyFull(sb, givenCa.file, "db.vm-install.test")).toEqual({
            code: 0,
            stdout: "t",
            stderr: "",
          });
          const stackCa = await verifyFull(sb, caFile());
          expect(stackCa.code).not.toBe(0);
          expect(stackCa.stderr).toMatch(/certificate verify failed/);

          const again = await job(given(), pair);
          expectSucceeded(again);
          expect(again.result.changes).toEqual([]);
        },
        T,
      );

      test(
        "a changed given certificate: a check foresees it, the run replaces the file and reloads",
        async () => {
          const next = opensslServer(dir, "given-ca", "server2", [`IP:${sb.address}`, "DNS:db.vm-install.test"]);
          const line = `server certificate replaced: the given one (${CERT})`;
          const check = await job({ ...given(), check: true }, next);
          expectSucceeded(check);
          expect(check.result.would_change).toEqual([line]);
          expect(presented(sb)).toBe(new X509Certificate(pair.cert).fingerprint256);

          const { value: run, hits } = await watchProcesses(sb, [...keyBodyLines(next.key), "PRIVATE KEY"], () =>
            job(given(), next),
          );
          expectSucceeded(run);
          expect(hits).toEqual([]);
          expect(run.result.changes).toEqual([line]);
          expect(await root(sb, `cat ${CERT}`)).toBe(next.cert);
          expect(presented(sb)).toBe(new X509Certificate(next.cert).fingerprint256);
          expect((await root(sb, `stat -c '%U %a' ${KEY}`)).trim()).toBe("postgres 600");
          expect(await verifyFull(sb, givenCa.file)).toEqual({ code: 0, stdout: "t", stderr: "" });
          pair = next;
        },
        T,
      );

      test(
        "a key not the certificate's, or an expired certificate: refused before any change, the VM untouched",
        async () => {
          const before = await root(sb, `sha256sum ${CERT} ${KEY} ${DROPIN}`);
          const stranger = opensslServer(dir, "given-ca", "server3", [`IP:${sb.address}`, "DNS:db.vm-install.test"]);
          const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
          const expired = {
            cert: await issueServerCertificate({
              caCert: givenCa.cert,
              caKey: givenCa.key,
              publicKey,
              names: [sb.address, "db.vm-install.test"],
              notBefore: new Date(Date.now() - 40 * 24 * 3600_000),
              notAfter: new Date(Date.now() - 10 * 24 * 3600_000),
            }),
            key: String(privateKey.export({ type: "pkcs8", format: "pem" })),
          };
          for (const [bad, message] of [
            [{ cert: pair.cert, key: stranger.key }, /TLS settings: tls_key is not the key of the first certificate/],
            [expired, /TLS settings: tls_cert expired on \d{4}-\d\d-\d\d: .*give a renewed certificate/],
          ] as const) {
            const run = await job(given(), bad);
            expect(run.phase).toBe("Failed");
            expect(run.message).toMatch(message);
            expect(run.message).toMatch(/Nothing was changed/);
            for (const l of keyBodyLines(bad.key)) expect([...run.lines, run.message].join("\n")).not.toContain(l);
          }
          expect(await root(sb, `sha256sum ${CERT} ${KEY} ${DROPIN}`)).toBe(before);
          expect(presented(sb)).toBe(new X509Certificate(pair.cert).fingerprint256);
        },
        T,
      );
    });
  },
);
