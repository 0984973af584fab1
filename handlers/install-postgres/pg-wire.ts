// The PostgreSQL wire protocol (v3), the little of it the login check needs, spoken by the job itself
// over a stream to the server (an SSH channel from the VM): StartupMessage, SCRAM-SHA-256 and nothing
// else, the ParameterStatus up to ReadyForQuery, Terminate. psql on the VM cannot refuse a cleartext or
// md5 request before libpq 16 (require_auth), and a listener that is not the server would get the
// password; here every other authentication request ends the exchange before a byte derived from it goes.

import type { Duplex } from "node:stream";
import * as tls from "node:tls";
import { SCRAM_MECHANISM, ScramClient, ScramRefused } from "./scram-client";

/** The server answered with an ErrorResponse (password refused, no pg_hba.conf entry, ...). */
export class ServerRefused extends Error {
  constructor(
    message: string,
    /** SQLSTATE, e.g. 28P01 (password authentication failed), 28000 (no pg_hba.conf entry). */
    readonly sqlstate: string,
  ) {
    super(message);
    this.name = "ServerRefused";
  }
}

export interface WireLogin {
  user: string;
  database: string;
  /** The password as PostgreSQL's SASLprep leaves it (saslprep.ts postgresSaslprep). */
  prepared: string;
  /**
   * "prefer": an SSLRequest first, TLS when the server has it (libpq's sslmode=prefer, a round trip and a
   * handshake); "off": no TLS, for a loopback peer whose rules do not ask for it.
   */
  tls: "prefer" | "off";
  timeoutMs?: number;
}

/** What the exchange proved: the session's user and the server's version, as the server reported them. */
export interface WireAnswer {
  /** ParameterStatus server_version, e.g. "15.10 (Debian 15.10-0+deb12u1)". */
  serverVersion: string;
  /** ParameterStatus session_authorization: the role the session runs as. */
  sessionUser: string;
  /** The session ran in TLS (the server accepted the SSLRequest). */
  tls: boolean;
}

const MAX_MESSAGE = 1024 * 1024;
const AUTH_NAMES: Record<number, string> = {
  2: "Kerberos V5",
  3: "a cleartext password",
  5: "an MD5 password hash",
  7: "GSSAPI",
  9: "SSPI",
};

/** Bytes from a stream, handed out as whole protocol messages (or one byte, for the SSLRequest's answer). */
class Inbox {
  private buf = Buffer.alloc(0);
  private wake?: () => void;
  private failure?: Error;

  constructor(private readonly stream: Duplex) {
    stream.on("data", (chunk: Buffer) => {
      this.buf = Buffer.concat([this.buf, chunk]);
      this.wake?.();
    });
    const ended = (why: string) => () => this.fail(new Error(`the server closed the connection ${why}`));
    stream.on("end", ended("(end of stream)"));
    stream.on("close", ended("(closed)"));
    stream.on("error", (err: Error) => this.fail(err));
  }

  fail(err: Error): void {
    this.failure ??= err;
    this.wake?.();
  }

  get buffered(): number {
    return this.buf.length;
  }

