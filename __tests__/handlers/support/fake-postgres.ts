// A scripted PostgreSQL server at the other end of an in-memory stream, for the login check's tests: it
// answers an SSLRequest (if one comes) with N, then asks for what `mode` says (SCRAM-SHA-256 done right, cleartext, md5,
// SCRAM with a wrong server signature, or "ok" without asking at all), answers one query with `who`,
// and keeps every byte the client wrote. The server side of SCRAM is written here from RFC 5802, apart
// from the code under test (only scram.ts's verifier, the server's stored form, is shared).

import * as crypto from "node:crypto";
import { Duplex } from "node:stream";
import { scramSecret } from "../../../handlers/install-postgres/scram";

export type FakeMode =
  | "scram"
  | "cleartext"
  | "md5"
  | "bad-signature"
  | "ok-without-auth"
  | "sasl-other"
  /** pg_hba.conf admits the role with encryption only (hostssl): a startup without an SSLRequest is refused. */
  | "ssl-required";

export interface FakePostgres {
  /** The job's end of the stream. */
  client: Duplex;
  /** Every byte the client wrote, in order. */
  received(): Buffer;
  /** Whether the client began with an SSLRequest. */
  askedSsl(): boolean;
  /** Whether the client authenticated with a valid proof (SCRAM modes). */
  proofAccepted: boolean;
}

const msg = (type: string, body: Buffer) => {
  const head = Buffer.alloc(5);
  head.write(type, 0, "latin1");
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
};
const auth = (code: number, data: Buffer = Buffer.alloc(0)) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(code);
  return msg("R", Buffer.concat([b, data]));
};
const hmac = (key: Buffer, text: string) => crypto.createHmac("sha256", key).update(text).digest();

