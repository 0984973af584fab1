// The TCP login check's peer proofs (issue 30, finding 1): the wire client speaks SCRAM-SHA-256 only and
// needs the server's signature, against a scripted fake server (nothing derived from the password is
// written to a peer that asks for anything else); the listener decision over ss's output.
import { judgeListeners, parseListeners } from "../../handlers/install-postgres/listener";
import { ServerRefused, scramLogin, type WireLogin } from "../../handlers/install-postgres/pg-wire";
import { ScramClient, ScramRefused } from "../../handlers/install-postgres/scram-client";
import { type FakeMode, fakePostgres } from "./support/fake-postgres";
import { POSTMASTER_PID as PM, ssLine } from "./support/listener-look";

const PW = "Sw0rdfish: quotes ' \" and spaces";
const WHO = JSON.stringify({ user: "app_user", database: "myapp", server_version: "15.10" });
const login = { user: "app_user", database: "myapp", prepared: PW, timeoutMs: 5000 };

/** Runs the client against a fake in `mode`; what it returned or threw, and every byte it wrote. */
async function against(mode: FakeMode, serverPassword = PW, tls: WireLogin["tls"] = "off") {
  const fake = fakePostgres({ password: serverPassword, mode, who: WHO });
  const outcome = await scramLogin(fake.client, { ...login, tls }).then(
    (answer) => ({ answer, error: undefined }),
    (error: Error) => ({ answer: undefined, error }),
  );
  const sent = fake.received();
  return { ...outcome, sent, fake, types: messageTypes(sent, tls === "prefer" ? 8 : 0) };
}

/** The type bytes of the client's typed messages (after the SSLRequest, if `skip` says one came, and the startup). */
function messageTypes(sent: Buffer, skip: number): string[] {
  let i = skip + sent.readInt32BE(skip);
  const types: string[] = [];
  while (i + 5 <= sent.length) {
    types.push(String.fromCharCode(sent[i]));
    i += 1 + sent.readInt32BE(i + 1);
  }
  return types;
}

/** No form of the password in what the client wrote: plain, UTF-16, base64, md5 of it with the role. */
function expectNoPassword(sent: Buffer) {
  const md5 = require("node:crypto").createHash("md5").update(`${PW}app_user`).digest("hex");
  for (const form of [PW, Buffer.from(PW, "utf16le").toString("latin1"), Buffer.from(PW).toString("base64"), md5])
    expect(sent.toString("latin1")).not.toContain(form);
}

