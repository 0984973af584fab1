// Reads an OpenPGP keyring (what a repository publishes as its signing key) far enough to say which
// primary keys it holds, by their v4 fingerprints, without gpg: the key bytes reach the handler anyway,
// so the check cannot be skipped on a VM without gpg and runs before anything is written there.
//
// Deliberately strict: apt (gpgv) will trust every key in the file, so a file this code cannot fully
// account for is refused rather than guessed at. Only the packets a published public key consists of
// are accepted (public key, public subkey, user ID, user attribute, signature, trust, marker); a
// secret-key, compressed or literal-data packet, a partial or indeterminate length, a truncated packet,
// a subkey before any primary, or a broken armour checksum is an error. v3 keys (MD5 fingerprints) and
// v5/v6 keys (SHA-256 fingerprints) are refused too: gpgv on Debian 12 and Ubuntu 22.04 (GnuPG 2.2)
// reads neither, and every repository key these installers meet is v4.

import { createHash } from "node:crypto";

const PUBLIC_KEY = 6;
const PUBLIC_SUBKEY = 14;
/** Signature, trust, user ID, user attribute, marker: carried along, never keys of their own. */
const IGNORED = new Set([2, 10, 12, 13, 17]);
const TAG_NAMES: Record<number, string> = { 1: "encrypted session key", 5: "secret key", 7: "secret subkey", 8: "compressed data", 11: "literal data" };

export class OpenPgpError extends Error {}

export interface KeyringSummary {
  /** v4 fingerprints of the primary keys, upper-case hex, in file order. */
  primaries: string[];
  /** How many subkeys came with them (belonging to their primary: not checked on their own). */
  subkeys: number;
}

/** CRC-24 of RFC 4880 6.1, the armour checksum. */
function crc24(data: Buffer): number {
  let crc = 0xb704ce;
  for (const byte of data) {
    crc ^= byte << 16;
    for (let i = 0; i < 8; i++) {
      crc <<= 1;
      if (crc & 0x1000000) crc ^= 0x1864cfb;
    }
  }
  return crc & 0xffffff;
}

/**
 * The binary packets of every "PUBLIC KEY BLOCK" in an armoured file, concatenated: apt reads them all,
 * so all are checked. Header lines ("Version: ...") end at the first empty line; "=XXXX" is the checksum.
 */
export function dearmor(text: string): Buffer {
  const blocks = [...text.matchAll(/-----BEGIN PGP PUBLIC KEY BLOCK-----\r?\n([\s\S]*?)-----END PGP PUBLIC KEY BLOCK-----/g)];
  if (blocks.length === 0) throw new OpenPgpError("no PUBLIC KEY BLOCK in the armour");
  return Buffer.concat(
    blocks.map((block, i) => {
      const lines = block[1].split(/\r?\n/).map((l) => l.trim());
      const blank = lines.indexOf("");
      const body = lines.slice(blank >= 0 && lines.slice(0, blank).every((l) => l.includes(":")) ? blank + 1 : 0).filter((l) => l !== "");
      const sum = body.length && body[body.length - 1].startsWith("=") ? body.pop()!.slice(1) : undefined;
      const b64 = body.join("");
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) throw new OpenPgpError(`armour block ${i + 1} is not base64`);
      const data = Buffer.from(b64, "base64");
      if (sum !== undefined && Buffer.from(sum, "base64").readUIntBE(0, 3) !== crc24(data)) {
        throw new OpenPgpError(`armour block ${i + 1}'s checksum does not match its contents (damaged or altered)`);
      }
      return data;
    }),
  );
}

interface Packet {
  tag: number;
  body: Buffer;
}

/** One packet header at `at`: its tag, where its body starts and how long it is (RFC 4880 4.2). */
function header(data: Buffer, at: number): { tag: number; start: number; length: number } {
  const first = data[at];
  if ((first & 0x80) === 0) throw new OpenPgpError(`byte ${at} is not a packet header`);
  const need = (n: number) => {
    if (at + 1 + n > data.length) throw new OpenPgpError(`the packet header at byte ${at} is truncated`);
  };
  if (first & 0x40) {
    need(1);
    const o1 = data[at + 1];
    if (o1 < 192) return { tag: first & 0x3f, start: at + 2, length: o1 };
    if (o1 < 224) {
      need(2);
      return { tag: first & 0x3f, start: at + 3, length: ((o1 - 192) << 8) + data[at + 2] + 192 };
    }
    if (o1 === 255) {
      need(5);
      return { tag: first & 0x3f, start: at + 6, length: data.readUInt32BE(at + 2) };
    }
    throw new OpenPgpError(`the packet at byte ${at} has a partial body length, which no key packet may have`);
  }
  const kind = first & 3;
  if (kind === 3) throw new OpenPgpError(`the packet at byte ${at} has an indeterminate length`);
  const size = [1, 2, 4][kind];
  need(size);
  return { tag: (first >> 2) & 0x0f, start: at + 1 + size, length: data.readUIntBE(at + 1, size) };
}

function packets(data: Buffer): Packet[] {
  const out: Packet[] = [];
  for (let at = 0; at < data.length; ) {
    const { tag, start, length } = header(data, at);
    if (start + length > data.length) throw new OpenPgpError(`the packet at byte ${at} is truncated (${length} bytes announced)`);
    out.push({ tag, body: data.subarray(start, start + length) });
    at = start + length;
  }
  return out;
}

/** The v4 fingerprint: SHA-1 over 0x99, the two-byte body length and the body (RFC 4880 12.2). */
export function v4Fingerprint(body: Buffer): string {
  const prefix = Buffer.from([0x99, body.length >> 8, body.length & 0xff]);
  return createHash("sha1").update(prefix).update(body).digest("hex").toUpperCase();
}

function keyVersion(body: Buffer, what: string): void {
  const version = body[0];
  if (version === 4) return;
  throw new OpenPgpError(
    `${what} is a version ${version ?? "(empty)"} key; only version 4 keys are supported (gpgv on Debian 12 and Ubuntu 22.04 reads no other, and repository keys are v4)`,
  );
}

/** The primary keys in `key` (ASCII armour or binary), or an OpenPgpError saying why it cannot be read. */
export function readKeyring(key: Buffer): KeyringSummary {
  const text = key.subarray(0, 200).toString("latin1").trimStart();
  const data = text.startsWith("-----BEGIN PGP") ? dearmor(key.toString("latin1")) : key;
  if (data.length === 0) throw new OpenPgpError("it holds no packets");
  const summary: KeyringSummary = { primaries: [], subkeys: 0 };
  for (const { tag, body } of packets(data)) {
    if (tag === PUBLIC_KEY) {
      keyVersion(body, `primary key ${summary.primaries.length + 1}`);
      summary.primaries.push(v4Fingerprint(body));
    } else if (tag === PUBLIC_SUBKEY) {
      if (summary.primaries.length === 0) throw new OpenPgpError("a subkey comes before any primary key");
      keyVersion(body, `subkey ${summary.subkeys + 1}`);
      summary.subkeys++;
    } else if (!IGNORED.has(tag)) {
      throw new OpenPgpError(`it holds a ${TAG_NAMES[tag] ?? `tag ${tag}`} packet, which has no place in a published public key`);
    }
  }
  if (summary.primaries.length === 0) throw new OpenPgpError("it holds no public key");
  return summary;
}
