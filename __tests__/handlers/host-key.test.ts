// The host-key probe against ssh2's own server on 127.0.0.1: it learns the key, proves the server holds it
// (the handshake's signature), and never starts authentication; a pin it does not match fails naming both.
import * as net from "node:net";
import { probeHostKey } from "../../handlers/common/ssh";
import { SshConnectError } from "../../handlers/common/ssh-connect-error";
import { run } from "../../handlers/host-key/handler";
import { SecretScrubber } from "../../lib/shared/secrets";
import { freePort, startServer, type TestServer } from "./support/ssh-server";
import { testKey } from "./support/test-keys";

const client = testKey("client_ed25519");
const other = testKey("rsa");
let server: TestServer;
beforeAll(async () => {
  server = await startServer({ authorizedKey: client.public });
});
afterAll(() => server.close());

const retry = { attempts: 1, delaySec: 0, budgetSec: 10, timeoutSec: 5 };
const target = (port: number, hostKeySha256?: string) => ({ host: "127.0.0.1", port, user: "ubuntu", hostKeySha256 });

describe("probeHostKey", () => {
  test("reports the server's key and type, and no authentication is ever attempted", async () => {
    const before = server.authAttempts;
    const seen = await probeHostKey(target(server.port), { retry });
    expect(seen).toEqual({ hostKeySha256: server.hostKeySha256, hostKeyType: "ssh-ed25519", attempts: 1 });
    expect(server.authAttempts).toBe(before);
    expect(server.commands).toEqual([]);
  });

  test("a pin that matches is accepted", async () => {
    await expect(probeHostKey(target(server.port, server.hostKeySha256), { retry })).resolves.toMatchObject({
      hostKeySha256: server.hostKeySha256,
    });
  });

  test("a pin that does not match fails naming both keys and how to accept a legitimate change", async () => {
    const err = (await probeHostKey(target(server.port, other.sha256), { retry }).catch((e) => e)) as SshConnectError;
    expect(err).toBeInstanceOf(SshConnectError);
    expect(err.retryable).toBe(false);
    expect(err.message).toContain(
      `expected ${other.sha256} but the server presented ${server.hostKeySha256} (ssh-ed25519)`,
    );
    expect(err.message).toContain("npm run trust -- <vm name>");
  });

  test("a refused connection is retried within the policy, then named", async () => {
    const port = await freePort();
    const waits: number[] = [];
    const err = await probeHostKey(target(port), {
      retry: { attempts: 3, delaySec: 1, budgetSec: 60, timeoutSec: 2 },
      sleep: async (ms) => void waits.push(ms),
    }).catch((e) => e);
    expect(err.message).toMatch(/failed after 3 attempts.*ECONNREFUSED/);
    expect(waits).toEqual([1000, 2000]);
  });

  test("something that is not an SSH server fails clearly, not with a key", async () => {
    const junk = net.createServer((socket) => socket.end("HTTP/1.1 400 Bad Request\r\n\r\n"));
    await new Promise<void>((resolve) => junk.listen(0, "127.0.0.1", resolve));
    const port = (junk.address() as net.AddressInfo).port;
    try {
      const err = await probeHostKey(target(port), { retry }).catch((e) => e);
      expect(err).toBeInstanceOf(SshConnectError);
      expect(err.message).not.toMatch(/SHA256:/);
    } finally {
      junk.close();
    }
  });
});

describe("the host-key handler", () => {
  const env = (extra: Record<string, string> = {}) => ({
    VM_IP: "127.0.0.1",
    SSH_PORT: String(server.port),
    SSH_USER: "ubuntu",
    ...extra,
  });

  test("needs no SSH_KEY and reports the key in the job result", async () => {
    const lines: string[] = [];
    const result = await run(
      { ssh: { attempts: 1 } },
      { env: env(), write: (l) => lines.push(l), secrets: new SecretScrubber() },
    );
    expect(result).toMatchObject({
      status: "ok",
      changed: false,
      changes: [],
      host_key_sha256: server.hostKeySha256,
      host_key_type: "ssh-ed25519",
      pinned: false,
    });
    expect(result.summary).toBe(`127.0.0.1:${server.port} presents host key ${server.hostKeySha256} (ssh-ed25519)`);
    expect(lines.join("\n")).toContain("nothing was authenticated");
  });

  test("refuses a bad event or environment before any connection, naming each problem", async () => {
    const before = server.authAttempts;
    const err = await run(
      { ssh: { attempts: 0 }, extra: 1 },
      { env: { VM_IP: "no host!" }, secrets: new SecretScrubber() },
    ).catch((e) => e);
    expect(err.message).toMatch(/^host-key: /);
    expect(err.message).toMatch(/ssh\.attempts/);
    expect(err.message).toMatch(/extra/);
    expect(server.authAttempts).toBe(before);
  });
});
