// A third-party repository's signing key, fetched by the VM and trusted only once checked here (openpgp.ts):
// the bytes come back to this job, the primary keys must be exactly the expected fingerprints, and what is
// written is a keyring rebuilt from the packets checked. A run fetches it before writing; a check the same way.

import { quote } from "../../lib/shared/shell-quote";
import { keyFetchProxy } from "./apt-proxy";
import type { Remote } from "./exec";
import { binaryKeyring, OpenPgpError, readCertificates } from "./openpgp";

/** A repository's key: where it is served and which primary keys it must hold. */
export interface RepositoryKey {
  /** File stem: /etc/apt/keyrings/<name>.gpg and /etc/apt/sources.list.d/<name>.list. */
  name: string;
  /** Where the repository's signing key is published (http/https). */
  keyUrl: string;
  /** The primary keys (40 hex digits, upper case) the keyring must hold: all of them and no other. */
  fingerprints: string[];
  /** How the user changes the key URL and the fingerprints, for the mismatch message (setting names). */
  settings?: { keyUrl: string; fingerprints: string };
}

/** dpkg architecture names ("amd64", "arm64", "armhf", "ppc64el", "s390x", "i386"). */
export const ARCH = /^[a-z0-9][a-z0-9-]{0,31}$/;
const ARCH_COMMAND = "dpkg --print-architecture";

/** The VM's architecture, when a check cannot fetch the key yet (curl comes with the run). */
export async function vmArchitecture(remote: Remote): Promise<string> {
  const { stdout } = await remote.run(ARCH_COMMAND, { label: "dpkg --print-architecture" });
  return architectureOf(stdout.split("\n")[0] ?? "");
}

function architectureOf(line: string): string {
  const vmArch = line.trim();
  if (!ARCH.test(vmArch))
    throw new Error(
      `dpkg --print-architecture on the VM printed ${JSON.stringify(vmArch.slice(0, 40))}, not an architecture`,
    );
  return vmArch;
}

/**
 * "asc" for what was served as ASCII armour (a line starting "-----BEGIN PGP" anywhere: whether it is a
 * key file and nothing else is readCertificates's to say), "gpg" for a binary key, undefined for anything
 * else (an HTML error page, say). It names what was served; what is written is always a binary keyring.
 */
export function keyFormat(key: Buffer): "asc" | "gpg" | undefined {
  if (/(^|\n)-----BEGIN PGP/.test(key.toString("latin1"))) return "asc";
  const first = key[0];
  if (first === undefined || (first & 0x80) === 0) return undefined;
  // A binary key starts with a public-key packet (tag 6), or a marker packet (tag 10) that readers skip.
  const tag = first & 0x40 ? first & 0x3f : (first >> 2) & 0x0f;
  return tag === 6 || tag === 10 ? "gpg" : undefined;
}

/** A short, printable description of what came back instead of a key (an HTML error page, say). */
function describeNonKey(key: Buffer): string {
  if (key.length === 0) return "an empty response";
  const text = key
    .subarray(0, 60)
    .toString("latin1")
    .replace(/[^\x20-\x7e]+/g, " ")
    .trim();
  return `${key.length} bytes starting ${JSON.stringify(text)}`;
}

/**
 * The VM's architecture and the keyring rebuilt from the key as the VM sees it (it, not this job, must
 * reach the URL). base64 so a binary key survives the text channel; curl's own message on failure. A read:
 * the login user's curl into a temporary file of its own, removed on exit (a check fetches the key too).
 */
