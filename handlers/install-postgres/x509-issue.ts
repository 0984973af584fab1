// The stack's CA certificate and the server certificates it signs, through @peculiar/x509 (selfsigned, which
// wraps it, sets no key identifiers and signs with the CA's key only when it is of the new key's type). Only
// what a TLS client checks: v3, the CA's subject as issuer, validity, the key, and the extensions of a CA
// (pathlen 0, signs certificates only) or a server (signature and key encipherment, serverAuth, the names).
import { createPrivateKey, createPublicKey, type KeyObject, webcrypto } from "node:crypto";
import { isIPv4, isIPv6 } from "node:net";
import type { Extension, GeneralName, Name } from "@peculiar/x509";

type X509 = typeof import("@peculiar/x509");
let loaded: Promise<X509> | undefined;
/**
 * The library, on the first certificate: its require costs a job ~300 ms that most runs (nothing to issue)
 * need not pay. The polyfill first: its registry (tsyringe) refuses to load without Reflect metadata.
 */
const library = (): Promise<X509> => {
  loaded ??= import("reflect-metadata").then(() => import("@peculiar/x509"));
  return loaded;
};

/** An IP literal's bytes (4 or 16), for an iPAddress name. */
export function ipBytes(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split(".").map(Number));
  if (!isIPv6(ip)) throw new Error(`${ip} is not an IP address`);
  let text = ip;
  const v4 = text.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (v4) {
    const [a, b, c, d] = v4[1].split(".").map(Number);
    text = text.replace(v4[1], `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`);
  }
  const [head, tail] = text.includes("::") ? text.split("::") : [text, undefined];
  const h = head ? head.split(":") : [];
  const t = tail ? tail.split(":") : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill("0"), ...t];
  return Buffer.concat(groups.map((g) => Buffer.from(parseInt(g, 16).toString(16).padStart(4, "0"), "hex")));
}

/**
 * An IP literal as the library reads one right: dotted, or eight hex groups. Its own parser takes the tail of
 * "::ffff:192.0.2.7" for two hex groups and names another address, so the bytes come from ipBytes.
 */
function ipName(x509: X509, ip: string): GeneralName {
  const bytes = ipBytes(ip);
  const text = bytes.length === 4 ? [...bytes].join(".") : (bytes.toString("hex").match(/.{4}/g) ?? []).join(":");
  return new x509.GeneralName("ip", text);
}

const crypto = webcrypto;
const CURVES: Record<string, string> = { prime256v1: "P-256", secp384r1: "P-384", secp521r1: "P-521" };

/** A PEM private key as WebCrypto's signing key: ECDSA on its curve, or RSA PKCS#1 v1.5; both with SHA-256. */
async function signingKey(pem: string): Promise<webcrypto.CryptoKey> {
  const key = createPrivateKey(pem);
  const curve = CURVES[key.asymmetricKeyDetails?.namedCurve ?? ""];
  const algorithm =
    key.asymmetricKeyType === "rsa"
      ? { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }
      : key.asymmetricKeyType === "ec" && curve
        ? { name: "ECDSA", namedCurve: curve }
        : undefined;
  if (!algorithm)
    throw new Error(
      `the CA's key is ${key.asymmetricKeyType} ${key.asymmetricKeyDetails?.namedCurve ?? ""}`.trim() +
        "; an RSA key or an EC key on P-256, P-384 or P-521 is needed to sign",
    );
  return crypto.subtle.importKey("pkcs8", key.export({ type: "pkcs8", format: "der" }), algorithm, false, ["sign"]);
}

const spki = (key: KeyObject) => key.export({ type: "spki", format: "der" });
const commonName = (x509: X509, cn: string) => new x509.Name([{ CN: [{ utf8String: cn }] }]);

async function issue(o: {
  subject: Name;
  issuer: Name;
  publicKey: KeyObject;
  caKey: string;
  notBefore: Date;
  notAfter: Date;
  extensions: Extension[];
}): Promise<string> {
  const { X509CertificateGenerator } = await library();
  const cert = await X509CertificateGenerator.create(
    { ...o, publicKey: spki(o.publicKey), signingKey: await signingKey(o.caKey) },
    crypto,
  );
  return cert.toString("pem").replace(/\r\n/g, "\n").replace(/\n?$/, "\n");
}

/** A self-signed CA certificate for `key`: signs certificates only (pathlen 0), with its key identifier. */
export async function issueCaCertificate(o: {
  key: string;
  commonName: string;
  notBefore: Date;
  notAfter: Date;
}): Promise<string> {
  const x509 = await library();
  const publicKey = createPublicKey(createPrivateKey(o.key));
  const name = commonName(x509, o.commonName);
  return issue({
    subject: name,
    issuer: name,
    publicKey,
    caKey: o.key,
    notBefore: o.notBefore,
    notAfter: o.notAfter,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(spki(publicKey), false, crypto),
      await x509.AuthorityKeyIdentifierExtension.create(spki(publicKey), false, crypto),
    ],
  });
}

/** A certificate (PEM) for `publicKey` and `names`, issued by the CA `caCert` with `caKey`. */
export async function issueServerCertificate(o: {
  caCert: string;
  caKey: string;
  publicKey: KeyObject;
  names: readonly string[];
  notBefore: Date;
  notAfter: Date;
}): Promise<string> {
  const x509 = await library();
  const ca = new x509.X509Certificate(o.caCert);
  // The CA's own identifier when it states one: a client matches the two, not the way either was computed.
  const caId = ca.getExtension(x509.SubjectKeyIdentifierExtension)?.keyId;
  const alt = o.names.map((n) => (isIPv4(n) || isIPv6(n) ? ipName(x509, n) : new x509.GeneralName("dns", n)));
  return issue({
    subject: commonName(x509, o.names[0] ?? "postgres"),
    issuer: ca.subjectName,
    publicKey: o.publicKey,
    caKey: o.caKey,
    notBefore: o.notBefore,
    notAfter: o.notAfter,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension(alt),
      await x509.SubjectKeyIdentifierExtension.create(spki(o.publicKey), false, crypto),
      caId
        ? new x509.AuthorityKeyIdentifierExtension(caId)
        : await x509.AuthorityKeyIdentifierExtension.create(ca.publicKey, false, crypto),
    ],
  });
}