/** A fake server whose role has `password` (or `verifier`); `who` is the JSON text its query answers with. */
export function fakePostgres(opts: {
  password: string;
  /** The role's stored SCRAM verifier, when the test has that rather than the password. */
  verifier?: string;
  mode?: FakeMode;
  who?: string;
}): FakePostgres {
  const mode = opts.mode ?? "scram";
  const secret = opts.verifier ?? scramSecret(opts.password, crypto.randomBytes(16), 4096);
  const [, iter, salt, stored, server] = /^SCRAM-SHA-256\$(\d+):([^$]+)\$([^:]+):(.+)$/.exec(secret) ?? [];
  const chunks: Buffer[] = [];
  let pending = Buffer.alloc(0);
  let stage: "ssl" | "startup" | "sasl-first" | "sasl-final" | "ready" | "closed" = "ssl";
  let clientFirstBare = "";
  let startupUser = "";
  /** Whether an SSLRequest came first (the fake answers N; "ssl-required" then lets the startup through). */
  let askedSsl = false;
  let serverFirst = "";
  const state = { proofAccepted: false };

  const client = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk);
      pending = Buffer.concat([pending, chunk]);
      try {
        while (stage !== "closed" && step());
      } catch (err) {
        client.destroy(err as Error);
      }
      done();
    },
    final(done) {
      stage = "closed";
      client.push(null);
      done();
    },
  });
  const send = (b: Buffer) => client.push(b);

  /** Handles one whole client message if there is one; false when more bytes are needed. */
  function step(): boolean {
    const untyped = stage === "ssl" || stage === "startup";
    const need = untyped ? 4 : 5;
    if (pending.length < need) return false;
    const len = untyped ? pending.readInt32BE(0) : pending.readInt32BE(1);
    const total = untyped ? len : len + 1;
    if (pending.length < total) return false;
    const type = untyped ? "" : String.fromCharCode(pending[0]);
    const body = pending.subarray(untyped ? 4 : 5, total);
    pending = pending.subarray(total);
    if (stage === "ssl" && body.readInt32BE(0) === 80877103) {
      send(Buffer.from("N"));
      stage = "startup";
      askedSsl = true;
    } else if (stage === "ssl" && mode === "ssl-required") {
      const why = 'no pg_hba.conf entry for host "127.0.0.1", user "app_user", database "myapp", no encryption';
      send(msg("E", Buffer.from(`SFATAL\0C28000\0M${why}\0\0`)));
      stage = "closed";
      client.push(null);
    } else if (stage === "ssl" || stage === "startup") {
      if (body.readInt32BE(0) !== 196608) throw new Error("fake: expected a startup message (protocol 3.0)");
      const params = body.subarray(4).toString("utf8").split("\0");
      startupUser = params[params.indexOf("user") + 1] ?? "";
      stage = "sasl-first";
      if (mode === "cleartext") send(auth(3));
      else if (mode === "md5") send(auth(5, Buffer.from([1, 2, 3, 4])));
      else if (mode === "ok-without-auth") ready();
      else if (mode === "sasl-other") send(auth(10, Buffer.from("SCRAM-SHA-1\0\0")));
      else send(auth(10, Buffer.from("SCRAM-SHA-256-PLUS\0SCRAM-SHA-256\0\0")));
    } else if (type === "p" && stage === "sasl-first" && ["scram", "bad-signature", "ssl-required"].includes(mode)) {
      const mech = body.subarray(0, body.indexOf(0)).toString();
      if (mech !== "SCRAM-SHA-256") throw new Error(`fake: mechanism ${mech}`);
      const data = body.subarray(body.indexOf(0) + 5).toString();
      if (!data.startsWith("n,,")) throw new Error(`fake: gs2 header of ${data}`);
      clientFirstBare = data.slice(3);
      const cnonce = /(?:^|,)r=([^,]+)/.exec(clientFirstBare)?.[1] ?? "";
      serverFirst = `r=${cnonce}${crypto.randomBytes(12).toString("base64")},s=${salt},i=${iter}`;
      send(auth(11, Buffer.from(serverFirst)));
      stage = "sasl-final";
    } else if (type === "p" && stage === "sasl-final") {
      const final = body.toString();
      const withoutProof = final.replace(/,p=[^,]*$/, "");
      const proof = Buffer.from(/,p=([^,]*)$/.exec(final)?.[1] ?? "", "base64");
      const authMessage = `${clientFirstBare},${serverFirst},${withoutProof}`;
      const signature = hmac(Buffer.from(stored, "base64"), authMessage);
      const clientKey = Buffer.from(proof.map((b, i) => b ^ signature[i]));
      const ok =
        proof.length === 32 &&
        crypto.createHash("sha256").update(clientKey).digest().equals(Buffer.from(stored, "base64"));
      if (!ok) {
        send(msg("E", Buffer.from('SFATAL\0C28P01\0Mpassword authentication failed for user "app_user"\0\0')));
        return false;
      }
      state.proofAccepted = true;
      const v = mode === "bad-signature" ? crypto.randomBytes(32) : hmac(Buffer.from(server, "base64"), authMessage);
      send(auth(12, Buffer.from(`v=${v.toString("base64")}`)));
      ready();
    } else if (type === "Q" && stage === "ready") {
      const who = Buffer.from(opts.who ?? "{}");
      const row = Buffer.alloc(6);
      row.writeInt16BE(1);
      row.writeInt32BE(who.length, 2);
      send(msg("T", Buffer.from([0, 1, ...Buffer.from("json_build_object\0"), ...Buffer.alloc(18)])));
      send(msg("D", Buffer.concat([row, who])));
      send(msg("C", Buffer.from("SELECT 1\0")));
      send(msg("Z", Buffer.from("I")));
    } else if (type === "X") {
      stage = "closed";
      client.push(null);
    }
    // Anything else (a cleartext or md5 answer) is only kept in `received`.
    return true;
  }

  function ready() {
    stage = "ready";
    send(auth(0));
    const version = (JSON.parse(opts.who ?? "{}") as { server_version?: string }).server_version ?? "15.10";
    send(msg("S", Buffer.from(`server_version\0${version}\0`)));
    send(msg("S", Buffer.from(`session_authorization\0${startupUser}\0`)));
    send(msg("K", Buffer.alloc(8)));
    send(msg("Z", Buffer.from("I")));
  }

  return {
    client,
    askedSsl: () => askedSsl,
    received: () => Buffer.concat(chunks),
    get proofAccepted() {
      return state.proofAccepted;
    },
  };
}
