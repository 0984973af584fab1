// x509-issue.ts through @peculiar/x509 says what its hand-written DER said: issued again from the keys, names
// and dates of fixtures/x509 (the old writer's), each certificate reads the same to node and to openssl, field
// by field and tag by tag, but for what is random or computed another way (serial, signature, a new key's
// identifier); every way to write an IP literal lands as its own bytes; a CA key WebCrypto cannot sign with is
// named.
import { spawnSync } from "node:child_process";
import { createPrivateKey, createPublicKey, generateKeyPairSync, X509Certificate } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ipBytes, issueCaCertificate, issueServerCertificate } from "../../handlers/install-postgres/x509-issue";

const FIXTURES = path.resolve(__dirname, "..", "fixtures", "x509");
const read = (file: string) => fs.readFileSync(path.join(FIXTURES, file), "utf8");
const NAMES = ["10.0.0.5", "2001:db8::5", "::ffff:192.0.2.7", "db1", "db.example.test"];
const CA_DATES = { notBefore: new Date("2026-12-01T00:00:00Z"), notAfter: new Date("2060-01-01T00:00:00Z") };
const DATES = { notBefore: new Date("2026-12-01T00:05:00Z"), notAfter: new Date("2027-12-01T00:05:00Z") };
const serverKey = createPublicKey(createPrivateKey(read("server.key")));

function openssl(args: string[], pem: string): string {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "x509-")), "cert.pem");
  fs.writeFileSync(file, pem);
  const r = spawnSync("openssl", [...args, "-in", file], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`openssl ${args.join(" ")}: ${r.stderr}`);
  return r.stdout;
}

/** What node reads of a certificate. */
function nodeFields(pem: string) {
  const c = new X509Certificate(pem);
  return {
    subject: c.subject,
    issuer: c.issuer,
    validFrom: c.validFrom,
    validTo: c.validTo,
    ca: c.ca,
    subjectAltName: c.subjectAltName,
    extKeyUsage: c.keyUsage,
    infoAccess: c.infoAccess,
    publicKey: c.publicKey.export({ type: "spki", format: "der" }).toString("hex"),
  };
}

/** Every line of `-text` (signature left out) but the serial's and, with `ids`, the key identifiers' values. */
function textMasked(pem: string, ids: RegExp): string[] {
  const lines = openssl(["x509", "-noout", "-text", "-certopt", "no_sigdump"], pem).split("\n");
  return lines.map((l, i) => (/Serial Number:$/.test(lines[i - 1] ?? "") || ids.test(lines[i - 1] ?? "") ? "*" : l));
}

/**
 * The DER's tags, depth by depth, with every value but the serial and the key identifiers (an OCTET STRING
 * after their OIDs); lengths left out, since a serial or an ECDSA signature varies by a byte.
 */
function derMasked(pem: string, ids: RegExp): string[] {
  const lines = openssl(["asn1parse", "-i"], pem)
    .split("\n")
    .filter(Boolean)
    .map((l) => l.replace(/^\s*\d+:d=(\d+)\s+hl=\d+\s+l=\s*\d+\s+(prim|cons):/, "$1 $2").replace(/\s+$/, ""));
  const serial = lines.findIndex((l) => /^2 prim\s+INTEGER/.test(l));
  return lines.map((l, i) => (i === serial || ids.test(lines[i - 1] ?? "") ? "*" : l));
}

const SKI = /Subject Key Identifier/;
const SKI_AND_AKI = /(Subject|Authority) Key Identifier/;

