// install-postgres' TLS beyond the happy path: switching tls back to "debian" removes vm-install's drop-in,
// certificate and key as a planned change (a check names it, the server then presents the fallback), and the
// given pair is judged as a class: what is refused before anything changes (a key not the certificate's, a
// key locked by a passphrase, an unreadable or expired certificate, one without a tlsNames name) and what
// only warns (without the VM's address, not yet valid, near expiry).
import { generateKeyPairSync, X509Certificate } from "node:crypto";
import { decideTls, type TlsEvent, tlsDropInContent, tlsFiles } from "../../handlers/install-postgres/tls";
import { decideDebianTls, sslFallback } from "../../handlers/install-postgres/tls-debian";
import { givenPairProblems, refuseTlsSettings } from "../../handlers/install-postgres/tls-problems";
import { issueCertificate } from "../../handlers/install-postgres/tls-remote";
import { issueServerCertificate } from "../../handlers/install-postgres/x509-issue";
import { generateCa, type StackCa } from "../../lib/construct/postgres-ca";
import { checkThenRun, newCluster, pgJob, remoteTlsEvent, tlsEventFrom } from "./support/postgres-jobs";
import { PostgresVm, SNAKEOIL, TLS_CERT, TLS_DROPIN, TLS_KEY } from "./support/postgres-vm";

const DAY = 24 * 3600 * 1000;
const CONF = "/etc/postgresql/14/main/postgresql.conf";
let ca: StackCa;
let other: StackCa;
beforeAll(async () => {
  [ca, other] = await Promise.all([generateCa("ca"), generateCa("other")]);
});

const tlsEvent = (over: Partial<TlsEvent> = {}): TlsEvent => tlsEventFrom(ca, { tls: "given", ...over });
/** A pair issued by `ca` for `names`, valid from `from` for `days`. */
async function pairFor(
  names: string[],
  from = Date.now() - 60_000,
  days = 365,
): Promise<{ cert: string; key: string }> {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const cert = await issueServerCertificate({
    caCert: ca.cert,
    caKey: ca.key,
    publicKey,
    names,
    notBefore: new Date(from),
    notAfter: new Date(from + days * DAY),
  });
  return { cert, key: String(privateKey.export({ type: "pkcs8", format: "pem" })) };
}
/** A pair as the given event fields. */
const asGiven = (p: { cert: string; key: string }) => ({ tls_cert: p.cert, tls_key: p.key });
const NAMES = ["192.0.2.10", "db.example.test"];

const EVENT = (over: object = {}) => remoteTlsEvent(ca, { tls_names: ["db.example.test"], ...over });

