// SCRAM-SHA-256 secrets computed in the job, so the plain password never reaches the VM for ALTER ROLE:
// PostgreSQL stores a string of this exact shape as it is (it recognises it as already hashed), and
// what travels to the server, and could show up in pg_stat_activity or a log, is only the verifier.
//
//   SCRAM-SHA-256$<iterations>:<base64 salt>$<base64 StoredKey>:<base64 ServerKey>        (RFC 5802/7677)

import * as crypto from "node:crypto";
import { postgresSaslprep } from "./saslprep";

/** PostgreSQL's default (scram_iterations in 16+, fixed before): what the secrets made here use. */
const SCRAM_ITERATIONS = 4096;
/** SCRAM_DEFAULT_SALT_LEN in PostgreSQL. */
const SCRAM_SALT_BYTES = 16;
/** SCRAM_KEY_LEN (SHA-256): StoredKey and ServerKey are exactly this long. */
const SCRAM_KEY_BYTES = 32;
/** The longest salt a stored verifier may have here: far beyond the 16 bytes PostgreSQL and libpq write. */
const MAX_SCRAM_SALT_BYTES = 64;
/**
 * The ceiling on the iteration count this job will compute, whatever the server says: checking a stored
 * verifier runs PBKDF2 with its count, synchronously, on the job's only thread. 1,000,000 SHA-256
 * iterations take about 0.3 s here (OWASP's 2023 advice for PBKDF2-SHA256 is 600,000).
 */
export const MAX_SCRAM_ITERATIONS = 1_000_000;

/**
 * The most iterations a stored verifier may ask for before it is not checked but replaced: the server's
 * scram_iterations where it has one (PostgreSQL 16+; null before, where every verifier the server makes
 * has 4096), never below SCRAM_ITERATIONS (so a secret made here is always checkable: reruns converge) and
 * never above MAX_SCRAM_ITERATIONS. Any role may set its own password to a verifier it made itself: without
 * this cap, 2^31-1 iterations would stall every run and every check past its time budget.
 */
export function iterationCap(serverScramIterations?: string | null): number {
  const server = /^[1-9][0-9]{0,9}$/.test(serverScramIterations ?? "") ? Number(serverScramIterations) : 0;
  return Math.min(MAX_SCRAM_ITERATIONS, Math.max(SCRAM_ITERATIONS, server));
}

export interface ScramSecret {
  iterations: number;
  salt: Buffer;
  storedKey: Buffer;
  serverKey: Buffer;
}

export function hmacSha256(key: Buffer, text: string): Buffer {
  return crypto.createHmac("sha256", key).update(text, "utf8").digest();
}

/** RFC 5802's ClientKey, StoredKey and ServerKey of an already SASLprep'd password (PBKDF2-HMAC-SHA-256). */
export function scramKeys(
  prepared: string,
  salt: Buffer,
  iterations: number,
): { clientKey: Buffer; storedKey: Buffer; serverKey: Buffer } {
  const salted = crypto.pbkdf2Sync(Buffer.from(prepared, "utf8"), salt, iterations, 32, "sha256");
  const clientKey = hmacSha256(salted, "Client Key");
  return {
    clientKey,
    storedKey: crypto.createHash("sha256").update(clientKey).digest(),
    serverKey: hmacSha256(salted, "Server Key"),
  };
}
const keys = scramKeys;

