// SCRAM-SHA-256 secrets computed in the job, so the plain password never reaches the VM for ALTER ROLE:
// PostgreSQL stores a string of this exact shape as it is (it recognises it as already hashed), and
// what travels to the server, and could show up in pg_stat_activity or a log, is only the verifier.
//
//   SCRAM-SHA-256$<iterations>:<base64 salt>$<base64 StoredKey>:<base64 ServerKey>        (RFC 5802/7677)
//
// SASLprep: PostgreSQL runs the password through SASLprep before hashing, but copies a pure-ASCII
// password verbatim (src/common/saslprep.c: pg_is_ascii -> strdup). So for ASCII passwords, quotes,
// backslashes, spaces and all, the secret computed here is exactly the server's. For a password with
// other characters the full SASLprep needs Unicode 3.2 tables this job does not carry; there the
// handler lets the server hash it (see handler.ts) and uses `prepareApproximately` only to notice
// that the stored secret already matches (a false "differs" costs one needless update, nothing more).

import * as crypto from "node:crypto";

/** PostgreSQL's default (scram_iterations in 16+, fixed before). */
export const SCRAM_ITERATIONS = 4096;
/** SCRAM_DEFAULT_SALT_LEN in PostgreSQL. */
export const SCRAM_SALT_BYTES = 16;

export interface ScramSecret {
  iterations: number;
  salt: Buffer;
  storedKey: Buffer;
  serverKey: Buffer;
}

/** True when every character is 7-bit ASCII: then SASLprep leaves the password exactly as it is. */
export function isAscii(password: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the whole 7-bit range is the point, controls included.
  return /^[\x00-\x7f]*$/.test(password);
}

// RFC 3454 C.1.2 (non-ASCII space characters -> U+0020) and B.1 (commonly mapped to nothing).
const NON_ASCII_SPACE = /[\u00a0\u1680\u2000-\u200b\u202f\u205f\u3000]/g;
// biome-ignore lint/suspicious/noMisleadingCharacterClass: RFC 3454 B.1 lists these combining code points one by one.
const MAPPED_TO_NOTHING = /[\u00ad\u034f\u1806\u180b-\u180d\u200c\u200d\u2060\ufe00-\ufe0f\ufeff]/g;

/**
 * SASLprep's mapping and NFKC steps, without its prohibition and bidi checks (those make PostgreSQL
 * fall back to the raw password). Exact for ASCII and for ordinary text in any script.
 */
export function prepareApproximately(password: string): string {
  if (isAscii(password)) return password;
  return password.replace(NON_ASCII_SPACE, " ").replace(MAPPED_TO_NOTHING, "").normalize("NFKC");
}

function hmac(key: Buffer, text: string): Buffer {
  return crypto.createHmac("sha256", key).update(text, "utf8").digest();
}

function keys(prepared: string, salt: Buffer, iterations: number): { storedKey: Buffer; serverKey: Buffer } {
  const salted = crypto.pbkdf2Sync(Buffer.from(prepared, "utf8"), salt, iterations, 32, "sha256");
  const clientKey = hmac(salted, "Client Key");
  return { storedKey: crypto.createHash("sha256").update(clientKey).digest(), serverKey: hmac(salted, "Server Key") };
}

/** The secret PostgreSQL would store for `password` (already SASLprep'd when not ASCII). */
export function scramSecret(prepared: string, salt: Buffer = crypto.randomBytes(SCRAM_SALT_BYTES), iterations = SCRAM_ITERATIONS): string {
  const { storedKey, serverKey } = keys(prepared, salt, iterations);
  return `SCRAM-SHA-256$${iterations}:${salt.toString("base64")}$${storedKey.toString("base64")}:${serverKey.toString("base64")}`;
}

/** Parses a stored SCRAM-SHA-256 secret; undefined for anything else (md5, plain, null). */
export function parseScramSecret(text: string | null | undefined): ScramSecret | undefined {
  const m = /^SCRAM-SHA-256\$([0-9]+):([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+):([A-Za-z0-9+/=]+)$/.exec(text ?? "");
  if (!m) return undefined;
  const iterations = Number(m[1]);
  if (!(iterations >= 1)) return undefined;
  return { iterations, salt: Buffer.from(m[2], "base64"), storedKey: Buffer.from(m[3], "base64"), serverKey: Buffer.from(m[4], "base64") };
}

/** What the role's stored password (pg_authid.rolpassword) is, compared with the one wanted. */
export type StoredPasswordState =
  /** SCRAM-SHA-256 of this very password: nothing to do. */
  | "same"
  /** SCRAM-SHA-256 of another password. */
  | "different"
  /** md5 of this password: it works, but not with scram-sha-256 in pg_hba.conf; re-hash it. */
  | "md5"
  /** md5 of another password, a plain one, or none at all. */
  | "unset-or-other";

/** Compares the stored secret with `password` for role `user`, recomputing with the stored salt. */
export function storedPasswordState(stored: string | null | undefined, password: string, user: string): StoredPasswordState {
  const scram = parseScramSecret(stored);
  if (scram) {
    const { storedKey, serverKey } = keys(prepareApproximately(password), scram.salt, scram.iterations);
    const same =
      storedKey.length === scram.storedKey.length &&
      crypto.timingSafeEqual(storedKey, scram.storedKey) &&
      serverKey.length === scram.serverKey.length &&
      crypto.timingSafeEqual(serverKey, scram.serverKey);
    return same ? "same" : "different";
  }
  if (stored && /^md5[0-9a-f]{32}$/.test(stored)) {
    const md5 =
      "md5" +
      crypto
        .createHash("md5")
        .update(password + user, "utf8")
        .digest("hex");
    return md5 === stored ? "md5" : "unset-or-other";
  }
  return "unset-or-other";
}