describe('tls back to "debian": vm-install\'s certificate is removed as a planned change', () => {
  const removed =
    `vm-install's server certificate removed (tls "debian"): ${TLS_DROPIN}, ${TLS_CERT}, ${TLS_KEY}; ` +
    `ssl_cert_file is ${SNAKEOIL} again`;

  test("after stack-ca: a check names the drop-in and both files, the run removes them, then nothing is left", async () => {
    const vm = new PostgresVm(newCluster());
    vm.state.files[SNAKEOIL] = (await pairFor(["snakeoil"])).cert;
    await pgJob(vm, EVENT());
    expect(vm.state.files[TLS_DROPIN]).toBeDefined();
    expect(await checkThenRun(vm, EVENT({ tls: "debian" }))).toEqual([removed]);
    expect([TLS_DROPIN, TLS_CERT, TLS_KEY].filter((f) => vm.state.files[f] !== undefined)).toEqual([]);
    expect(vm.mutating[0]).toBe(`removing ${TLS_DROPIN}, ${TLS_CERT}, ${TLS_KEY}`);
  });

  test("after given, only the drop-in left: it alone goes", async () => {
    const vm = new PostgresVm(newCluster());
    vm.state.files[SNAKEOIL] = (await pairFor(["snakeoil"])).cert;
    await pgJob(vm, EVENT({ tls: "debian" }));
    vm.state.files[TLS_DROPIN] = tlsDropInContent(tlsFiles(CONF));
    expect(await checkThenRun(vm, EVENT({ tls: "debian" }))).toEqual([
      `vm-install's server certificate removed (tls "debian"): ${TLS_DROPIN}; ssl_cert_file is ${SNAKEOIL} again`,
    ]);
  });

  test("a reload after which the server still presents vm-install's certificate: the run fails, naming both", async () => {
    const vm = new PostgresVm(newCluster());
    vm.state.files[SNAKEOIL] = (await pairFor(["snakeoil"])).cert;
    await pgJob(vm, EVENT());
    vm.presented = vm.state.files[TLS_CERT];
    const run = await pgJob(vm, EVENT({ tls: "debian" })).catch((err: Error) => err);
    expect(String(run)).toMatch(
      new RegExp(`presents another certificate \\(SHA-256 [0-9A-F:]+\\), not the one in ${SNAKEOIL}`),
    );
  });

  test("what ssl falls back to: the last line outside the drop-in (ALTER SYSTEM's last), else the built-in default", () => {
    const d = "/etc/postgresql/15/main/conf.d/91-vm-install-tls.conf";
    const conf = "/etc/postgresql/15/main/postgresql.conf";
    const auto = "/var/lib/postgresql/15/main/postgresql.auto.conf";
    const defaults = { ssl: "off", ssl_cert_file: "server.crt", ssl_key_file: "server.key" };
    const line = (name: string, setting: string, file: string) => ({ name, setting, file });
    expect(sslFallback([], defaults, d)).toEqual({ ssl: "off", cert: "server.crt", key: "server.key" });
    expect(sslFallback([line("ssl", "on", d), line("ssl_cert_file", "/x.crt", d)], defaults, d)).toEqual({
      ssl: "off",
      cert: "server.crt",
      key: "server.key",
    });
    const lines = [
      line("ssl", "true", conf),
      line("ssl_cert_file", "/a.crt", conf),
      line("ssl_cert_file", "/b.crt", d),
      line("ssl_cert_file", "/c.crt", auto),
    ];
    expect(sslFallback(lines, defaults, d)).toEqual({ ssl: "on", cert: "/c.crt", key: "server.key" });
    for (const v of ["on", "ON", "yes", "1", "t"])
      expect(sslFallback([line("ssl", v, conf)], defaults, d).ssl).toBe("on");
    for (const v of ["off", "false", "0", "no"])
      expect(sslFallback([line("ssl", v, conf)], defaults, d).ssl).toBe("off");
  });

  test("ssl off without the drop-in: refused under hostssl, done (ssl off) when remoteSsl is false", () => {
    const f = tlsFiles(CONF);
    const seen = {
      existing: [f.dropIn, f.cert, f.key],
      fallback: { ssl: "off", cert: "server.crt", key: "server.key" },
    };
    expect(() => decideDebianTls({ allow_remote: true, remote_ssl: true }, seen, f)).toThrow(
      /without it ssl is off .* hostssl entries would admit no remote client: set ssl = on/,
    );
    expect(decideDebianTls({ allow_remote: true, remote_ssl: false }, seen, f)?.lines).toEqual([
      `vm-install's server certificate removed (tls "debian"): ${f.dropIn}, ${f.cert}, ${f.key}; ssl is off`,
    ]);
    expect(decideDebianTls({ allow_remote: true, remote_ssl: true }, { existing: [] }, f)).toBeUndefined();
  });

  test("a file the cluster's own settings still name is kept, with a warning; the rest goes", () => {
    const f = tlsFiles(CONF);
    const seen = { existing: [f.dropIn, f.cert, f.key], fallback: { ssl: "on", cert: f.cert, key: f.key } };
    const d = decideDebianTls({ allow_remote: true, remote_ssl: true }, seen, f);
    expect(d?.remove).toEqual([f.dropIn]);
    expect(d?.warnings).toEqual([
      expect.stringMatching(/^\/etc\/postgresql\/14\/main\/vm-install-server\.crt is kept: /),
      expect.stringMatching(/^\/etc\/postgresql\/14\/main\/vm-install-server\.key is kept: /),
    ]);
  });
});

