// One SSH connection to the VM, with the policy the installers need: retry only what can heal, an
// optional host-key pin (the key seen is always reported, so a first run says what to pin), keepalive so
// a dead link fails in about 20 s. Keys and fingerprints: ssh-keys.ts; the session: ssh-session.ts.

import { Client, type ConnectConfig } from "ssh2";
import { secrets as defaultSecrets, type SecretScrubber } from "../../lib/shared/secrets";
import type { ConnectionEnv, HostTarget } from "./connection-env";
import { formatDuration, type Progress } from "./progress";
import { classify, type HostKeySeen, reachHint, SshConnectError } from "./ssh-connect-error";
import { fingerprintSha256, keyBlobType, type PrivateKey, parsePrivateKey } from "./ssh-keys";
import { DEFAULT_SSH_RETRY, retryWaitMs, type SshRetry } from "./ssh-retry-policy";
import { SshSession } from "./ssh-session";

// The policy in full:
//   - retry only what can heal (the VM still booting, a network blip) with doubling waits inside a
//     total time budget; fail at once on what cannot (authentication, a host key that does not match,
//     an unknown host name, a key that does not parse);
//   - an optional host-key pin, compared in OpenSSH's own "SHA256:<base64, no padding>" form; the key
//     seen is always reported, so a first run tells the user what to pin;
//   - keepalive (5 s x 3) so a dead link fails in about 20 s instead of hanging the job;
//   - after `ready`, the session (ssh-session.ts) rejects every command still running when the
//     connection is lost. Keys and fingerprints: ssh-keys.ts.
export interface ConnectOptions {
  /** @default DEFAULT_SSH_RETRY */
  retry?: SshRetry;
  /** Retry notices go here. */
  progress?: Progress;
  /** @default the process-wide registry */
  secrets?: SecretScrubber;
  /** @default 5000 and 3: a dead link is noticed in about 20 s */
  keepaliveIntervalMs?: number;
  keepaliveCountMax?: number;
  /** Replaceable in tests. */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

const sleepReal = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What the retry loop needs of a target: where it is, and the pin when there is one. */

/**
 * Connects to `target` with the retry policy, then returns a session. Parses the key first, so a bad
 * key fails before any network traffic. Every thrown message is scrubbed and names user@host:port.
 */
export async function connect(target: ConnectionEnv, opts: ConnectOptions = {}): Promise<SshSession> {
  const secrets = opts.secrets ?? defaultSecrets;
  const now = opts.now ?? Date.now;
  const where = `${target.user}@${target.host}:${target.port}`;
  const key = parsePrivateKey(target.privateKey, target.keySetting);
  secrets.add(target.privateKey, "SSH_KEY");
  if (key.text !== target.privateKey) secrets.add(key.text, "SSH_KEY"); // the converted form is as secret
  return withRetries(target, opts, async (readyTimeout, attempt) => {
    const { client, hostKeySha256, hostKeyType } = await connectOnce(target, key, readyTimeout, opts);
    return new SshSession(client, where, hostKeySha256, hostKeyType, attempt, target.user, secrets, now);
  });
}

/** The host key a server presents, learnt without authenticating: no key, no password, nothing else sent. */
export interface HostKeyProbe {
  hostKeySha256: string;
  hostKeyType: string;
  attempts: number;
}

/**
 * Reads the server's host key and stops at the end of the key exchange, before authentication: the
 * first contact with a VM, whose key is then recorded and required by every job after it. Same retry
 * policy as `connect`; a pin in `target` is enforced here too.
 */
export function probeHostKey(target: HostTarget, opts: ConnectOptions = {}): Promise<HostKeyProbe> {
  return withRetries(target, opts, async (readyTimeout, attempt) => ({
    ...(await probeOnce(target, readyTimeout)),
    attempts: attempt,
  }));
}

/** Runs `once` until it succeeds, fails for good, or the attempts or the time budget run out. */
async function withRetries<T>(
  target: HostTarget,
  opts: ConnectOptions,
  once: (readyTimeout: number, attempt: number) => Promise<T>,
): Promise<T> {
  const retry = opts.retry ?? DEFAULT_SSH_RETRY;
  const secrets = opts.secrets ?? defaultSecrets;
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? sleepReal;
  const where = `${target.user}@${target.host}:${target.port}`;
  const started = now();
  const deadline = started + retry.budgetSec * 1000;
  let last: SshConnectError | undefined;
  for (let attempt = 1; attempt <= retry.attempts; attempt++) {
    const readyTimeout = Math.max(1000, Math.min(retry.timeoutSec * 1000, deadline - now()));
    try {
      return await once(readyTimeout, attempt);
    } catch (err) {
      last = err as SshConnectError;
      if (!last.retryable) throw new SshConnectError(secrets.scrub(last.message), false, last.code);
    }
    if (attempt === retry.attempts) break;
    const wait = retryWaitMs(retry, attempt + 1);
    if (now() + wait >= deadline) {
      throw new SshConnectError(
        secrets.scrub(
          `SSH to ${where} failed: ${last.message}; gave up after ${attempt} attempt${attempt === 1 ? "" : "s"} in ` +
            `${formatDuration(now() - started)} because the next one would pass the ${retry.budgetSec}s budget ` +
            `(ssh.budget_sec). ${reachHint(target)}`,
        ),
        true,
        last.code,
      );
    }
    opts.progress?.info(
      `ssh ${where}: ${secrets.scrub(last.message)}; attempt ${attempt + 1}/${retry.attempts} in ` +
        `${formatDuration(wait)}`,
    );
    await sleep(wait);
  }
  throw new SshConnectError(
    secrets.scrub(
      `SSH to ${where} failed after ${retry.attempts} attempt${retry.attempts === 1 ? "" : "s"} in ` +
        `${formatDuration(now() - started)}: ${last!.message}. ${reachHint(target)}`,
    ),
    true,
    last!.code,
  );
}

/** ssh2's settings for one attempt; the host verifier records the key seen and enforces the pin. */
function clientConfig(
  target: ConnectionEnv,
  key: PrivateKey,
  readyTimeout: number,
  opts: ConnectOptions,
  host: HostKeySeen,
): ConnectConfig {
  return {
    host: target.host,
    port: target.port,
    username: target.user,
    privateKey: key.text,
    // The key alone: ssh2's default first asks with method "none" (to learn the server's methods), one
    // more round trip per connection over a long link for an answer this client never uses.
    authHandler: ["publickey"],
    readyTimeout,
    keepaliveInterval: opts.keepaliveIntervalMs ?? 5000,
    keepaliveCountMax: opts.keepaliveCountMax ?? 3,
    // ssh2 passes the raw key blob when hostHash is unset; its own hashing gives hex, not OpenSSH's form.
    hostVerifier: (keyBlob: Buffer): boolean => {
      host.seen = fingerprintSha256(keyBlob);
      host.type = keyBlobType(keyBlob);
      host.mismatch = !!target.hostKeySha256 && host.seen !== target.hostKeySha256;
      return !host.mismatch;
    },
  };
}

/** One attempt: resolves on `ready`, rejects with a classified SshConnectError. */
function connectOnce(
  target: ConnectionEnv,
  key: PrivateKey,
  readyTimeout: number,
  opts: ConnectOptions,
): Promise<{ client: Client; hostKeySha256: string; hostKeyType: string }> {
  return new Promise((resolve, reject) => {
    const client = new Client();
    const host: HostKeySeen = { type: "unknown", mismatch: false };
    let done = false;
    const fail = (err: SshConnectError) => {
      if (done) return;
      done = true;
      client.removeAllListeners("ready");
      client.on("error", () => undefined); // late socket errors of an abandoned attempt are not news
      client.end();
      reject(err);
    };
    client.on("ready", () => {
      if (done) return;
      // The attempt's error/close listeners stay (guarded by `done`) until the session adds its own, so
      // there is never a moment when an 'error' event has no listener.
      done = true;
      resolve({ client, hostKeySha256: host.seen ?? "unknown", hostKeyType: host.type });
    });
    client.on("error", (err: Error) => fail(classify(err, target, key, readyTimeout, host)));
    client.on("close", () =>
      fail(new SshConnectError("the connection closed before the SSH session was ready", true, "ECONNRESET")),
    );
    try {
      client.connect(clientConfig(target, key, readyTimeout, opts, host));
      // Without TCP_NODELAY every command's small packets wait on the server's delayed ACK: about 45 ms
      // per command (55 ms against 9 ms per `sudo true` measured on the sandbox). ssh2 leaves Nagle on.
      client.setNoDelay(true);
    } catch (err) {
      fail(
        new SshConnectError(`SSH to ${target.user}@${target.host}:${target.port}: ${(err as Error).message}`, false),
      );
    }
  });
}

/**
 * One probe: the key exchange up to its end, where ssh2 has checked the server's signature with the key
 * it presented (so the key is the server's own, not a copy of another's public key), then the connection
 * is closed from the 'handshake' event, before the authentication phase begins. No credentials are
 * configured for it either, so nothing could be sent.
 */
function probeOnce(target: HostTarget, readyTimeout: number): Promise<{ hostKeySha256: string; hostKeyType: string }> {
  return new Promise((resolve, reject) => {
    const client = new Client();
    const host: HostKeySeen = { type: "unknown", mismatch: false };
    let done = false;
    const finish = (outcome: { verified: true } | { err?: Error & { level?: string; code?: string } }) => {
      if (done) return;
      done = true;
      client.on("error", () => undefined);
      client.end();
      if ("verified" in outcome) resolve({ hostKeySha256: host.seen!, hostKeyType: host.type });
      else
        reject(
          classify(
            outcome.err ?? new Error("the connection closed before the key exchange ended"),
            target,
            undefined,
            readyTimeout,
            host,
          ),
        );
    };
    client.on("handshake", () => finish({ verified: true }));
    client.on("error", (err: Error) => finish({ err }));
    client.on("close", () => finish({}));
    try {
      client.connect({
        host: target.host,
        port: target.port,
        username: target.user,
        readyTimeout,
        hostVerifier: (keyBlob: Buffer): boolean => {
          host.seen = fingerprintSha256(keyBlob);
          host.type = keyBlobType(keyBlob);
          host.mismatch = !!target.hostKeySha256 && host.seen !== target.hostKeySha256;
          return !host.mismatch;
        },
      });
      client.setNoDelay(true);
    } catch (err) {
      finish({ err: err as Error });
    }
  });
}
