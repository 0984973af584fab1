// What a failed SSH attempt means, in words a person can act on: retryable (the VM still booting, a
// network blip) or not (authentication, a host key that is not the expected one, an unknown host name).

import type { HostKeySource } from "../../lib/shared/names";
import type { HostTarget } from "./connection-env";
import { formatDuration } from "./progress";
import type { PrivateKey } from "./ssh-keys";

/** Socket-level errors worth another attempt: the host is not up yet, or the network blinked. */
const RETRYABLE_CODES = [
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ETIMEDOUT",
  "ECONNRESET",
  "EAI_AGAIN",
  "EPIPE",
];

/** Thrown when connecting fails; `retryable` says whether another attempt could have helped. */
export class SshConnectError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly code?: string,
  ) {
    super(message);
    this.name = "SshConnectError";
  }
}

export function reachHint(target: HostTarget): string {
  return (
    `Check that the VM is running, that sshd listens on port ${target.port} and that the port is open to this ` +
    `job (access_port_list); raise ssh.attempts / ssh.budget_sec if the VM boots slowly.`
  );
}

/** What one attempt learnt about the server's host key. */
export interface HostKeySeen {
  seen?: string;
  type: string;
  /** The key did not match SSH_HOST_KEY_SHA256: ssh2's error that follows is about that. */
  mismatch: boolean;
}

/** ssh2's error of one attempt as an SshConnectError: retryable or not, in words a person can act on. */
export function classify(
  err: Error & { level?: string; code?: string },
  target: HostTarget,
  key: PrivateKey | undefined,
  readyTimeout: number,
  host: HostKeySeen,
): SshConnectError {
  const where = `${target.user}@${target.host}:${target.port}`;
  if (host.mismatch) return hostKeyMismatch(target, host);
  if (err.level === "client-authentication" && key) {
    return new SshConnectError(
      `SSH authentication failed for ${where}: the server accepted no method with the ${key.type} key in ` +
        `${key.source ?? "SSH_KEY"}. Check ${key.source ? "vms[].user" : "SSH_USER"} and that the key's public half ` +
        `is in ~${target.user}/.ssh/authorized_keys on the VM (user_public_key).`,
      false,
    );
  }
  if (err.code && RETRYABLE_CODES.includes(err.code))
    return new SshConnectError(`${err.code} (${err.message})`, true, err.code);
  if (err.level === "client-timeout")
    return new SshConnectError(
      `no SSH handshake within ${formatDuration(readyTimeout)} (${err.message})`,
      true,
      "ETIMEDOUT",
    );
  if (/Connection lost before handshake/.test(err.message))
    return new SshConnectError(
      "the server closed the connection before the SSH handshake (sshd still starting?)",
      true,
      "ECONNRESET",
    );
  if (err.level === "client-dns")
    return new SshConnectError(
      `SSH to ${where}: the host name does not resolve (${err.message}); check VM_IP`,
      false,
      err.code,
    );
  return new SshConnectError(`SSH to ${where} failed: ${err.message}`, false, err.code);
}

/**
 * The one message for a host key that is not the expected one, pinned, delivered or recorded at first
 * contact. It is raised inside the key exchange, so nothing (no key, no password) has been sent to that
 * server. What to do depends on where the expected key came from (SSH_HOST_KEY_SOURCE).
 */
function hostKeyMismatch(target: HostTarget, host: { seen?: string; type: string }): SshConnectError {
  const head = `host key mismatch for ${target.host}:${target.port}: expected ${target.hostKeySha256}`;
  const presented = `but the server presented ${host.seen} (${host.type})`;
  const refused = `${presented}; refusing to authenticate, nothing was sent to it.`;
  const console = `ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub`;
  const accept =
    `If the VM was legitimately rebuilt or its keys rotated, check ${host.seen} on the VM's console ` +
    `(${console}), then accept exactly it:`;
  const impostor = "Otherwise something else answers at this address: do not accept it.";
  const text: Record<HostKeySource | "unknown", string> = {
    delivered:
      `${head}, the host key this stack generated for the VM and delivered in its cloud_init (vms[].hostKeys ` +
      `"delivered", the default for kind "nubes"), ${refused} ` +
      `Either the VM did not take the delivered key (an image without cloud-init, or one whose cloud-init skips ` +
      `ssh_keys: check ${console} on its console): then set vms[].hostKeys to "first-contact" for this VM and ` +
      `deploy again, which trusts the key it presents at first contact and records it; ` +
      "or something other than that VM answers at this address: do not trust it.",
    pin: `${head}, the VM's pin (vms[].hostKeySha256), ${refused} ${accept} set vms[].hostKeySha256 to it. ${impostor}`,
    "first-contact":
      `${head}, the key recorded in Terraform state at the VM's first contact, ${refused} ` +
      `${accept} \`npm run trust -- <vm name> ${host.seen}\` (refused unless the VM presents it) or set ` +
      `vms[].hostKeySha256 to it. ${impostor}`,
    unknown:
      `${head} ${refused} The expected key (SSH_HOST_KEY_SHA256) is the VM's pin (vms[].hostKeySha256), the key ` +
      `delivered in its cloud_init, or the key recorded in Terraform state at the VM's first contact. ` +
      `${accept} \`npm run trust -- <vm name> ${host.seen}\` (refused unless the VM presents it) or set ` +
      `vms[].hostKeySha256 to it. ${impostor}`,
  };
  return new SshConnectError(text[target.hostKeySource ?? "unknown"], false, "HOST_KEY_MISMATCH");
}