describe('the given pair (tls "given"): refused before anything changes, or warned', () => {
  const encrypted = () =>
    String(
      generateKeyPairSync("ec", { namedCurve: "prime256v1" }).privateKey.export({
        type: "pkcs8",
        format: "pem",
        cipher: "aes-256-cbc",
        passphrase: "a passphrase",
      }),
    );
  test.each<[string, () => Promise<Partial<TlsEvent>>, RegExp]>([
    [
      "a key that is not the certificate's",
      async () => ({ ...asGiven(await pairFor(NAMES)), tls_key: (await pairFor(NAMES)).key }),
      /^tls_key is not the key of the first certificate in tls_cert \(CN=192\.0\.2\.10, SHA-256 [0-9A-F:]+\): give that certificate's own key/,
    ],
    [
      "the CA's key with the server's certificate",
      async () => ({ tls_cert: (await pairFor(NAMES)).cert, tls_key: ca.key }),
      /^tls_key is not the key/,
    ],
    [
      "a key locked by a passphrase",
      async () => ({ tls_cert: (await pairFor(NAMES)).cert, tls_key: encrypted() }),
      /^tls_key is encrypted with a passphrase, which the server cannot ask for.*openssl pkey/,
    ],
    [
      "an unreadable certificate",
      async () => ({
        tls_cert: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        tls_key: (await pairFor(NAMES)).key,
      }),
      /^tls_cert: its first PEM block is not a certificate/,
    ],
    [
      "an expired certificate",
      async () => asGiven(await pairFor(NAMES, Date.now() - 40 * DAY, 30)),
      /^tls_cert expired on \d{4}-\d\d-\d\d: every client that verifies .* give a renewed certificate$/,
    ],
    [
      "one expired a second ago",
      async () => asGiven(await pairFor(NAMES, Date.now() - DAY - 1000, 1)),
      /^tls_cert expired on /,
    ],
    [
      "a certificate without a name of tlsNames",
      async () => asGiven(await pairFor(NAMES.slice(0, 1))),
      /^tls_cert does not cover db\.example\.test of tlsNames, .* take them out of tlsNames$/,
    ],
  ])("%s: refused, saying what and what to do", async (_what, pair, message) => {
    const problems = givenPairProblems(tlsEvent(await pair()), Date.now());
    expect(problems).toEqual([expect.stringMatching(message)]);
  });

  test("a sound pair: no refusal, also with the chain after the certificate and \\r\\n line ends", async () => {
    const pair = await pairFor(NAMES);
    expect(givenPairProblems(tlsEvent(asGiven(pair)), Date.now())).toEqual([]);
    const chained = `${pair.cert}${ca.cert}`.replace(/\n/g, "\r\n");
    expect(givenPairProblems(tlsEvent({ tls_cert: chained, tls_key: pair.key }), Date.now())).toEqual([]);
  });

  test("without the VM's address, not yet valid, near expiry: installed, with a warning each", async () => {
    const pair = await pairFor(["db.example.test"], Date.now() + 3600_000, 10);
    expect(givenPairProblems(tlsEvent(asGiven(pair)), Date.now())).toEqual([]);
    const seen = {
      now: Date.now(),
      address: "192.0.2.10",
      certPem: null,
      keyPublicPem: null,
      dropInText: null,
      existing: [],
    };
    const d = decideTls(tlsEvent(asGiven(pair)), seen, CONF);
    expect(d.issue).toBe("given");
    expect(d.warnings).toEqual([
      expect.stringMatching(/^the given certificate is valid only from .* clients refuse it until then$/),
      "the given certificate does not cover 192.0.2.10 (verify-full fails there)",
      expect.stringMatching(/^the given certificate expires \d{4}-\d\d-\d\d: give a new one$/),
    ]);
  });

  test("through the handler: a mismatched pair fails before any command, the key in no word of it", async () => {
    const vm = new PostgresVm(newCluster());
    const commands: string[] = [];
    const run = vm.run.bind(vm);
    vm.run = (command, opts) => {
      commands.push(command);
      return run(command, opts);
    };
    const key = (await pairFor(NAMES)).key;
    const given = { ...EVENT({ tls: "given", tls_cert: (await pairFor(NAMES)).cert, tls_key: key }) };
    for (const check of [true, false]) {
      const err = await pgJob(vm, { ...given, check }).catch((e: Error) => e);
      expect(String(err)).toMatch(/TLS settings: tls_key is not the key of the first certificate.*Nothing was changed/);
      for (const l of key.split("\n").filter((x) => x.length > 20)) expect(String(err)).not.toContain(l);
    }
    // The kit's own looks (os-release, systemd, cloud-init...) may run; nothing of install-postgres' does.
    expect(commands.filter((c) => /dpkg-query|psql|openssl|--- cert|pg_lsclusters/.test(c))).toEqual([]);
    expect(vm.mutating).toEqual([]);
  });

  test("a changed given certificate replaces the one installed; the same one again changes nothing", async () => {
    const vm = new PostgresVm(newCluster());
    const first = await pairFor(NAMES);
    const given = (p: { cert: string; key: string }) => EVENT({ tls: "given", tls_cert: p.cert, tls_key: p.key });
    await pgJob(vm, given(first));
    expect(vm.state.files[TLS_CERT]).toBe(first.cert);
    const second = await pairFor(NAMES);
    expect(await checkThenRun(vm, given(second))).toEqual([`server certificate replaced: the given one (${TLS_CERT})`]);
    expect(new X509Certificate(vm.state.files[TLS_CERT]).fingerprint256).toBe(
      new X509Certificate(second.cert).fingerprint256,
    );
    expect(vm.state.files[TLS_KEY]).toBe(second.key);
  });

  test("stack-ca's refusals come first too: a CA certificate that is not a CA, a CA key that is not its key", async () => {
    const stack = (over: Partial<TlsEvent>) => tlsEvent({ tls: "stack-ca", ...over });
    expect(() => refuseTlsSettings(stack({}), Date.now())).not.toThrow();
    expect(() => refuseTlsSettings(stack({ tls_ca_key: other.key }), Date.now())).toThrow(
      /^TLS settings: tls_ca_key is not the key of tls_ca_cert: .*delete it to make a new CA\. Nothing was changed\.$/,
    );
    const server = (await pairFor(NAMES)).cert;
    expect(() => refuseTlsSettings(stack({ tls_ca_cert: server }), Date.now())).toThrow(
      /tls_ca_cert is not a CA certificate/,
    );
    expect(() => refuseTlsSettings(tlsEvent({ tls_valid_days: 30 }), Date.now())).toThrow(
      /tls "given" needs tls_cert and tls_key .*tls_valid_days \(30\) must be more than tls_renew_days \(30\)/,
    );
  });

  test("another CA's certificate is no refusal for a given pair (the stack's CA is not asked for)", async () => {
    const p = await issueCertificate(tlsEvent({ tls_ca_cert: other.cert, tls_ca_key: other.key }), NAMES);
    expect(givenPairProblems(tlsEvent(asGiven(p)), Date.now())).toEqual([]);
  });
});
