// The connection half of the job contract: env_vars carry where and how to reach the VM, the event
// carries what to do there. Read and checked before any socket opens, with every problem named by its
// variable. SSH_KEY is never echoed in an error, not even a prefix of it.

import { JOB_ENV_VARS } from "../../lib/shared/job-env";
import {
  HOST_KEY_SHA256,
  HOST_KEY_SOURCES,
  type HostKeySource,
  isHostAddress,
  UNIX_USER,
} from "../../lib/shared/names";
import { ValidationError } from "../../lib/shared/validate";

export interface ConnectionEnv {
  /** VM_IP: an IPv4/IPv6 address or a DNS name. */
  host: string;
  /** SSH_PORT, default 22. */
  port: number;
  /** SSH_USER: the login, who must have passwordless sudo. */
  user: string;
  /** SSH_KEY: the private key text (OpenSSH or PEM), newlines normalised. */
  privateKey: string;
  /**
   * SSH_KEY_SETTING: where the deployer set that key ("vms[db].privateKeyPath (vm_key)"), so a key problem is
   * told in the words of cdktf.json rather than of the variable it travels in.
   */
  keySetting?: string;
  /** SSH_HOST_KEY_SHA256: when set, the server's host key must have this fingerprint. */
  hostKeySha256?: string;
  /** SSH_HOST_KEY_SOURCE: where that fingerprint comes from (for the mismatch message). */
  hostKeySource?: HostKeySource;
}

/** Where a problem came from, for ValidationError's heading. */
const CONNECTION_ENV_WHERE = "job environment (env_vars VM_IP, SSH_USER, SSH_KEY, SSH_PORT, SSH_HOST_KEY_SHA256)";

/**
 * Normalises key text as it arrives through env vars: a key pasted as one line with literal "\n"
 * escapes, Windows line ends, or surrounding blanks all mean the same key.
 */
export function normalizeKeyText(text: string): string {
  let key = text;
  if (!key.includes("\n") && key.includes("\\n")) key = key.replace(/\\n/g, "\n");
  return `${key.replace(/\r\n?/g, "\n").trim()}\n`;
}

/** What is wrong with SSH_KEY's shape, in words that never quote the value; undefined when fine. */
function keyShapeProblem(key: string, setting: string | undefined): string | undefined {
  if (/^(ssh-(ed25519|rsa|dss)|ecdsa-sha2-\S+) AAAA/.test(key.trim())) {
    return (
      `SSH_KEY: ${setting ? `the file in ${setting}` : "it"} holds a public key (ssh-... AAAA...); it must hold ` +
      "the private key (the file without .pub)"
    );
  }
  if (!/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(key)) {
    return (
      `SSH_KEY: does not look like a private key (${key.trim().length} characters, no "-----BEGIN ... PRIVATE ` +
      `KEY-----" line); give the key file's whole text, e.g. file("vm_key") in Terraform`
    );
  }
  return undefined;
}

/** Reads and checks the connection variables; throws one ValidationError listing every problem. */
export function readConnectionEnv(env: NodeJS.ProcessEnv = process.env): ConnectionEnv {
  const problems: string[] = [];
  const host = hostEnv(env, problems);
  const rawKey = presentValue(env, "SSH_KEY");
  let privateKey = "";
  if (rawKey === undefined) problems.push("SSH_KEY: required, the private key text, is not set");
  else {
    privateKey = normalizeKeyText(rawKey);
    const problem = keyShapeProblem(privateKey, presentValue(env, "SSH_KEY_SETTING"));
    if (problem) problems.push(problem);
  }
  const keySetting = presentValue(env, "SSH_KEY_SETTING");
  if (keySetting !== undefined && !/^[\x20-\x7e]{1,300}$/.test(keySetting))
    problems.push("SSH_KEY_SETTING: not one line of at most 300 printable ASCII characters");
  if (problems.length > 0) throw new ValidationError(CONNECTION_ENV_WHERE, inVariableOrder(problems));
  return { ...host, privateKey, ...(keySetting ? { keySetting } : {}) };
}

/** Where an SSH attempt goes and which host key it must find there (no private key: a probe has none). */
export type HostTarget = Pick<ConnectionEnv, "host" | "port" | "user" | "hostKeySha256" | "hostKeySource">;

/** Where a job that never authenticates (the host-key probe) connects: the same variables but SSH_KEY. */
export function readHostEnv(env: NodeJS.ProcessEnv = process.env): Omit<ConnectionEnv, "privateKey"> {
  const problems: string[] = [];
  const host = hostEnv(env, problems);
  if (problems.length > 0) throw new ValidationError(CONNECTION_ENV_WHERE, problems);
  return host;
}

const VARIABLE_ORDER: readonly string[] = JOB_ENV_VARS;

/** Problems in the order the variables are listed everywhere else (a stable sort by their prefix). */
function inVariableOrder(problems: string[]): string[] {
  const rank = (p: string) => VARIABLE_ORDER.indexOf(p.slice(0, p.indexOf(":")));
  return [...problems].sort((a, b) => rank(a) - rank(b));
}

/** Terraform passes an unset optional as "" as often as it leaves it out: treat both as absent. */
function presentValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === "" ? undefined : value;
}

/** VM_IP, SSH_USER, SSH_PORT, SSH_HOST_KEY_SHA256 and SSH_HOST_KEY_SOURCE, each problem added to `problems`. */
function hostEnv(env: NodeJS.ProcessEnv, problems: string[]): Omit<ConnectionEnv, "privateKey"> {
  const get = (name: string) => presentValue(env, name);
  const host = get("VM_IP");
  if (host === undefined) problems.push("VM_IP: required, the VM's address (IP or DNS name), is not set");
  else if (!isHostAddress(host))
    problems.push(`VM_IP: ${JSON.stringify(host.slice(0, 80))} is not an IP address or host name`);

  const user = get("SSH_USER");
  if (user === undefined) problems.push('SSH_USER: required, the login on the VM (e.g. "ubuntu"), is not set');
  else if (!UNIX_USER.test(user))
    problems.push(
      `SSH_USER: ${JSON.stringify(user.slice(0, 40))} is not a Unix user name (lowercase letters, digits, _ -; at ` +
        `most 32)`,
    );

  let port = 22;
  const rawPort = get("SSH_PORT");
  if (rawPort !== undefined) {
    port = /^[0-9]{1,5}$/.test(rawPort) ? Number(rawPort) : NaN;
    if (!(port >= 1 && port <= 65535))
      problems.push(`SSH_PORT: ${JSON.stringify(rawPort.slice(0, 20))} is not a port number from 1 to 65535`);
  }

  const hostKeySha256 = get("SSH_HOST_KEY_SHA256");
  if (hostKeySha256 !== undefined && !HOST_KEY_SHA256.test(hostKeySha256)) {
    problems.push(
      `SSH_HOST_KEY_SHA256: ${JSON.stringify(hostKeySha256.slice(0, 80))} is not an OpenSSH fingerprint; expected ` +
        `"SHA256:" + 43 base64 characters, as \`ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub\` prints it`,
    );
  }
  const source = get("SSH_HOST_KEY_SOURCE");
  const known = (HOST_KEY_SOURCES as readonly string[]).includes(source ?? "");
  if (source !== undefined && !known) {
    problems.push(
      `SSH_HOST_KEY_SOURCE: ${JSON.stringify(source.slice(0, 40))} is not one of ${HOST_KEY_SOURCES.join(", ")}`,
    );
  }
  return {
    host: host!,
    port,
    user: user!,
    hostKeySha256,
    ...(known ? { hostKeySource: source as HostKeySource } : {}),
  };
}