describe("the same certificates as the hand-written DER (fixtures/x509)", () => {
  test("the CA: the same to node, to openssl and tag by tag; its key identifier is its own, named as authority", async () => {
    const old = read("ca-ec.pem");
    const cn = "vm-install PostgreSQL CA of fixture";
    const now = await issueCaCertificate({ key: read("ca-ec.key"), commonName: cn, ...CA_DATES });
    expect(nodeFields(now)).toEqual(nodeFields(old));
    expect(textMasked(now, SKI_AND_AKI)).toEqual(textMasked(old, SKI_AND_AKI));
    expect(derMasked(now, SKI_AND_AKI)).toEqual(derMasked(old, SKI_AND_AKI));
    const text = openssl(["x509", "-noout", "-ext", "subjectKeyIdentifier,authorityKeyIdentifier"], now);
    const [ski, aki] = [...text.matchAll(/^\s+([0-9A-F:]{59})$/gm)].map((m) => m[1]);
    expect(aki).toBe(ski);
    const cert = new X509Certificate(now);
    expect(cert.checkIssued(cert) && cert.verify(cert.publicKey)).toBe(true);
  });

  test.each(["ec", "rsa"])("a server's, by the %s CA: the same, its authority the CA's own identifier", async (ca) => {
    const old = read(`server-by-${ca}.pem`);
    const caCert = read(`ca-${ca}.pem`);
    const now = await issueServerCertificate({
      caCert,
      caKey: read(`ca-${ca}.key`),
      publicKey: serverKey,
      names: NAMES,
      ...DATES,
    });
    expect(nodeFields(now)).toEqual(nodeFields(old));
    // The authority key identifier is compared: the CA states it, and the new certificate must repeat it.
    expect(textMasked(now, SKI)).toEqual(textMasked(old, SKI));
    expect(derMasked(now, SKI)).toEqual(derMasked(old, SKI));
    const issuer = new X509Certificate(caCert);
    const cert = new X509Certificate(now);
    expect(cert.checkIssued(issuer) && cert.verify(issuer.publicKey)).toBe(true);
  });
});

describe("IP names", () => {
  // Mapped and embedded IPv4 tails, compressed, full and upper-case groups, leading zeros, all-zero.
  const FORMS = [
    "192.0.2.7",
    "::ffff:192.0.2.7",
    "64:ff9b::198.51.100.33",
    "::ffff:c000:207",
    "2001:db8::5",
    "2001:0DB8:0000:0000:0000:0000:0000:0005",
    "fe80::1:2",
    "::1",
    "::",
  ];
  const ca = { cert: read("ca-ec.pem"), key: read("ca-ec.key") };

  test("each literal lands as its own bytes (openssl lists them; node matches each)", async () => {
    const pem = await issueServerCertificate({
      caCert: ca.cert,
      caKey: ca.key,
      publicKey: serverKey,
      names: FORMS,
      ...DATES,
    });
    const listed = openssl(["x509", "-noout", "-ext", "subjectAltName"], pem).match(/IP Address:[^,\n]+/g);
    const asOpenssl = (b: Buffer) =>
      b.length === 4
        ? [...b].join(".")
        : (b.toString("hex").match(/.{4}/g) ?? []).map((g) => parseInt(g, 16).toString(16).toUpperCase()).join(":");
    expect(listed).toEqual(FORMS.map((f) => `IP Address:${asOpenssl(ipBytes(f))}`));
    const cert = new X509Certificate(pem);
    for (const f of FORMS) expect(cert.checkIP(f)).toBeDefined();
  });
});

describe("a CA key WebCrypto cannot sign with", () => {
  test.each([
    [
      "ed25519",
      generateKeyPairSync("ed25519").privateKey,
      /^the CA's key is ed25519; an RSA key or an EC key on P-256/,
    ],
    [
      "EC on secp256k1",
      generateKeyPairSync("ec", { namedCurve: "secp256k1" }).privateKey,
      /^the CA's key is ec secp256k1; an RSA key or an EC key on P-256, P-384 or P-521 is needed to sign$/,
    ],
  ])("%s: named, and what is needed instead", async (_what, key, message) => {
    const caKey = String(key.export({ type: "pkcs8", format: "pem" }));
    const issued = issueServerCertificate({
      caCert: read("ca-ec.pem"),
      caKey,
      publicKey: serverKey,
      names: ["db1"],
      ...DATES,
    });
    await expect(issued).rejects.toThrow(message);
  });
});
