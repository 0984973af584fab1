import { execFileSync } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { utils } from "ssh2";
import type { ConnectionEnv } from "../../handlers/common/connection-env";
import { CommandError } from "../../handlers/common/exec";
import { Progress } from "../../handlers/common/progress";
import { connect } from "../../handlers/common/ssh";
import { SshConnectError } from "../../handlers/common/ssh-connect-error";
import { fingerprintSha256, keyBlobType, parsePrivateKey, SshKeyError } from "../../handlers/common/ssh-keys";
import { DEFAULT_SSH_RETRY, resolveSshRetry, retryWaitMs } from "../../handlers/common/ssh-retry-policy";
import type { SshSession } from "../../handlers/common/ssh-session";
import { SecretScrubber } from "../../lib/shared/secrets";
import { freePort, startServer, type TestServer } from "./support/ssh-server";
import { ENCRYPTED_KEY_PASSPHRASE, TEST_KEY_NAMES, testKey } from "./support/test-keys";

const clientKey = testKey("client_ed25519");
const pem = (type: "rsa" | "ec" | "ed25519", encoding: "pkcs1" | "sec1" | "pkcs8") =>
  (
    crypto.generateKeyPairSync(
      type as "rsa",
      {
        modulusLength: 2048,
        namedCurve: "prime256v1",
        privateKeyEncoding: { type: encoding, format: "pem" },
        publicKeyEncoding: { type: "spki", format: "pem" },
      } as never,
    ) as unknown as { privateKey: string }
  ).privateKey;

function target(port: number, extra: Partial<ConnectionEnv> = {}): ConnectionEnv {
  return { host: "127.0.0.1", port, user: "ubuntu", privateKey: clientKey.private, ...extra };
}

const quick = (over: Partial<typeof DEFAULT_SSH_RETRY> = {}) => ({ ...DEFAULT_SSH_RETRY, ...over });
const silent = () => new Progress("test", { write: () => undefined, secrets: new SecretScrubber() });

describe("keys", () => {
  it.each([
    ["OpenSSH ed25519", testKey("client_ed25519").private, "ssh-ed25519"],
    ["OpenSSH RSA", testKey("rsa").private, "ssh-rsa"],
    ["OpenSSH ECDSA", testKey("ecdsa").private, "ecdsa-sha2-nistp256"],
    ["PEM RSA (PKCS#1)", pem("rsa", "pkcs1"), "ssh-rsa"],
    ["PEM EC (SEC1)", pem("ec", "sec1"), "ecdsa-sha2-nistp256"],
    ["PKCS#8 RSA", pem("rsa", "pkcs8"), "ssh-rsa"],
    ["PKCS#8 EC", pem("ec", "pkcs8"), "ecdsa-sha2-nistp256"],
    ["PKCS#8 ed25519", pem("ed25519", "pkcs8"), "ssh-ed25519"],
  ])("reads %s", (_what, text, type) => {
    expect(parsePrivateKey(text).type).toBe(type);
  });

  it.each(TEST_KEY_NAMES)("fixture key %s is the one test-keys.ts records", (name) => {
    const key = testKey(name);
    const pub = utils.parseKey(key.public) as unknown as { getPublicSSH(): Buffer };
    expect(fingerprintSha256(pub.getPublicSSH())).toBe(key.sha256);
  });

  it("says clearly when a key cannot be read, without echoing it", () => {
    const junk =
      "-----BEGIN OPENSSH PRIVATE KEY-----\nc2VjcmV0LWxvb2tpbmctYnV0LWJyb2tlbg==\n-----END OPENSSH PRIVATE KEY-----\n";
    const err = (() => {
      try {
        parsePrivateKey(junk);
      } catch (e) {
        return e as Error;
      }
      throw new Error("no error");
    })();
    expect(err).toBeInstanceOf(SshKeyError);
    expect(err.message).toMatch(/^SSH_KEY could not be read as a private key/);
    expect(err.message).not.toContain("c2VjcmV0");
  });

  it("refuses an encrypted key with what to do about it", () => {
    const encrypted = testKey("encrypted_ed25519").private;
    // The fixture really is a good key under its passphrase: the refusal is about encryption alone.
    expect(utils.parseKey(encrypted, ENCRYPTED_KEY_PASSPHRASE)).not.toBeInstanceOf(Error);
    expect(() => parsePrivateKey(encrypted)).toThrow(/encrypted with a passphrase.*ssh-keygen -p/);
  });

  it("computes the fingerprint exactly as ssh-keygen -l prints it", () => {
    const pub = utils.parseKey(clientKey.public) as unknown as { getPublicSSH(): Buffer; type: string };
    const blob = pub.getPublicSSH();
    expect(keyBlobType(blob)).toBe("ssh-ed25519");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fp-"));
    fs.writeFileSync(path.join(dir, "k.pub"), `${clientKey.public}\n`);
    let keygen: string | undefined;
    try {
      keygen = execFileSync("ssh-keygen", ["-lf", path.join(dir, "k.pub")], { encoding: "utf8" });
    } catch {
      // no ssh-keygen here: the independent hash below still checks the form
    }
    fs.rmSync(dir, { recursive: true, force: true });
    const fp = fingerprintSha256(blob);
    expect(fp).toBe(clientKey.sha256); // recorded from ssh-keygen -lf when the fixture was made
    if (keygen) expect(keygen.split(" ")[1]).toBe(fp);
  });
});

