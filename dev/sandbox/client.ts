// How the outside reaches a sandbox as a job would: the job env_vars for it, and the plain `ssh` client
// with its host key pinned (for checks in a separate session, and for raw baselines in benchmarks).
import { execFile } from "node:child_process";
import * as fs from "node:fs";

export interface SandboxInfo {
  name: string;
  address: string;
  port: number;
  user: string;
  privateKeyPath: string;
  /** "SHA256:..." OpenSSH form of the target's ed25519 host key. */
  hostKeySha256: string;
}

/** The job env_vars (VM_IP, SSH_USER, SSH_PORT, SSH_KEY) that reach `sb`, as the stack would give them. */
export function jobEnvFor(sb: SandboxInfo, extra: Record<string, string> = {}): Record<string, string> {
  return {
    VM_IP: sb.address,
    SSH_USER: sb.user,
    SSH_PORT: String(sb.port),
    SSH_KEY: fs.readFileSync(sb.privateKeyPath, "utf8"),
    ...extra,
  };
}

export interface SshRun {
  code: number;
  stdout: string;
  stderr: string;
  /** Wall time from spawn to exit. */
  ms: number;
}

/**
 * Runs `command` on `sb` as its user with the `ssh` client: key and known_hosts of the sandbox only
 * (no ~/.ssh config), strict host key checking, no prompts. `stdin` is fed to the remote command.
 */
export function sshRun(
  sb: SandboxInfo & { knownHostsPath: string },
  command: string,
  opts: { stdin?: string; timeoutMs?: number } = {},
): Promise<SshRun> {
  const args = [
    "-F",
    "/dev/null",
    "-i",
    sb.privateKeyPath,
    "-p",
    String(sb.port),
    "-o",
    `UserKnownHostsFile=${sb.knownHostsPath}`,
    "-o",
    "StrictHostKeyChecking=yes",
    "-o",
    "BatchMode=yes",
    "-o",
    "IdentitiesOnly=yes",
    "-o",
    "ConnectTimeout=10",
    "-o",
    "LogLevel=ERROR",
    `${sb.user}@${sb.address}`,
    command,
  ];
  const started = performance.now();
  return new Promise((resolve) => {
    const child = execFile(
      "ssh",
      args,
      { timeout: opts.timeoutMs ?? 900_000, maxBuffer: 64 << 20, encoding: "utf8" },
      (err, stdout, stderr) => {
        const code = err
          ? typeof (err as { code?: unknown }).code === "number"
            ? (err as { code: number }).code
            : 255
          : 0;
        resolve({ code, stdout, stderr, ms: performance.now() - started });
      },
    );
    child.stdin?.on("error", () => undefined); // it may exit before reading: EPIPE is not its outcome
    child.stdin?.end(opts.stdin ?? "");
  });
}