/** The secret PostgreSQL would store for a password it SASLprep'd into `prepared` (saslprep.ts). */
export function scramSecret(
  prepared: string,
  salt: Buffer = crypto.randomBytes(SCRAM_SALT_BYTES),
  iterations = SCRAM_ITERATIONS,
): string {
  const { storedKey, serverKey } = keys(prepared, salt, iterations);
  const [s, stored, server] = [salt, storedKey, serverKey].map((b) => b.toString("base64"));
  return `SCRAM-SHA-256$${iterations}:${s}$${stored}:${server}`;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Canonical base64 (RFC 4648, padded) of 1..maxBytes bytes, or a reason it is not. */
function base64Field(
  text: string,
  what: string,
  bytes: { min: number; max: number },
): { value?: Buffer; problem?: string } {
  if (text === "" || !BASE64.test(text)) return { problem: `its ${what} is not base64` };
  const value = Buffer.from(text, "base64");
  if (value.toString("base64") !== text) return { problem: `its ${what} is not canonical base64` };
  if (value.length < bytes.min || value.length > bytes.max) {
    return {
      problem:
        `its ${what} is ${value.length} bytes, ` +
        `not ${bytes.min === bytes.max ? bytes.min : `${bytes.min} to ${bytes.max}`}`,
    };
  }
  return { value };
}

/**
 * Reads a stored SCRAM-SHA-256 secret, checking every field before any of it is used: iterations a
 * decimal from 1 to `maxIterations` (see iterationCap), a salt of 1 to 64 bytes and both keys of exactly
 * 32, all canonical base64. `problem` says what is wrong (no part of the secret is quoted).
 */
export function readScramSecret(
  text: string,
  maxIterations = SCRAM_ITERATIONS,
): { secret?: ScramSecret; problem?: string } {
  if (text.length > 512) return { problem: `it is ${text.length} characters long` };
  const m = /^SCRAM-SHA-256\$([^:$]*):([^$]*)\$([^:]*):(.*)$/s.exec(text);
  if (!m) return { problem: "it is not iterations:salt$StoredKey:ServerKey" };
  const [, iter, saltText, storedText, serverText] = m;
  if (!/^[1-9][0-9]{0,9}$/.test(iter))
    return { problem: `its iteration count ${JSON.stringify(iter.slice(0, 20))} is not a whole number from 1` };
  const iterations = Number(iter);
  if (iterations > maxIterations)
    return { problem: `its iteration count ${iterations} is above the ${maxIterations} this installer computes` };
  const salt = base64Field(saltText, "salt", { min: 1, max: MAX_SCRAM_SALT_BYTES });
  const storedKey = base64Field(storedText, "StoredKey", { min: SCRAM_KEY_BYTES, max: SCRAM_KEY_BYTES });
  const serverKey = base64Field(serverText, "ServerKey", { min: SCRAM_KEY_BYTES, max: SCRAM_KEY_BYTES });
  const problem = salt.problem ?? storedKey.problem ?? serverKey.problem;
  if (problem) return { problem };
  return {
    secret: {
      iterations,
      salt: salt.value as Buffer,
      storedKey: storedKey.value as Buffer,
      serverKey: serverKey.value as Buffer,
    },
  };
}

/**
 * Why a stored secret that says it is SCRAM-SHA-256 is not checked (it is replaced instead); undefined
 * when it is fine or not SCRAM.
 */
export function scramVerifierProblem(
  text: string | null | undefined,
  maxIterations = SCRAM_ITERATIONS,
): string | undefined {
  if (!text?.startsWith("SCRAM-SHA-256$")) return undefined;
  return readScramSecret(text, maxIterations).problem;
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

/**
 * Compares the stored secret with `password` for role `user`, recomputing with the stored salt. A SCRAM
 * secret readScramSecret refuses (iterations above `maxIterations`, zero, negative, not a number; a
 * salt or key of the wrong length or not base64) is never computed: it is "different", so the password
 * is set again, which replaces it with a verifier of sane iterations.
 */
export function storedPasswordState(
  stored: string | null | undefined,
  password: string,
  user: string,
  maxIterations = SCRAM_ITERATIONS,
): StoredPasswordState {
  if (stored?.startsWith("SCRAM-SHA-256$")) {
    const scram = readScramSecret(stored, maxIterations).secret;
    if (!scram) return "different";
    // Where PostgreSQL's SASLprep is one of two strings (saslprep.ts), the server stored one of them.
    const same = postgresSaslprep(password).some((prepared) => {
      const { storedKey, serverKey } = keys(prepared, scram.salt, scram.iterations);
      return (
        storedKey.length === scram.storedKey.length &&
        crypto.timingSafeEqual(storedKey, scram.storedKey) &&
        serverKey.length === scram.serverKey.length &&
        crypto.timingSafeEqual(serverKey, scram.serverKey)
      );
    });
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
