// Reads an OpenPGP key file (a repository's signing key) far enough to say which primary keys it holds,
// by their v4 fingerprints, and rebuilds from the packets read the binary keyring apt is given, without
// gpg: the check cannot be skipped on a VM without gpg and runs before anything is written there.

import { createHash } from "node:crypto";
import { aptArmourBlocks, dearmor, looksArmoured, OpenPgpError } from "./openpgp-armour";

// What apt trusts is what was verified: the served file is never written. Its packets are grouped per
// primary key (the primary, its direct signatures, user IDs with their signatures, subkeys with their
// binding signatures, in served order) and written back with canonical headers, so the keyring holds
// exactly the primaries that were checked and the same served key always gives the same bytes. Trust
// and marker packets, and user attributes (photo IDs) with their signatures, are dropped: the check does
// not need them and apt does not either.
//
// Deliberately strict: a file this code cannot fully account for is refused rather than guessed at.
// Armour is one PUBLIC KEY BLOCK and nothing else (./openpgp-armour.ts); binary is packets to the last
// byte. Only the packets a published public key consists of are accepted (public key, public subkey,
// user ID, user attribute, signature, trust, marker); a secret-key, compressed or literal-data packet,
// a partial or indeterminate length, a truncated packet, a subkey or user ID before any primary, or the
// same primary twice is an error. v3 keys (MD5 fingerprints) and v5/v6 keys (SHA-256 fingerprints) are
// refused too: gpgv on Debian 12 and Ubuntu 22.04 (GnuPG 2.2) reads neither, and every repository key
// these installers meet is v4. Signatures are carried, not verified: gpgv checks the self-signatures
// (a subkey without a valid binding signature is not used) when apt reads the keyring.
export { OpenPgpError };

const SIGNATURE = 2;
const PUBLIC_KEY = 6;
const MARKER = 10;
const TRUST = 12;
const USER_ID = 13;
const PUBLIC_SUBKEY = 14;
const USER_ATTRIBUTE = 17;
const TAG_NAMES: Record<number, string> = {
  1: "encrypted session key",
  2: "signature",
  5: "secret key",
  7: "secret subkey",
  8: "compressed data",
  11: "literal data",
  13: "user ID",
  17: "user attribute",
};

interface Packet {
  tag: number;
  body: Buffer;
}

/** One primary key as read, with the packets the rebuilt keyring keeps for it. */
export interface Certificate {
  fingerprint: string;
  subkeys: number;
  packets: Packet[];
}

/**
 * Every primary key in `file` with the packets kept for it; an OpenPgpError (with the keys found
 * anywhere in the file) when it cannot be fully read.
 */
export function readCertificates(file: Buffer): Certificate[] {
  try {
    const data = looksArmoured(file) ? dearmor(file) : file;
    if (data.length === 0) throw new OpenPgpError("it holds no packets");
    return certificates(packets(data));
  } catch (err) {
    if (err instanceof OpenPgpError) err.hiddenKeys = keysAnywhere(file);
    throw err;
  }
}

/**
 * The binary keyring apt is given: the certificates' packets, each with a canonical old-format header
 * (as gpg --export writes them).
 */
export function binaryKeyring(certificates: Certificate[]): Buffer {
  return Buffer.concat(certificates.flatMap((c) => c.packets.map(encode)));
}

function encode({ tag, body }: Packet): Buffer {
  const size = body.length < 0x100 ? 1 : body.length < 0x10000 ? 2 : 4;
  const head = Buffer.alloc(1 + size);
  head[0] = 0x80 | (tag << 2) | (size >> 1); // length type 0, 1, 2: one, two, four octets
  head.writeUIntBE(body.length, 1, size);
  return Buffer.concat([head, body]);
}

/** Groups the packets per primary key, keeping what the keyring needs (see the top of the file). */
function certificates(list: Packet[]): Certificate[] {
  const out: Certificate[] = [];
  let stray: string | undefined;
  let keepSignatures = true;
  for (const packet of list) {
    const current = out[out.length - 1];
    const { tag } = packet;
    if (tag === PUBLIC_KEY) {
      keyVersion(packet.body, `primary key ${out.length + 1}`);
      const fingerprint = v4Fingerprint(packet.body);
      if (out.some((c) => c.fingerprint === fingerprint))
        throw new OpenPgpError(`primary key ${fingerprint} appears twice`);
      out.push({ fingerprint, subkeys: 0, packets: [packet] });
      keepSignatures = true;
    } else if (tag === PUBLIC_SUBKEY) {
      if (!current) throw new OpenPgpError("a subkey comes before any primary key");
      keyVersion(packet.body, `subkey ${current.subkeys + 1} of ${current.fingerprint}`);
      current.subkeys++;
      current.packets.push(packet);
      keepSignatures = true;
    } else if (tag === SIGNATURE || tag === USER_ID || tag === USER_ATTRIBUTE) {
      if (!current) stray ??= TAG_NAMES[tag];
      else if (tag === USER_ATTRIBUTE)
        keepSignatures = false; // its signatures go with it
      else if (tag === USER_ID) {
        current.packets.push(packet);
        keepSignatures = true;
      } else if (keepSignatures) current.packets.push(packet);
    } else if (tag !== TRUST && tag !== MARKER) {
      throw new OpenPgpError(
        `it holds a ${TAG_NAMES[tag] ?? `tag ${tag}`} packet, which has no place in a published public key`,
      );
    }
  }
  if (out.length === 0) throw new OpenPgpError("it holds no public key");
  if (stray) throw new OpenPgpError(`a ${stray} packet comes before the first primary key`);
  return out;
}

/** One packet header at `at`: its tag, where its body starts and how long it is (RFC 4880 4.2). */
function header(data: Buffer, at: number): { tag: number; start: number; length: number } {
  const first = data[at];
  if ((first & 0x80) === 0) {
    const text = data.subarray(at, at + 10).toString("latin1");
    if (text.startsWith("-----"))
      throw new OpenPgpError(
        `armour after the binary packets at byte ${at}: a key file is binary packets or one armour block, not both`,
      );
    throw new OpenPgpError(`byte ${at} is not a packet header`);
  }
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
    if (start + length > data.length)
      throw new OpenPgpError(`the packet at byte ${at} is truncated (${length} bytes announced)`);
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
    `${what} is a version ${version ?? "(empty)"} key; only version 4 keys are supported (gpgv on Debian 12 and ` +
      `Ubuntu 22.04 reads no other, and repository keys are v4)`,
  );
}

/**
 * Primary keys anywhere in a refused file, to name them: in its raw bytes (binary keyrings, binary
 * after armour) and in every armour block apt would decode. A v4 public-key packet is recognised where
 * it parses and is followed by a packet a key has (or ends the data). Lenient by design: messages only.
 */
function keysAnywhere(file: Buffer): string[] {
  const found = new Set<string>();
  for (const region of [file, ...aptArmourBlocks(file)]) {
    for (let at = 0; at < region.length; at++) {
      const first = region[at];
      if (first !== 0x98 && first !== 0x99 && first !== 0x9a && first !== 0xc6) continue;
      try {
        const { tag, start, length } = header(region, at);
        const end = start + length;
        const next = end < region.length ? header(region, end).tag : undefined;
        if (
          tag === PUBLIC_KEY &&
          end <= region.length &&
          region[start] === 4 &&
          (next === undefined || [2, 12, 13, 14, 17].includes(next))
        ) {
          found.add(v4Fingerprint(region.subarray(start, end)));
        }
      } catch {
        // Not a packet here: carry on looking.
      }
    }
  }
  return [...found];
}
