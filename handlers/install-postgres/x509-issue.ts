// A server certificate signed with a CA's key, in DER by hand: node:crypto reads and verifies certificates
// but signs none, and a library that does (selfsigned, @peculiar/x509) would double the job's bundle. Only
// what a TLS client checks: v3, the CA's subject as issuer, validity, the key, and the extensions of a server
// certificate (not a CA; signature and key encipherment; serverAuth; the names as subjectAltName).
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  type KeyObject,
  randomBytes,
  sign,
  X509Certificate,
} from "node:crypto";
import { isIPv4, isIPv6 } from "node:net";

function derLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
const tlv = (tag: number, ...content: Buffer[]) => {
  const c = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), derLength(c.length), c]);
};
const seq = (...c: Buffer[]) => tlv(0x30, ...c);
const octets = (b: Buffer) => tlv(0x04, b);
const TRUE = tlv(0x01, Buffer.from([0xff]));

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split(".").map(Number);
  const bytes = [40 * a + b];
  for (const p of rest) {
    const enc = [p & 0x7f];
    for (let v = p >> 7; v > 0; v >>= 7) enc.unshift(0x80 | (v & 0x7f));
    bytes.push(...enc);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** A positive INTEGER from big-endian bytes. */
function integer(bytes: Buffer): Buffer {
  let b = bytes;
  while (b.length > 1 && b[0] === 0 && !(b[1] & 0x80)) b = b.subarray(1);
  return tlv(0x02, b[0] & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
}

/** UTCTime until 2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, "").slice(0, 14);
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${iso}Z`));
}

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

/** The whole TLV at `offset` of `der`: where its content starts and where it ends. */
function readTlv(der: Buffer, offset: number): { content: number; end: number } {
  const first = der[offset + 1];
  let len = first;
  let content = offset + 2;
  if (first & 0x80) {
    len = 0;
    for (let i = 0; i < (first & 0x7f); i++) len = len * 256 + der[offset + 2 + i];
    content += first & 0x7f;
  }
  return { content, end: content + len };
}

/** The TBSCertificate's fields of a certificate, each as the span of its whole TLV. */
function tbsFields(raw: Buffer): { start: number; end: number }[] {
  const tbs = readTlv(raw, readTlv(raw, 0).content);
  const fields: { start: number; end: number }[] = [];
  for (let at = tbs.content; at < tbs.end; at = readTlv(raw, at).end)
    fields.push({ start: at, end: readTlv(raw, at).end });
  return fields;
}

/** The subject of a certificate, as DER: the issuer of what it signs. */
function subjectDer(cert: X509Certificate): Buffer {
  const fields = tbsFields(cert.raw);
  // version [0] (present in v3), serial, signature algorithm, issuer, validity; then the subject.
  const f = fields[cert.raw[fields[0].start] === 0xa0 ? 5 : 4];
  return cert.raw.subarray(f.start, f.end);
}

const SKI_OID = oid("2.5.29.14");

/** The CA's subjectKeyIdentifier when it has one (an issued certificate's AKI must name it), else undefined. */
function subjectKeyId(cert: X509Certificate): Buffer | undefined {
  const raw = cert.raw;
  const ext = tbsFields(raw).find((f) => raw[f.start] === 0xa3);
  if (!ext) return undefined;
  const list = readTlv(raw, readTlv(raw, ext.start).content);
  for (let at = list.content; at < list.end; at = readTlv(raw, at).end) {
    const idAt = readTlv(raw, at).content;
    const id = readTlv(raw, idAt);
    if (!raw.subarray(idAt, id.end).equals(SKI_OID)) continue;
    let v = id.end;
    if (raw[v] === 0x01) v = readTlv(raw, v).end;
    const inner = readTlv(raw, readTlv(raw, v).content);
    return raw.subarray(inner.content, inner.end);
  }
  return undefined;
}

/** A key identifier: SHA-1 of the public key's DER (RFC 7093 allows any such method). */
const keyId = (key: KeyObject) =>
  createHash("sha1")
    .update(key.export({ type: "spki", format: "der" }))
    .digest();
const skiExtension = (id: Buffer) => seq(SKI_OID, octets(octets(id)));
const akiExtension = (id: Buffer) => seq(oid("2.5.29.35"), octets(seq(tlv(0x80, id))));

function signatureAlgorithm(key: KeyObject): Buffer {
  if (key.asymmetricKeyType === "ec") return seq(oid("1.2.840.10045.4.3.2"));
  if (key.asymmetricKeyType === "rsa") return seq(oid("1.2.840.113549.1.1.11"), tlv(0x05));
  throw new Error(`the CA's key is ${key.asymmetricKeyType}; an EC or RSA key is needed to sign`);
}

function serverExtensions(names: readonly string[], subjectId: Buffer, issuerId: Buffer): Buffer {
  const alt = names.map((n) => (isIPv4(n) || isIPv6(n) ? tlv(0x87, ipBytes(n)) : tlv(0x82, Buffer.from(n, "ascii"))));
  return tlv(
    0xa3,
    seq(
      seq(oid("2.5.29.19"), TRUE, octets(seq())),
      // digitalSignature and keyEncipherment: bits 0 and 2 of the first byte, 5 bits unused.
      seq(oid("2.5.29.15"), TRUE, octets(tlv(0x03, Buffer.from([0x05, 0xa0])))),
      seq(oid("2.5.29.37"), octets(seq(oid("1.3.6.1.5.5.7.3.1")))),
      seq(oid("2.5.29.17"), octets(seq(...alt))),
      skiExtension(subjectId),
      akiExtension(issuerId),
    ),
  );
}

const commonName = (cn: string) => seq(tlv(0x31, seq(oid("2.5.4.3"), tlv(0x0c, Buffer.from(cn, "utf8")))));

/** The certificate around a TBSCertificate: signed with `key`, in PEM. */
function signed(tbsFieldsDer: Buffer[], key: KeyObject, algorithm: Buffer): string {
  const tbs = seq(...tbsFieldsDer);
  const der = seq(tbs, algorithm, tlv(0x03, Buffer.from([0]), sign("sha256", tbs, key)));
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`;
}

function serial(): Buffer {
  const bytes = randomBytes(16);
  bytes[0] &= 0x7f;
  return integer(bytes);
}

/** A self-signed CA certificate for `key`: signs certificates only (pathlen 0), with its key identifier. */
export function issueCaCertificate(o: { key: string; commonName: string; notBefore: Date; notAfter: Date }): string {
  const key = createPrivateKey(o.key);
  const pub = createPublicKey(key);
  const algorithm = signatureAlgorithm(key);
  const name = commonName(o.commonName);
  const extensions = tlv(
    0xa3,
    seq(
      seq(oid("2.5.29.19"), TRUE, octets(seq(TRUE, integer(Buffer.from([0]))))),
      // keyCertSign and cRLSign: bits 5 and 6, 1 bit unused.
      seq(oid("2.5.29.15"), TRUE, octets(tlv(0x03, Buffer.from([0x01, 0x06])))),
      skiExtension(keyId(pub)),
      akiExtension(keyId(pub)),
    ),
  );
  const validity = seq(time(o.notBefore), time(o.notAfter));
  const spki = pub.export({ type: "spki", format: "der" });
  return signed(
    [tlv(0xa0, integer(Buffer.from([2]))), serial(), algorithm, name, validity, name, spki, extensions],
    key,
    algorithm,
  );
}

/** A certificate (PEM) for `publicKey` and `names`, issued by the CA `caCert` with `caKey`. */
export function issueServerCertificate(o: {
  caCert: string;
  caKey: string;
  publicKey: KeyObject;
  names: readonly string[];
  notBefore: Date;
  notAfter: Date;
}): string {
  const caKey = createPrivateKey(o.caKey);
  const ca = new X509Certificate(o.caCert);
  const algorithm = signatureAlgorithm(caKey);
  return signed(
    [
      tlv(0xa0, integer(Buffer.from([2]))),
      serial(),
      algorithm,
      subjectDer(ca),
      seq(time(o.notBefore), time(o.notAfter)),
      commonName(o.names[0] ?? "postgres"),
      o.publicKey.export({ type: "spki", format: "der" }),
      serverExtensions(o.names, keyId(o.publicKey), subjectKeyId(ca) ?? keyId(ca.publicKey)),
    ],
    caKey,
    algorithm,
  );
}