describe("retry settings", () => {
  it("defaults to 3 attempts 10 s apart, inside a budget", () => {
    expect(resolveSshRetry()).toEqual({ attempts: 3, delaySec: 10, budgetSec: 120, timeoutSec: 20 });
    expect(resolveSshRetry({ attempts: 5, delay_sec: 2 })).toEqual({
      attempts: 5,
      delaySec: 2,
      budgetSec: 120,
      timeoutSec: 20,
    });
  });

  it("doubles the wait each time, at most 60 s", () => {
    const r = resolveSshRetry({ attempts: 8 });
    expect([2, 3, 4, 5, 6].map((n) => retryWaitMs(r, n))).toEqual([10_000, 20_000, 40_000, 60_000, 60_000]);
  });
});

describe("connect over real SSH (in-process ssh2 server on 127.0.0.1)", () => {
  let server: TestServer | undefined;
  let session: SshSession | undefined;
  afterEach(async () => {
    await session?.close();
    await server?.close();
    session = undefined;
    server = undefined;
  });

  it("connects, reports the host key fingerprint the server has, and runs commands", async () => {
    server = await startServer({
      authorizedKey: clientKey.public,
      onExec: (cmd, stdin) =>
        cmd.startsWith("sh -c cat")
          ? { stdout: stdin.toString(), code: 0 }
          : { stdout: "out\n", stderr: "err\n", code: 3 },
    });
    session = await connect(target(server.port), { retry: quick(), secrets: new SecretScrubber() });
    expect(session.hostKeySha256).toBe(server.hostKeySha256);
    expect(session.hostKeyType).toBe("ssh-ed25519");
    expect(session.attempts).toBe(1);
    expect(session.target).toBe(`ubuntu@127.0.0.1:${server.port}`);

    await expect(session.run("cat", { stdin: "via stdin" })).resolves.toMatchObject({ code: 0, stdout: "via stdin" });
    await expect(session.run("fails", { check: false })).resolves.toMatchObject({
      code: 3,
      stdout: "out\n",
      stderr: "err\n",
    });
    await expect(session.run("fails")).rejects.toThrow(
      `fails failed on ubuntu@127.0.0.1:${server.port} (exit 3):\nerr`,
    );
    await session.run("cat && id", { sudo: true, check: false });
    expect(server.commands.at(-1)).toBe("sudo -n sh -c 'cat && id'");
  });

  it("accepts a matching host-key pin", async () => {
    server = await startServer({ authorizedKey: clientKey.public });
    session = await connect(target(server.port, { hostKeySha256: server.hostKeySha256 }), {
      retry: quick(),
      secrets: new SecretScrubber(),
    });
    expect(session.hostKeySha256).toBe(server.hostKeySha256);
  });

  it("refuses a host key that does not match the pin, saying expected and seen, without retrying", async () => {
    server = await startServer({ authorizedKey: clientKey.public });
    const pin = `SHA256:${"B".repeat(43)}`;
    const waits: number[] = [];
    const err = await connect(target(server.port, { hostKeySha256: pin }), {
      retry: quick(),
      secrets: new SecretScrubber(),
      sleep: async (ms) => void waits.push(ms),
    }).catch((e) => e);
    expect(waits).toEqual([]); // a retry would have waited first
    expect(err).toBeInstanceOf(SshConnectError);
    expect(err.retryable).toBe(false);
    expect(err.message).toContain(
      `host key mismatch for 127.0.0.1:${server.port}: expected ${pin} but the server presented ` +
        `${server.hostKeySha256} (ssh-ed25519); refusing to authenticate, nothing was sent to it.`,
    );
    // How to accept a legitimate change: one command, or the pin.
    expect(err.message).toContain("npm run trust -- <vm name>");
    expect(err.message).toContain("vms[].hostKeySha256");
    expect(server.authAttempts).toBe(0); // refused before sending any credentials
  });

  it("names where the expected key came from and what to do about it (SSH_HOST_KEY_SOURCE)", async () => {
    server = await startServer({ authorizedKey: clientKey.public });
    const pin = `SHA256:${"B".repeat(43)}`;
    const refusal = async (hostKeySource: "pin" | "delivered" | "first-contact") =>
      (
        await connect(target(server!.port, { hostKeySha256: pin, hostKeySource }), {
          retry: quick(),
          secrets: new SecretScrubber(),
        }).catch((e) => e)
      ).message as string;
    const both = `expected ${pin}`;
    const seen =
      `but the server presented ${server.hostKeySha256} (ssh-ed25519); refusing to authenticate, nothing ` +
      `was sent to it.`;
    const delivered = await refusal("delivered");
    expect(delivered).toContain(
      `${both}, the host key this stack generated for the VM and delivered in its cloud_init (vms[].hostKeys ` +
        `"delivered"`,
    );
    expect(delivered).toContain(seen);
    expect(delivered).toContain('set vms[].hostKeys to "first-contact" for this VM');
    expect(delivered).not.toContain("npm run trust"); // trust refuses a delivered key: nothing to accept
    const pinned = await refusal("pin");
    expect(pinned).toContain(`${both}, the VM's pin (vms[].hostKeySha256), ${seen}`);
    expect(pinned).not.toContain("npm run trust");
    const recorded = await refusal("first-contact");
    expect(recorded).toContain(`${both}, the key recorded in Terraform state at the VM's first contact, ${seen}`);
    expect(recorded).toContain(`npm run trust -- <vm name> ${server.hostKeySha256}`);
    expect(server.authAttempts).toBe(0);
  });

  it("fails fast (no retry) when authentication fails", async () => {
    const otherKey = testKey("other_ed25519");
    server = await startServer({ authorizedKey: otherKey.public });
    const waits: number[] = [];
    const err = await connect(target(server.port), {
      retry: quick(),
      secrets: new SecretScrubber(),
      sleep: async (ms) => void waits.push(ms),
    }).catch((e) => e);
    expect(waits).toEqual([]);
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(
      new RegExp(
        `^SSH authentication failed for ubuntu@127\\.0\\.0\\.1:${server.port}: the server accepted no method with ` +
          `the ssh-ed25519 key in SSH_KEY`,
      ),
    );
  });

  it("retries a refused connection until the server appears", async () => {
    const port = await freePort();
    const lines: string[] = [];
    const progress = new Progress("test", { write: (l) => lines.push(l), secrets: new SecretScrubber() });
    // The server comes up while connect waits between attempts: deterministic however busy the machine.
    const waits: number[] = [];
    const sleep = async (ms: number) => {
      waits.push(ms);
      server ??= await startServer({ authorizedKey: clientKey.public, port });
    };
    session = await connect(target(port), {
      retry: quick({ attempts: 4, delaySec: 1 }),
      progress,
      secrets: new SecretScrubber(),
      sleep,
    });
    expect(session.attempts).toBe(2);
    expect(waits).toEqual([1000]);
    expect(session.hostKeySha256).toBe(server!.hostKeySha256);
    expect(lines[0]).toMatch(
      new RegExp(`^\\[test\\] ssh ubuntu@127\\.0\\.0\\.1:${port}: ECONNREFUSED .*; attempt 2/4 in 1\\.0s$`),
    );
  });

  it("gives up after the attempts, naming the last error", async () => {
    const port = await freePort();
    const err = await connect(target(port), {
      retry: quick({ attempts: 2, delaySec: 0 }),
      progress: silent(),
      secrets: new SecretScrubber(),
    }).catch((e) => e);
    expect(err.message).toMatch(
      new RegExp(`^SSH to ubuntu@127\\.0\\.0\\.1:${port} failed after 2 attempts in \\d+\\.\\ds: ECONNREFUSED`),
    );
    expect(err.message).toMatch(/access_port_list/);
  });

  it("stops when the next wait would pass the budget", async () => {
    const port = await freePort();
    // A clock that only the waits move: the budget arithmetic is checked, not the machine's speed.
    let clock = 0;
    const waits: number[] = [];
    const sleep = async (ms: number) => {
      waits.push(ms);
      clock += ms;
    };
    const err = await connect(target(port), {
      retry: quick({ attempts: 10, delaySec: 1, budgetSec: 2 }),
      progress: silent(),
      secrets: new SecretScrubber(),
      sleep,
      now: () => clock,
    }).catch((e) => e);
    expect(waits).toEqual([1000]); // the second wait (2 s) would end at 3 s, past the 2 s budget
    expect(err.message).toMatch(
      /gave up after 2 attempts in 1\.0s because the next one would pass the 2s budget \(ssh\.budget_sec\)/,
    );
  });

  it("retries a handshake that never comes (timeout)", async () => {
    const open = new Set<net.Socket>();
    const mute = net.createServer((sock) => void open.add(sock)); // accepts TCP, never speaks SSH
    await new Promise<void>((resolve) => mute.listen(0, "127.0.0.1", resolve));
    const port = (mute.address() as net.AddressInfo).port;
    const err = await connect(target(port), {
      retry: quick({ attempts: 2, delaySec: 0, timeoutSec: 1 }),
      progress: silent(),
      secrets: new SecretScrubber(),
    }).catch((e) => e);
    for (const sock of open) sock.destroy();
    await new Promise<void>((resolve) => mute.close(() => resolve()));
    expect(err.message).toMatch(/failed after 2 attempts .*: no SSH handshake within 1\.0s/);
  });

  it("a connection lost mid-command rejects that command instead of hanging", async () => {
    server = await startServer({ authorizedKey: clientKey.public, onExec: () => ({ drop: true }) });
    session = await connect(target(server.port), { retry: quick(), secrets: new SecretScrubber() });
    const err = await session.run("apt-get install -y git", { label: "apt-get install git" }).catch((e) => e);
    expect(err).toBeInstanceOf(CommandError);
    expect(err.message).toMatch(/^apt-get install git on ubuntu@127\.0\.0\.1:\d+: the SSH connection was lost/);
    await expect(session.run("true")).rejects.toThrow(/the SSH connection is gone/);
  });

  it("an exit without a status is a failure, not success", async () => {
    server = await startServer({ authorizedKey: clientKey.public, onExec: () => ({ code: null, stdout: "half" }) });
    session = await connect(target(server.port), { retry: quick(), secrets: new SecretScrubber() });
    await expect(session.run("thing", { check: false })).rejects.toThrow(
      /thing on .* did not finish: the SSH channel closed without an exit status/,
    );
  });

  it("a command that takes too long times out and closes its channel", async () => {
    server = await startServer({
      authorizedKey: clientKey.public,
      onExec: (cmd) => (cmd === "sh -c slow" ? { hang: true } : { stdout: "ok" }),
    });
    session = await connect(target(server.port), { retry: quick(), secrets: new SecretScrubber() });
    await expect(session.run("slow", { timeoutMs: 300 })).rejects.toThrow(/slow on .*: timed out after 0\.3s/);
    await expect(session.run("fast")).resolves.toMatchObject({ stdout: "ok" }); // the connection is still good
  });

  it("authenticates with a PKCS#8 ed25519 key (converted for ssh2)", async () => {
    const pkcs8 = pem("ed25519", "pkcs8");
    const pub = crypto.createPublicKey(pkcs8).export({ format: "jwk" }).x!;
    const line =
      `ssh-ed25519 ` +
      `${Buffer.concat([Buffer.from([0, 0, 0, 11]), Buffer.from("ssh-ed25519"), Buffer.from([0, 0, 0, 32]), Buffer.from(pub, "base64url")]).toString("base64")}`;
    server = await startServer({ authorizedKey: line });
    session = await connect(target(server.port, { privateKey: pkcs8 }), {
      retry: quick(),
      secrets: new SecretScrubber(),
    });
    expect(session.attempts).toBe(1);
  });

  it("registers the key as a secret, so nothing it touches can print it", async () => {
    server = await startServer({ authorizedKey: clientKey.public, onExec: () => ({ stdout: clientKey.private }) });
    const secrets = new SecretScrubber();
    session = await connect(target(server.port), { retry: quick(), secrets });
    const out = (await session.run("cat ~/.ssh/id")).stdout;
    expect(out).not.toContain(clientKey.private.split("\n")[1]);
    expect(out).toContain("[redacted:SSH_KEY]");
  });
});