export async function fetchKey(remote: Remote, spec: RepositoryKey): Promise<{ vmArch: string; keyringBytes: Buffer }> {
  const fetched = await remote.run(
    `${ARCH_COMMAND} && ${keyFetchProxy(spec.keyUrl)}t=$(mktemp) && trap 'rm -f "$t"' EXIT && ` +
      `curl -fsSL --proto '=http,https' --retry 3 --connect-timeout 20 --max-time 120 -o "$t" ${quote(spec.keyUrl)} ` +
      `&& base64 -w0 "$t"`,
    { check: false, label: `fetching ${spec.keyUrl}`, timeoutMs: 180_000 },
  );
  if (fetched.code !== 0) {
    const why =
      fetched.code === 127 || /curl: (command )?not found/.test(fetched.stderr)
        ? "curl is not installed on the VM (install curl and ca-certificates first)"
        : fetched.stderr.trim().split("\n").slice(-2).join("; ") || `exit ${fetched.code}`;
    throw new Error(
      `could not fetch the signing key of apt repository ${spec.name} from ${spec.keyUrl} on the VM: ${why}. ` +
        `Check the repository URL (a mirror must serve the key at that path) and that the VM reaches it (proxy, ` +
        `firewall, DNS).`,
    );
  }
  const [archLine = "", b64 = ""] = fetched.stdout.split("\n");
  const vmArch = architectureOf(archLine);
  const key = Buffer.from(b64.trim(), "base64");
  if (!keyFormat(key)) {
    throw new Error(
      `${spec.keyUrl} did not return an OpenPGP public key but ${describeNonKey(key)}: check the repository URL ` +
        `(it must serve the key the repository is signed with at that path)`,
    );
  }
  return { vmArch, keyringBytes: verifyKey(spec, key) };
}

/**
 * The binary keyring rebuilt from `key`'s packets, or an Error unless the file holds exactly
 * `spec.fingerprints` as its primary keys and nothing unaccounted for (subkeys belong to their primary).
 * Called before anything is written, hence "nothing was written" in every message.
 */
function verifyKey(spec: RepositoryKey, key: Buffer): Buffer {
  const what = `the key at ${spec.keyUrl} for apt repository ${spec.name}`;
  const hint = spec.settings
    ? `point ${spec.settings.keyUrl} at the repository's own key, or set ${spec.settings.fingerprints} when a ` +
      `mirror signs with a key of its own`
    : "point the key URL at the repository's own key, or give the fingerprint of the key a mirror signs with";
  let certificates: ReturnType<typeof readCertificates>;
  try {
    certificates = readCertificates(key);
  } catch (err) {
    if (!(err instanceof OpenPgpError)) throw err;
    throw new Error(unreadable(spec, what, err, hint));
  }
  const seen = certificates.map((c) => c.fingerprint);
  const unexpected = seen.filter((f) => !spec.fingerprints.includes(f));
  const missing = spec.fingerprints.filter((f) => !seen.includes(f));
  if (unexpected.length === 0 && missing.length === 0) return binaryKeyring(certificates);
  const detail = [
    unexpected.length ? `not expected: ${unexpected.join(", ")}` : "",
    missing.length ? `missing: ${missing.join(", ")}` : "",
  ]
    .filter(Boolean)
    .join("; ");
  throw new Error(
    `${what} is not the expected key: expected ${spec.fingerprints.join(", ")}, served ${seen.join(", ")} ` +
      `(${detail}); ` +
      `nothing was written to the VM (no key, no source). To fix: ${hint}.`,
  );
}

/**
 * The message for a key file that cannot be fully read; keys found in it that were not expected come
 * first, by fingerprint.
 */
function unreadable(spec: RepositoryKey, what: string, err: OpenPgpError, hint: string): string {
  const hidden = err.hiddenKeys.filter((f) => !spec.fingerprints.includes(f));
  if (hidden.length === 0) {
    return (
      `${what} is not a readable OpenPGP public key (${err.message}); expected ` +
      `${spec.fingerprints.join(", ")}; nothing was written to the VM (no key, no source). Check the URL: ${hint}.`
    );
  }
  return (
    `${what} holds more than the expected key ${spec.fingerprints.join(", ")}: besides it, key ${hidden.join(", ")} ` +
    `(not expected), which apt would have trusted too; ` +
    `refused: ${err.message}. Nothing was written to the VM (no key, no source). Check who serves ${spec.keyUrl} ` +
    `(over http:// anyone on the path can alter it): ${hint}.`
  );
}
