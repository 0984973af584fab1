// The connection's TCP channel (Remote.tunnel), which the PostgreSQL login check speaks its own protocol
// through: over real SSH (ssh2's server forwarding to a local echo server, or refusing), passed through
// check mode's look-only remote, and opened on a new session when the old one was lost.
import * as net from "node:net";
import type { Duplex } from "node:stream";
import { lookOnly } from "../../handlers/common/check-mode";
import { type Connection, type RunResult, TunnelRefused } from "../../handlers/common/exec";
import { ResilientConnection } from "../../handlers/common/resilient-connection";
import { connect } from "../../handlers/common/ssh";
import type { SshSession } from "../../handlers/common/ssh-session";
import { SecretScrubber } from "../../lib/shared/secrets";
import { startServer, type TestServer } from "./support/ssh-server";
import { testKey } from "./support/test-keys";

const clientKey = testKey("client_ed25519");
const target = (port: number) => ({ host: "127.0.0.1", port, user: "ubuntu", privateKey: clientKey.private });

/** Writes `text`, ends, and collects what comes back until the other end closes. */
function roundTrip(stream: Duplex, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const got: Buffer[] = [];
    stream.on("data", (d: Buffer) => got.push(d));
    stream.on("close", () => resolve(Buffer.concat(got).toString()));
    stream.on("error", reject);
    stream.end(text);
  });
}

describe("Remote.tunnel over real SSH", () => {
  let server: TestServer | undefined;
  let session: SshSession | undefined;
  let echo: net.Server | undefined;
  afterEach(async () => {
    await session?.close();
    await server?.close();
    await new Promise((r) => (echo ? echo.close(r) : r(undefined)));
    session = server = echo = undefined;
  });

  it("a channel to host:port as the VM reaches it carries bytes both ways", async () => {
    echo = net.createServer((s) => s.pipe(s));
    await new Promise<void>((r) => echo!.listen(0, "127.0.0.1", r));
    const echoPort = (echo.address() as net.AddressInfo).port;
    server = await startServer({ authorizedKey: clientKey.public, tcpip: "forward" });
    session = await connect(target(server.port), { secrets: new SecretScrubber() });
    const stream = await session.tunnel("127.0.0.1", echoPort);
    expect(await roundTrip(stream, "ping through the VM")).toBe("ping through the VM");
  });

  it("a channel the server will not open: TunnelRefused, not forwarding's refusal (reason 2, not 1)", async () => {
    server = await startServer({ authorizedKey: clientKey.public, tcpip: "refuse" });
    session = await connect(target(server.port), { secrets: new SecretScrubber() });
    const err = await session.tunnel("127.0.0.1", 5432).catch((e) => e);
    expect(err).toBeInstanceOf(TunnelRefused);
    expect(err.forwarding).toBe(false);
    expect(err.message).toMatch(
      new RegExp(`^ubuntu@127\\.0\\.0\\.1:${server.port} could not connect to 127\\.0\\.0\\.1:5432`),
    );
  });
});

describe("Remote.tunnel through the kit's wrappers", () => {
  const ok: RunResult = { code: 0, stdout: "", stderr: "", durationMs: 0 };
  class Fake implements Connection {
    readonly target = "ubuntu@192.0.2.10:22";
    readonly hostKeySha256 = "SHA256:x";
    lost = false;
    opened: string[] = [];
    async run() {
      return ok;
    }
    async close() {}
    async tunnel(host: string, port: number) {
      this.opened.push(`${host}:${port}`);
      return new net.Socket();
    }
  }

  it("check mode passes it through: opening a channel changes nothing on the VM", async () => {
    const fake = new Fake();
    await lookOnly(fake).tunnel?.("::1", 5432);
    expect(fake.opened).toEqual(["::1:5432"]);
    expect(lookOnly({ run: async () => ok }).tunnel).toBeUndefined();
  });

  it("the resilient connection opens it on a new session when the old one was lost", async () => {
    const first = new Fake();
    const second = new Fake();
    first.lost = true;
    const rc = new ResilientConnection(first, async () => second, {
      job: "install-postgres",
      budget: { started: 0, now: () => 0 },
      detach: false,
    });
    await rc.tunnel("127.0.0.1", 5432);
    expect([first.opened, second.opened, rc.reconnects]).toEqual([[], ["127.0.0.1:5432"], 1]);
  });
});
