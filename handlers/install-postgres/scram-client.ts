// The client side of SCRAM-SHA-256 (RFC 5802/7677) as PostgreSQL speaks it: what the login check sends
// is a proof the password was known, never the password, and success needs the server's own proof
// (ServerSignature) that it holds the role's verifier. No channel binding ("n,,"): TLS, when the server
// offers it, is not what proves the peer here; the listener look and the server signature are.

import * as crypto from "node:crypto";
import { hmacSha256, MAX_SCRAM_ITERATIONS, scramKeys } from "./scram";

export const SCRAM_MECHANISM = "SCRAM-SHA-256";

/** The peer broke the SCRAM exchange or failed to prove itself: nothing more is sent to it. */
export class ScramRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ScramRefused";
  }
}

const GS2_HEADER = "n,,";
// RFC 5802 `printable`: %x21-2B / %x2D-7E (no comma).
const NONCE = /^[\x21-\x2b\x2d-\x7e]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** One exchange: first() -> final(server-first-message) -> verify(server-final-message). */
export class ScramClient {
  private readonly clientFirstBare: string;
  private expectedSignature?: Buffer;

  constructor(
    /** The password as PostgreSQL's SASLprep leaves it (saslprep.ts): the string both sides hash. */
    private readonly prepared: string,
    private readonly nonce = crypto.randomBytes(18).toString("base64"),
    /** SCRAM's user name: PostgreSQL takes the role from the startup message (libpq sends ""). */
    saslName = "",
  ) {
    if (!NONCE.test(nonce) || /[=,]/.test(saslName)) throw new Error("ScramClient: a nonce or name SCRAM cannot carry");
    this.clientFirstBare = `n=${saslName},r=${this.nonce}`;
  }

  /** client-first-message: nothing derived from the password. */
  first(): string {
    return GS2_HEADER + this.clientFirstBare;
  }

  /**
   * client-final-message, with the proof, for a server-first-message that passes every check: printable,
   * no mandatory extension, a nonce that extends ours, a base64 salt, and an iteration count from 1 to
   * MAX_SCRAM_ITERATIONS (a peer cannot make the job compute for ever).
   */
  final(serverFirst: string): string {
    if (this.expectedSignature) throw new ScramRefused("the server sent a second server-first-message");
    const attrs = attributes(serverFirst, "server-first-message");
    if (attrs.m !== undefined)
      throw new ScramRefused("the server asked for a SCRAM extension (m=) this client has not");
    const nonce = attrs.r ?? "";
    if (!nonce.startsWith(this.nonce) || nonce.length === this.nonce.length || !NONCE.test(nonce))
      throw new ScramRefused("the server's nonce does not extend the client's");
    const saltText = attrs.s ?? "";
    if (saltText === "" || !BASE64.test(saltText)) throw new ScramRefused("the server's salt is not base64");
    const iterText = attrs.i ?? "";
    const iterations = /^[1-9][0-9]{0,9}$/.test(iterText) ? Number(iterText) : 0;
    if (iterations < 1 || iterations > MAX_SCRAM_ITERATIONS)
      throw new ScramRefused(
        `the server asked for ${JSON.stringify(iterText.slice(0, 12))} iterations, not 1 to ${MAX_SCRAM_ITERATIONS}`,
      );

    const { clientKey, storedKey, serverKey } = scramKeys(this.prepared, Buffer.from(saltText, "base64"), iterations);
    const withoutProof = `c=${Buffer.from(GS2_HEADER).toString("base64")},r=${nonce}`;
    const authMessage = `${this.clientFirstBare},${serverFirst},${withoutProof}`;
    const clientSignature = hmacSha256(storedKey, authMessage);
    const proof = Buffer.alloc(clientKey.length);
    for (let i = 0; i < proof.length; i++) proof[i] = clientKey[i] ^ clientSignature[i];
    this.expectedSignature = hmacSha256(serverKey, authMessage);
    return `${withoutProof},p=${proof.toString("base64")}`;
  }

  /** Accepts the server-final-message only when it carries exactly the ServerSignature computed in final(). */
  verify(serverFinal: string): void {
    if (!this.expectedSignature) throw new ScramRefused("the server sent its final message before the client's proof");
    const attrs = attributes(serverFinal, "server-final-message");
    if (attrs.e !== undefined) throw new ScramRefused(`the server ended the exchange: ${attrs.e.slice(0, 80)}`);
    const text = attrs.v ?? "";
    const signature = BASE64.test(text) ? Buffer.from(text, "base64") : Buffer.alloc(0);
    if (
      signature.length !== this.expectedSignature.length ||
      !crypto.timingSafeEqual(signature, this.expectedSignature)
    )
      throw new ScramRefused("the server's signature is wrong: it does not hold this role's SCRAM verifier");
  }
}

/** `a=value,b=value` into a map; printable ASCII only, each attribute a single letter, first one wins. */
function attributes(message: string, what: string): Record<string, string> {
  if (message.length > 4096 || !/^[\x20-\x7e]*$/.test(message))
    throw new ScramRefused(`the ${what} is not printable ASCII of a sane length`);
  const out: Record<string, string> = {};
  for (const part of message.split(",")) {
    const m = /^([A-Za-z])=(.*)$/s.exec(part);
    if (!m) throw new ScramRefused(`the ${what} has a malformed attribute`);
    out[m[1]] ??= m[2];
  }
  return out;
}