  private async need(n: number): Promise<void> {
    while (this.buf.length < n) {
      if (this.failure) throw this.failure;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
  }

  async byte(): Promise<number> {
    await this.need(1);
    const b = this.buf[0];
    this.buf = this.buf.subarray(1);
    return b;
  }

  async message(): Promise<{ type: string; body: Buffer }> {
    await this.need(5);
    const type = String.fromCharCode(this.buf[0]);
    const len = this.buf.readInt32BE(1);
    if (len < 4 || len > MAX_MESSAGE) throw new ScramRefused(`the server sent a message of length ${len}`);
    await this.need(1 + len);
    const body = this.buf.subarray(5, 1 + len);
    this.buf = this.buf.subarray(1 + len);
    return { type, body };
  }

  detach(): void {
    this.stream.removeAllListeners("data");
  }
}

function message(type: string, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(5);
  head.write(type, 0, "latin1");
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const cstring = (s: string) => Buffer.from(`${s}\0`, "utf8");

function startupMessage(user: string, database: string): Buffer {
  const params = ["user", user, "database", database, "client_encoding", "UTF8", "application_name", "vm-install"];
  const body = Buffer.concat([int32(196608), ...params.map(cstring), Buffer.from([0])]);
  return Buffer.concat([int32(body.length + 4), body]);
}

/** An ErrorResponse's fields (severity S, code C, message M, detail D, hint H, ...). */
function errorFields(body: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  while (i < body.length && body[i] !== 0) {
    const end = body.indexOf(0, i + 1);
    if (end < 0) break;
    out[String.fromCharCode(body[i])] = body.toString("utf8", i + 1, end);
    i = end + 1;
  }
  return out;
}

function serverError(body: Buffer): ServerRefused {
  const f = errorFields(body);
  return new ServerRefused(`${f.S ?? "ERROR"}:  ${f.M ?? "(no message)"}`.slice(0, 400), f.C ?? "");
}

/**
 * SSLRequest, as libpq's sslmode=prefer: TLS when the server has it (pg_hba.conf's hostssl lines need it),
 * plain when it says N. The certificate is not what proves the peer (the listener look and SCRAM's server
 * signature do), so it is not checked here; bytes after the 'S' before the handshake are refused
 * (CVE-2021-23222's injection).
 */
async function negotiateTls(stream: Duplex, inbox: Inbox): Promise<Duplex | undefined> {
  stream.write(Buffer.concat([int32(8), int32(80877103)]));
  const answer = await inbox.byte();
  if (answer === 0x4e) return undefined;
  if (answer !== 0x53) throw new ScramRefused(`the server answered the SSLRequest with byte ${answer}`);
  if (inbox.buffered) throw new ScramRefused("the server sent data before the TLS handshake");
  inbox.detach();
  return new Promise<Duplex>((resolve, reject) => {
    const secure = tls.connect({ socket: stream, rejectUnauthorized: false, minVersion: "TLSv1.2" }, () =>
      resolve(secure),
    );
    secure.once("error", reject);
  });
}

/**
 * Logs in over `stream` with SCRAM-SHA-256 only, up to ReadyForQuery. Refuses (ScramRefused, before any
 * byte derived from the password is written) a request for anything but SASL with SCRAM-SHA-256, and
 * (after the proof) a missing or wrong server signature, or an AuthenticationOk without one. An
 * ErrorResponse becomes ServerRefused. The stream is ended either way. The SASL initial response (a nonce,
 * nothing of the password) goes with the startup message: one round trip less (issue 30).
 */
export async function scramLogin(stream: Duplex, t: WireLogin): Promise<WireAnswer> {
  let current = stream;
  let inbox = new Inbox(stream);
  const timer = setTimeout(
    () => inbox.fail(new Error(`no answer within ${Math.round((t.timeoutMs ?? 30_000) / 1000)} s`)),
    t.timeoutMs ?? 30_000,
  );
  try {
    const secure = t.tls === "prefer" ? await negotiateTls(stream, inbox) : undefined;
    if (secure) {
      current = secure;
      inbox = new Inbox(secure);
    }
    const scram = new ScramClient(t.prepared);
    const first = Buffer.from(scram.first(), "utf8");
    const initial = message("p", cstring(SCRAM_MECHANISM), int32(first.length), first);
    current.write(Buffer.concat([startupMessage(t.user, t.database), initial]));
    await authenticate(current, inbox, scram);
    const status = await untilReady(inbox);
    current.write(message("X"));
    return {
      serverVersion: status.server_version ?? "",
      sessionUser: status.session_authorization ?? "",
      tls: secure !== undefined,
    };
  } finally {
    clearTimeout(timer);
    current.end();
    stream.destroy();
  }
}

/** The SASL exchange after the initial response, up to AuthenticationOk with the server's signature checked. */
async function authenticate(stream: Duplex, inbox: Inbox, scram: ScramClient): Promise<void> {
  let offered = false;
  let proven = false;
  for (;;) {
    const m = await inbox.message();
    if (m.type === "E") throw serverError(m.body);
    if (m.type !== "R")
      throw new ScramRefused(`the server sent message ${JSON.stringify(m.type)} before authenticating`);
    const code = m.body.readInt32BE(0);
    if (code === 10) {
      const mechanisms = m.body.subarray(4).toString("utf8").split("\0").filter(Boolean);
      if (offered || !mechanisms.includes(SCRAM_MECHANISM))
        throw new ScramRefused(`the server offered SASL ${mechanisms.join(", ").slice(0, 80)}, not ${SCRAM_MECHANISM}`);
      offered = true;
    } else if (code === 11 && offered) {
      stream.write(message("p", Buffer.from(scram.final(m.body.subarray(4).toString("utf8")), "utf8")));
    } else if (code === 12 && offered) {
      scram.verify(m.body.subarray(4).toString("utf8"));
      proven = true;
    } else if (code === 0) {
      if (!proven) throw new ScramRefused("the server let the role in without proving it knows the password");
      return;
    } else {
      const asked = AUTH_NAMES[code] ?? `authentication type ${code}`;
      throw new ScramRefused(
        `the server asked for ${asked}${offered ? " in the middle of SCRAM" : ""}, ` +
          `not ${SCRAM_MECHANISM}: nothing derived from the password was sent`,
      );
    }
  }
}

/** After AuthenticationOk: the ParameterStatus values up to ReadyForQuery (an error there is the server's refusal). */
async function untilReady(inbox: Inbox): Promise<Record<string, string>> {
  const status: Record<string, string> = {};
  for (let m = await inbox.message(); m.type !== "Z"; m = await inbox.message()) {
    if (m.type === "E") throw serverError(m.body);
    if (m.type === "S") {
      const [name, value] = m.body.toString("utf8").split("\0");
      status[name] = value ?? "";
    }
  }
  return status;
}