describe("the login check's wire client: SCRAM-SHA-256 only, the server proven", () => {
  it.each<WireLogin["tls"]>(["off", "prefer"])(
    "a good exchange (tls %s): the server's version and the session's role, its signature checked, Terminate sent",
    async (tls) => {
      const { answer, error, fake, types } = await against("scram", PW, tls);
      expect(error).toBeUndefined();
      expect(answer).toEqual({ serverVersion: "15.10", sessionUser: "app_user", tls: false });
      expect(fake.proofAccepted).toBe(true);
      // The SASL initial response went with the startup message: no query, nothing after the proof but X.
      expect(types).toEqual(["p", "p", "X"]);
    },
  );

  it("the SASL initial response goes with the startup message, in the same write (a round trip less)", async () => {
    const fake = fakePostgres({ password: PW, who: WHO });
    const writes: Buffer[] = [];
    const write = fake.client.write.bind(fake.client);
    fake.client.write = ((chunk: Buffer, ...rest: never[]) => {
      writes.push(Buffer.from(chunk));
      return write(chunk, ...rest);
    }) as typeof fake.client.write;
    await scramLogin(fake.client, { ...login, tls: "off" });
    const first = writes[0];
    expect(first.readInt32BE(4)).toBe(196608);
    expect(String.fromCharCode(first[first.readInt32BE(0)])).toBe("p");
    expect(first.toString("latin1")).toContain("SCRAM-SHA-256\0");
  });

  it.each<[FakeMode, RegExp]>([
    ["cleartext", /asked for a cleartext password, not SCRAM-SHA-256: nothing derived from the password was sent/],
    ["md5", /asked for an MD5 password hash, not SCRAM-SHA-256/],
    ["sasl-other", /offered SASL SCRAM-SHA-1, not SCRAM-SHA-256/],
    ["ok-without-auth", /let the role in without proving it knows the password/],
  ])("%s: refused before anything derived from the password is written", async (mode, why) => {
    const { error, sent, types } = await against(mode);
    expect(error).toBeInstanceOf(ScramRefused);
    expect(error?.message).toMatch(why);
    // Only the SASL initial response, sent with the startup message: a nonce, nothing of the password.
    expect(types).toEqual(["p"]);
    expect(sent.toString("latin1")).toMatch(/SCRAM-SHA-256\0.{4}n,,n=,r=[A-Za-z0-9+/]+$/s);
    expectNoPassword(sent);
  });

  it("a wrong server signature: refused after the proof, nothing more sent", async () => {
    const { error, fake, types, sent } = await against("bad-signature");
    expect(fake.proofAccepted).toBe(true);
    expect(error).toBeInstanceOf(ScramRefused);
    expect(error?.message).toMatch(/the server's signature is wrong/);
    expect(types).toEqual(["p", "p"]);
    expectNoPassword(sent);
  });

  it("a wrong password: the server's refusal with its SQLSTATE", async () => {
    const { error } = await against("scram", "another password entirely");
    expect(error).toBeInstanceOf(ServerRefused);
    expect((error as ServerRefused).sqlstate).toBe("28P01");
    expect(error?.message).toMatch(/password authentication failed for user "app_user"/);
  });

  it("RFC 7677's example exchange, byte for byte", () => {
    const c = new ScramClient("pencil", "rOprNGfwEbeRWgbNEkqO", "user");
    expect(c.first()).toBe("n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
    expect(c.final("r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")).toBe(
      "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
    );
    expect(() => c.verify("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")).not.toThrow();
  });

  it.each([
    ["a nonce that does not extend ours", "r=other,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", /nonce/],
    ["no server part in the nonce", "r=abc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", /nonce/],
    ["an iteration count beyond the cap", "r=abcX,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=2147483647", /iterations/],
    ["zero iterations", "r=abcX,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=0", /iterations/],
    ["a salt that is not base64", "r=abcX,s=@@,i=4096", /salt/],
    ["a mandatory extension", "m=ext,r=abcX,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", /extension/],
    ["a control character", "r=abcX\u0001,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096", /printable/],
  ])("server-first-message with %s: refused, no proof made", (_what, serverFirst, why) => {
    expect(() => new ScramClient(PW, "abc").final(serverFirst)).toThrow(why);
  });

  it("a server-final error or a signature of the wrong length: refused", () => {
    const c = new ScramClient(PW, "abc");
    c.final("r=abcX,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=16");
    expect(() => c.verify("e=invalid-proof")).toThrow(/ended the exchange: invalid-proof/);
    expect(() => c.verify("v=AAAA")).toThrow(/signature is wrong/);
    expect(() => new ScramClient(PW, "abc").verify("v=AAAA")).toThrow(/before the client's proof/);
  });
});

describe("the login check's listener decision (ss as root, the unit's MainPID)", () => {
  const squat = (address: string, pid = 4321, comm = "python3") => ssLine(address, pid, comm);
  const both = [ssLine("127.0.0.1"), ssLine("::1")];
  const judge = (lines: string[], host: string, main = String(PM), parents = `${PM} 1\n`) =>
    judgeListeners(lines.join("\n"), main, host, 5432, parents);

  it("the postmaster alone on the address, or on a wildcard covering it: proven", () => {
    expect(judge(both, "127.0.0.1")).toEqual({ ok: true, pid: PM });
    expect(judge(both, "::1")).toEqual({ ok: true, pid: PM });
    const wild = [ssLine("0.0.0.0"), ssLine("::")];
    for (const host of ["127.0.0.1", "::1", "10.0.0.5", "fe80::1"])
      expect(judge(wild, host)).toEqual({ ok: true, pid: PM });
    expect(judge([ssLine("127.0.0.1").replace("127.0.0.1:", "127.0.0.1%lo:")], "127.0.0.1")).toEqual({
      ok: true,
      pid: PM,
    });
    // Another port's socket, and another address that does not reach host, do not matter.
    expect(judge([...both, squat("10.0.0.7"), ssLine("127.0.0.1", 99, "x", 5433)], "127.0.0.1").ok).toBe(true);
  });

  it.each([
    ["127.0.0.1 taken, the server on ::1 only (the finding)", [squat("127.0.0.1"), ssLine("::1")], "127.0.0.1"],
    ["::1 taken, the server on 127.0.0.1 only", [ssLine("127.0.0.1"), squat("::1")], "::1"],
    ["the listen address taken", [squat("10.0.0.5"), ssLine("127.0.0.1")], "10.0.0.5"],
    ["0.0.0.0 taken before the server came up", [squat("0.0.0.0"), ssLine("::1")], "127.0.0.1"],
    ["0.0.0.0 taken, another IPv4 address", [squat("0.0.0.0")], "10.0.0.5"],
    ["[::] taken (dual stack reaches IPv4 too)", [squat("::"), ssLine("::1")], "127.0.0.1"],
    ["[::] taken, IPv6", [squat("::")], "::1"],
    ["* taken (older ss)", [squat("*")], "127.0.0.1"],
    ["the IPv4-mapped address taken", [squat("::ffff:127.0.0.1")], "127.0.0.1"],
    ["both the server and another process (SO_REUSEPORT)", [ssLine("127.0.0.1"), squat("127.0.0.1")], "127.0.0.1"],
  ])("%s: refused, naming the holder", (_what, lines, host) => {
    expect(judge(lines, host)).toEqual({ ok: false, why: "other", holders: [4321] });
  });

  it("a process name that forges the postmaster's pid cannot hide its own", () => {
    const forged = `LISTEN 0 5 127.0.0.1:5432 0.0.0.0:* users:(("a\\",pid=${PM},fd=",pid=4321,fd=3))`;
    expect(judge([forged, ssLine("::1")], "127.0.0.1")).toEqual({ ok: false, why: "other", holders: [4321] });
  });

  // CI saw it on Debian 13: a backend or worker the postmaster had just forked still held its socket.
  describe("the postmaster's socket shared with a process it just forked (until the child closes it)", () => {
    const shared = (child: number, comm = "postgres") =>
      `LISTEN 0 244 127.0.0.1:5432 0.0.0.0:* users:(("postgres",pid=${PM},fd=6),("${comm}",pid=${child},fd=6))`;

    it("its child by the kernel's word, or gone since: proven", () => {
      expect(judge([shared(6309)], "127.0.0.1", String(PM), `${PM} 1\n6309 ${PM}\n`)).toEqual({ ok: true, pid: PM });
      expect(judge([shared(6309)], "127.0.0.1", String(PM), `${PM} 1\n6309 \n`)).toEqual({ ok: true, pid: PM });
    });

    it("not its child, or not asked about: refused, naming it", () => {
      const other = { ok: false, why: "other", holders: [6309] };
      expect(judge([shared(6309, "python3")], "127.0.0.1", String(PM), `${PM} 1\n6309 1\n`)).toEqual(other);
      expect(judge([shared(6309)], "127.0.0.1", String(PM), `${PM} 1\n`)).toEqual(other);
      expect(judge([shared(6309)], "127.0.0.1", String(PM), "")).toEqual(other);
    });

    it("a child on a socket of its own, or a name forging the postmaster's pid on another's: refused", () => {
      const own = ssLine("127.0.0.1", 6309);
      expect(judge([own, ssLine("::1")], "127.0.0.1", String(PM), `6309 ${PM}\n`)).toMatchObject({ why: "other" });
      const forged = `LISTEN 0 5 127.0.0.1:5432 0.0.0.0:* users:(("a\\",pid=${PM},fd=",pid=4321,fd=3))`;
      expect(judge([forged], "127.0.0.1", String(PM), `${PM} 1\n4321 1\n`)).toEqual({
        ok: false,
        why: "other",
        holders: [4321],
      });
    });
  });

  it("what cannot be proven is refused: no pid, unreadable lines, no main process, nobody listening", () => {
    const noPid = "LISTEN 0 5 127.0.0.1:5432 0.0.0.0:*";
    expect(judge([noPid], "127.0.0.1")).toEqual({ ok: false, why: "other", holders: [] });
    expect(judge([ssLine("127.0.0.1"), 'cd",pid=4321,fd=3))'], "127.0.0.1")).toMatchObject({ why: "unreadable" });
    expect(judge(both, "127.0.0.1", "0")).toMatchObject({ why: "no-server" });
    expect(judge(both, "127.0.0.1", "")).toMatchObject({ why: "no-server" });
    expect(judge([ssLine("::1")], "127.0.0.1")).toMatchObject({ why: "nobody" });
    expect(judge([], "127.0.0.1")).toMatchObject({ why: "nobody" });
  });

  it("parses ss's address forms", () => {
    expect(parseListeners([ssLine("::1"), ssLine("0.0.0.0"), squat("*")].join("\n"))).toEqual([
      { address: "::1", port: 5432, pids: [PM] },
      { address: "0.0.0.0", port: 5432, pids: [PM] },
      { address: "*", port: 5432, pids: [4321] },
    ]);
  });
});
