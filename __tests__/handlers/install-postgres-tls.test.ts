// install-postgres' server certificate decision (tls.ts): which certificate on the VM still serves and
// which is replaced, in the words a check and a run share, for the class of ways a certificate goes bad
// (none, unreadable, another CA, a key that is not its own, a missing name, near expiry), and the given
// pair refused when the key is not the certificate's.
// The polyfill before @peculiar/x509, which refuses to load without Reflect metadata.
import "reflect-metadata";
import { spawnSync } from "node:child_process";
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  KeyObject,
  webcrypto,
  X509Certificate,
} from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { BasicConstraintsExtension, KeyUsageFlags, KeyUsagesExtension, X509CertificateGenerator } from "@peculiar/x509";
import { requireSsl } from "../../handlers/install-postgres/decisions";
import {
  covers,
  decideTls,
  type TlsEvent,
  type TlsSeen,
  tlsDropInContent,
  tlsFiles,
} from "../../handlers/install-postgres/tls";
import { issueCertificate, probeAddress, targetAddress } from "../../handlers/install-postgres/tls-remote";
import { ipBytes } from "../../handlers/install-postgres/x509-issue";
import { generateCa, type StackCa } from "../../lib/construct/postgres-ca";
import { checkThenRun, newCluster, pgJob, remoteTlsEvent, tlsEventFrom } from "./support/postgres-jobs";
import { PostgresVm, TLS_CERT, TLS_DROPIN, TLS_KEY } from "./support/postgres-vm";

const CONF = "/etc/postgresql/15/main/postgresql.conf";
const DAY = 24 * 3600 * 1000;
let ca: StackCa;
let other: StackCa;
beforeAll(async () => {
  [ca, other] = await Promise.all([generateCa("ca"), generateCa("other")]);
});

const event = (over: Partial<TlsEvent> = {}): TlsEvent => tlsEventFrom(ca, { listen_addresses: "10.0.0.5", ...over });
const NAMES = ["10.0.0.5", "db.example.test"];
const pubOf = (key: string) => String(createPublicKey(key).export({ type: "spki", format: "pem" }));
const seenWith = async (over: Partial<TlsEvent> = {}, names = NAMES): Promise<TlsSeen> => {
  const pair = await issueCertificate(event(over), names);
  return {
    now: Date.now(),
    address: "10.0.0.5",
    certPem: pair.cert,
    keyPublicPem: pubOf(pair.key),
    dropInText: tlsDropInContent(tlsFiles(CONF)),
    existing: Object.values(tlsFiles(CONF)),
  };
};
const forNames = `issued by the stack's CA for ${NAMES.join(", ")}`;

