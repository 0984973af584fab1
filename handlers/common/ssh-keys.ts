// The job's private key (OpenSSH, PEM or PKCS#8 forms, converted to what ssh2 reads) and host key
// fingerprints in OpenSSH's own "SHA256:<base64, no padding>" form.
import * as crypto from "node:crypto";
import { utils } from "ssh2";

/** A private key ssh2 accepts, and its type for messages ("ssh-ed25519", "ssh-rsa", ...). */
export interface PrivateKey {
  text: string;
  type: string;
  /** Where the key came from, as messages name it: "SSH_KEY", or the cdktf.json setting (SSH_KEY_SETTING). */
  source?: string;
}

/** Thrown for a key that cannot be used; the message never contains any of the key. */
export class SshKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SshKeyError";
  }
}

/** ssh wire-format string: uint32 length + bytes. */
export function sshString(data: Buffer | string): Buffer {
  const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(bytes.length);
  return Buffer.concat([len, bytes]);
}

/** An ed25519 key (seed + public half) written as OpenSSH's unencrypted openssh-key-v1 text. */
export function openSshEd25519(seed: Buffer, pub: Buffer): string {
  const publicBlob = Buffer.concat([sshString("ssh-ed25519"), sshString(pub)]);
  const check = crypto.randomBytes(4);
  let section = Buffer.concat([
    check,
    check,
    sshString("ssh-ed25519"),
    sshString(pub),
    sshString(Buffer.concat([seed, pub])),
    sshString(""),
  ]);
  const pad = (8 - (section.length % 8)) % 8;
  section = Buffer.concat([section, Buffer.from(Array.from({ length: pad }, (_, i) => i + 1))]);
  const body = Buffer.concat([
    Buffer.from("openssh-key-v1\0"),
    sshString("none"),
    sshString("none"),
    sshString(""),
    Buffer.from([0, 0, 0, 1]),
    sshString(publicBlob),
    sshString(section),
  ]).toString("base64");
  return (
    `-----BEGIN OPENSSH PRIVATE KEY-----\n${body.match(/.{1,70}/g)!.join("\n")}\n-----END OPENSSH PRIVATE ` +
    `KEY-----\n`
  );
}

/**
 * PKCS#8 ("BEGIN PRIVATE KEY", what openssl and many tools write) is not a format ssh2 reads; convert
 * it to one it does: PKCS#1 for RSA, SEC1 for ECDSA, OpenSSH for ed25519.
 */
function fromPkcs8(text: string): string | undefined {
  let key: crypto.KeyObject;
  try {
    key = crypto.createPrivateKey({ key: text, format: "pem" });
  } catch {
    return undefined;
  }
  switch (key.asymmetricKeyType) {
    case "rsa":
      return key.export({ type: "pkcs1", format: "pem" }) as string;
    case "ec":
      return key.export({ type: "sec1", format: "pem" }) as string;
    case "ed25519": {
      const jwk = key.export({ format: "jwk" });
      return openSshEd25519(Buffer.from(jwk.d!, "base64url"), Buffer.from(jwk.x!, "base64url"));
    }
    default:
      return undefined;
  }
}

/**
 * Parses SSH_KEY text: OpenSSH (ed25519, RSA, ECDSA), PEM PKCS#1/SEC1, and PKCS#8 (converted).
 * Throws SshKeyError saying what is wrong and what to give instead, naming the key as `source` does
 * (the setting a user wrote, when known: "vms[db].privateKeyPath (vm_key)", not the variable it travels in).
 */
export function parsePrivateKey(text: string, source = "SSH_KEY"): PrivateKey {
  const encrypted = () =>
    new SshKeyError(
      `${source} is encrypted with a passphrase, and a job cannot type one: give an unencrypted key (ssh-keygen -p ` +
        "-N '' -f <keyfile> removes the passphrase from a copy)",
    );
  if (/BEGIN ENCRYPTED PRIVATE KEY|Proc-Type: 4,ENCRYPTED/.test(text)) throw encrypted();
  const candidates = [text];
  if (/-----BEGIN PRIVATE KEY-----/.test(text)) {
    const converted = fromPkcs8(text);
    if (converted) candidates.unshift(converted);
  }
  let reason = "";
  for (const candidate of candidates) {
    const parsed = utils.parseKey(candidate);
    const key = Array.isArray(parsed) ? parsed[0] : parsed;
    if (key instanceof Error) {
      if (/[Ee]ncrypted/.test(key.message)) throw encrypted();
      reason = key.message;
      continue;
    }
    if (!key.isPrivateKey()) {
      throw new SshKeyError(`${source} holds a public key; it must hold the private key (the key file without .pub)`);
    }
    return { text: candidate, type: key.type, ...(source === "SSH_KEY" ? {} : { source }) };
  }
  throw new SshKeyError(
    `${source} could not be read as a private key (${reason || "unknown format"}); supported: OpenSSH ("BEGIN ` +
      `OPENSSH PRIVATE KEY") ed25519, RSA and ECDSA, and PEM ("BEGIN RSA/EC PRIVATE KEY", "BEGIN PRIVATE KEY")`,
  );
}

/** OpenSSH's fingerprint of a host key blob: "SHA256:" + base64(sha256(blob)) without "=" padding. */
export function fingerprintSha256(keyBlob: Buffer): string {
  return `SHA256:${crypto.createHash("sha256").update(keyBlob).digest("base64").replace(/=+$/, "")}`;
}

/** The algorithm name at the start of a key blob, e.g. "ssh-ed25519". */
export function keyBlobType(keyBlob: Buffer): string {
  if (keyBlob.length < 4) return "unknown";
  const len = keyBlob.readUInt32BE(0);
  return len > 0 && len < 64 && keyBlob.length >= 4 + len ? keyBlob.subarray(4, 4 + len).toString("latin1") : "unknown";
}