/** An RSA CA that states no key identifier, as another tool may make one (the issued AKI is then computed). */
async function rsaCaWithoutKeyId(): Promise<{ cert: string; key: string }> {
  const algorithm = { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256", publicExponent: new Uint8Array([1, 0, 1]) };
  const keys = await webcrypto.subtle.generateKey({ ...algorithm, modulusLength: 2048 }, true, ["sign", "verify"]);
  const cert = await X509CertificateGenerator.createSelfSigned(
    {
      name: [{ CN: ["rsa ca"] }],
      keys,
      extensions: [
        new BasicConstraintsExtension(true, undefined, true),
        new KeyUsagesExtension(KeyUsageFlags.keyCertSign, true),
      ],
    },
    webcrypto,
  );
  return {
    cert: cert.toString("pem"),
    key: String(KeyObject.from(keys.privateKey).export({ type: "pkcs8", format: "pem" })),
  };
}

describe("the server certificate (tls stack-ca)", () => {
  test("a certificate that serves: no change, the same names in the same order as issued", async () => {
    const d = decideTls(event(), await seenWith(), CONF);
    expect(d).toMatchObject({ issue: undefined, writeDropIn: false, lines: [], names: NAMES });
  });

  test("none yet: issued, and the drop-in written", async () => {
    const seen = { ...(await seenWith()), certPem: null, keyPublicPem: null, dropInText: null };
    expect(decideTls(event(), seen, CONF).lines).toEqual([
      `server certificate for ${NAMES.join(", ")} issued by the stack's CA (/etc/postgresql/15/main/vm-install-server.crt)`,
      "ssl_cert_file and ssl_key_file -> /etc/postgresql/15/main/vm-install-server.crt, " +
        "/etc/postgresql/15/main/vm-install-server.key (/etc/postgresql/15/main/conf.d/91-vm-install-tls.conf)",
    ]);
  });

  test.each<[string, (s: TlsSeen) => Promise<TlsSeen> | TlsSeen, string]>([
    [
      "unreadable",
      (s) => ({ ...s, certPem: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n" }),
      "the file on the VM is not a certificate",
    ],
    [
      "another CA's",
      async () => seenWith({ tls_ca_cert: other.cert, tls_ca_key: other.key }),
      "it was not signed by the stack's CA",
    ],
    ["its key missing", (s) => ({ ...s, keyPublicPem: null }), "its key file is missing or does not match it"],
    [
      "another key beside it",
      (s) => ({
        ...s,
        keyPublicPem: pubOf(
          String(
            generateKeyPairSync("ec", { namedCurve: "prime256v1" }).privateKey.export({ type: "pkcs8", format: "pem" }),
          ),
        ),
      }),
      "its key file is missing or does not match it",
    ],
    ["a name missing", async () => seenWith({}, ["10.0.0.5"]), "it does not cover db.example.test"],
    ["the address missing", async () => seenWith({}, ["db.example.test"]), "it does not cover 10.0.0.5"],
  ])("%s: replaced, saying why", async (_what, spoil, why) => {
    const seen = await spoil(await seenWith());
    const d = decideTls(event(), seen, CONF);
    expect(d.issue).toBe("stack-ca");
    expect(d.lines).toEqual([`server certificate replaced (${why}): ${forNames}`]);
  });

  test("near expiry: replaced within tls_renew_days, kept a day before it (the boundary)", async () => {
    const seen = await seenWith({ tls_valid_days: 40 });
    const expires = new Date(Date.now() + 40 * DAY - 5 * 60_000).toISOString().slice(0, 10);
    expect(decideTls(event(), { ...seen, now: Date.now() + 11 * DAY }, CONF).lines).toEqual([
      `server certificate replaced (expires ${expires}, within 30 days): ${forNames}`,
    ]);
    expect(decideTls(event(), { ...seen, now: Date.now() + 9 * DAY }, CONF).lines).toEqual([]);
  });

  test("a drop-in someone edited is rewritten, the certificate kept", async () => {
    const seen = { ...(await seenWith()), dropInText: "ssl_cert_file = '/tmp/x'\n" };
    const d = decideTls(event(), seen, CONF);
    expect(d.issue).toBeUndefined();
    expect(d.writeDropIn).toBe(true);
  });

  test("the target's address, whatever the form of the kit's target", () => {
    expect(targetAddress("admin@10.0.0.5:22")).toBe("10.0.0.5");
    expect(targetAddress("admin@[2001:db8::5]:2222")).toBe("2001:db8::5");
    expect(targetAddress("admin@db1.example.test:22")).toBe("db1.example.test");
  });
});

describe("the given certificate (tls given)", () => {
  test("installed when another is there, kept when it is the one; a key that is not its own is refused", async () => {
    const pair = await issueCertificate(event(), NAMES);
    const given = event({ tls: "given", tls_cert: pair.cert, tls_key: pair.key });
    const seen = await seenWith();
    expect(decideTls(given, seen, CONF).lines).toEqual([
      "server certificate replaced: the given one (/etc/postgresql/15/main/vm-install-server.crt)",
    ]);
    expect(decideTls(given, { ...seen, certPem: pair.cert, keyPublicPem: pubOf(pair.key) }, CONF).lines).toEqual([]);
    expect(() => decideTls({ ...given, tls_key: other.key }, seen, CONF)).toThrow(/tls_key is not the key/);
  });

  test("a given certificate near expiry or without the VM's address: warned, never replaced by the job", async () => {
    const pair = await issueCertificate(event({ tls_valid_days: 10 }), ["db1"]);
    const given = event({ tls: "given", tls_cert: pair.cert, tls_key: pair.key });
    const d = decideTls(given, { ...(await seenWith()), certPem: pair.cert, keyPublicPem: pubOf(pair.key) }, CONF);
    expect(d.lines).toEqual([]);
    expect(d.warnings).toEqual([
      expect.stringMatching(/^the given certificate does not cover 10\.0\.0\.5, db\.example\.test \(/),
      expect.stringMatching(/^the given certificate expires \d{4}-\d\d-\d\d: give a new one$/),
    ]);
  });
});

describe("the certificate the job signs (x509-issue.ts, through @peculiar/x509)", () => {
  test("openssl verifies it against the CA and reads every name; node checks each address and name; another CA refuses it", async () => {
    const names = ["10.0.0.5", "2001:db8::5", "::ffff:192.0.2.7", "db1", "db.example.test"];
    const pair = await issueCertificate(event(), names);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "x509-"));
    fs.writeFileSync(path.join(dir, "ca.pem"), ca.cert);
    fs.writeFileSync(path.join(dir, "other.pem"), other.cert);
    fs.writeFileSync(path.join(dir, "srv.pem"), pair.cert);
    const openssl = (...args: string[]) => spawnSync("openssl", args, { encoding: "utf8" });
    const ok = openssl(
      "verify",
      "-x509_strict",
      "-purpose",
      "sslserver",
      "-CAfile",
      path.join(dir, "ca.pem"),
      path.join(dir, "srv.pem"),
    );
    expect(ok.stdout.trim()).toBe(`${path.join(dir, "srv.pem")}: OK`);
    expect(openssl("verify", "-CAfile", path.join(dir, "other.pem"), path.join(dir, "srv.pem")).status).not.toBe(0);
    const text = openssl("x509", "-in", path.join(dir, "srv.pem"), "-noout", "-ext", "subjectAltName").stdout;
    expect(text).toContain(
      "IP Address:10.0.0.5, IP Address:2001:DB8:0:0:0:0:0:5, IP Address:0:0:0:0:0:FFFF:C000:207, DNS:db1, DNS:db.example.test",
    );
    const cert = new X509Certificate(pair.cert);
    for (const n of names) expect(covers(cert, n)).toBe(true);
    expect(covers(cert, "10.0.0.6")).toBe(false);
    expect(covers(cert, "other.example.test")).toBe(false);
    expect(cert.ca).toBe(false);
    expect(cert.checkPrivateKey(createPrivateKey(pair.key))).toBe(true);
    expect(new Date(cert.validTo).getTime() - Date.now()).toBeGreaterThan(364 * DAY);
  });

  test("an RSA CA signs too (sha256WithRSAEncryption); IPv6 literals become their 16 bytes", async () => {
    const rsa = await rsaCaWithoutKeyId();
    const pair = await issueCertificate(event({ tls_ca_cert: rsa.cert, tls_ca_key: rsa.key }), ["db1"]);
    const cert = new X509Certificate(pair.cert);
    const rsaCa = new X509Certificate(rsa.cert);
    expect(cert.checkIssued(rsaCa) && cert.verify(rsaCa.publicKey)).toBe(true);
    expect(() => ipBytes("not-an-ip")).toThrow(/not an IP address/);
    expect(ipBytes("2001:db8::5").toString("hex")).toBe("20010db8000000000000000000000005");
    expect(ipBytes("::").toString("hex")).toBe("0".repeat(32));
    expect(ipBytes("fe80::1:2").toString("hex")).toBe("fe800000000000000000000000010002");
  });
});

describe("a server with ssl off", () => {
  const off = { ssl: "off", config_file: CONF };
  test('hostssl with tls "debian" is refused before any change; "stack-ca" and "given" turn SSL on themselves', () => {
    const remote = { allow_remote: true, remote_ssl: true } as const;
    expect(() => requireSsl({ ...remote, tls: "debian" }, off)).toThrow(/or set tls "stack-ca".*Nothing was changed/);
    expect(() => requireSsl({ ...remote, tls: "stack-ca" }, off)).not.toThrow();
    expect(() => requireSsl({ ...remote, tls: "given" }, off)).not.toThrow();
  });
});

describe("tls stack-ca through the handler and the kit: a check's would_change is the following run's changes", () => {
  const EVENT = () => remoteTlsEvent(ca);

  test("a new cluster: the certificate and the drop-in are foreseen, then made, the key the certificate's", async () => {
    const vm = new PostgresVm(newCluster());
    const words = await checkThenRun(vm, EVENT());
    expect(words).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^server certificate for 192\.0\.2\.10 issued by the stack's CA \(/),
        expect.stringMatching(/^ssl_cert_file and ssl_key_file -> /),
      ]),
    );
    const cert = new X509Certificate(vm.state.files[TLS_CERT]);
    expect(cert.checkIssued(new X509Certificate(ca.cert))).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(vm.state.files[TLS_KEY]))).toBe(true);
    expect(vm.state.files[TLS_DROPIN]).toContain(`ssl_key_file = '${TLS_KEY}'`);
  });

  test("a certificate near expiry: the check says so in the run's words; the run replaces it", async () => {
    const vm = new PostgresVm(newCluster());
    await pgJob(vm, EVENT());
    const names = new X509Certificate(vm.state.files[TLS_CERT]).subjectAltName ?? "";
    const planted = await issueCertificate(event({ tls_valid_days: 3 }), ["192.0.2.10"]);
    vm.state.files[TLS_CERT] = planted.cert;
    vm.state.files[TLS_KEY] = planted.key;
    const words = await checkThenRun(vm, EVENT());
    expect(words).toEqual([
      expect.stringMatching(/^server certificate replaced \(expires \d{4}-\d\d-\d\d, within 30 days\): /),
    ]);
    expect(new X509Certificate(vm.state.files[TLS_CERT]).subjectAltName).toBe(names);
  });

  test("a reload that could not load the new certificate (the old one still presented): the run fails, naming both", async () => {
    const vm = new PostgresVm(newCluster());
    await pgJob(vm, EVENT());
    vm.presented = vm.state.files[TLS_CERT];
    vm.state.files[TLS_CERT] = (await issueCertificate(event({ tls_valid_days: 3 }), ["db1"])).cert;
    const run = await pgJob(vm, EVENT()).catch((err: Error) => err);
    expect(String(run)).toMatch(
      /after the reload the server at 127\.0\.0\.1:5432 presents another certificate \(SHA-256 [0-9A-F:]+\), not the one in \/etc\/postgresql\/14\/main\/vm-install-server\.crt/,
    );
  });

  test("where the handshake is tried: loopback when the server listens there, else its first address", () => {
    expect(probeAddress("*", 5432)).toBe("127.0.0.1:5432");
    expect(probeAddress("10.0.0.5,localhost", 5433)).toBe("127.0.0.1:5433");
    expect(probeAddress("10.0.0.5", 5432)).toBe("10.0.0.5:5432");
    expect(probeAddress("2001:db8::5", 5432)).toBe("[2001:db8::5]:5432");
    expect(probeAddress("db1.example.test", 5432)).toBe("db1.example.test:5432");
  });
});
