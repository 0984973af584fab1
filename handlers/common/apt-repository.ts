// Third-party apt repositories (Docker, PGDG) set up the way Docker's install docs do it, Ansible-like:
// look first, change only what differs, say what changed. The key is trusted only once checked here
// (openpgp.ts), and what is written is a keyring rebuilt from the checked packets, not the served file.

import { KEY_FINGERPRINT, REPO_URL } from "../../lib/shared/names";
import { quote } from "../../lib/shared/shell-quote";
import { keyFetchProxy } from "./apt-proxy";
import type { Remote } from "./exec";
import { binaryKeyring, OpenPgpError, readCertificates } from "./openpgp";
import { type Progress, stepIf } from "./progress";
import { type RemoteFile, writeFragment } from "./remote-file";

//   const repo = await ensureAptRepository(remote, {
//     name: "docker",                  // /etc/apt/keyrings/docker.gpg + sources.list.d/docker.list
//     keyUrl: "https://download.docker.com/linux/ubuntu/gpg",
//     uri: "https://download.docker.com/linux/ubuntu",
//     suite: os.codename,                                    // "jammy"
//     components: ["stable"],
//     fingerprints: ["9DC858229FC7DD38854AE2D88D81803C0EBFCD88"],  // exactly the keys the keyring may hold
//   }, progress);
//   // -> deb [arch=amd64 signed-by=/etc/apt/keyrings/docker.gpg] https://download.docker.com/linux/ubuntu jammy stable
//   await removeStaleRepositories(remote, {
//     uris: [repo.uri], keep: { sources: [repo.sourceFile], keyrings: [repo.keyring] },
//     keyrings: ["/usr/share/keyrings/docker-archive-keyring.gpg"], trustedFingerprints: [DOCKER_KEY_FPR],
//   }, progress);
//   if (repo.changed) ... apt-get update
//
// The source is a one-line `.list` file, not deb822 `.sources`: it is the form both upstreams document
// for apt on every release these installers meet (Docker's docs for years, PGDG's still), it has the
// same name (docker.list, pgdg.list) as the file existing VMs already have, so an old entry is rewritten
// in place rather than duplicated, and one line is what a person greps for. Any other file pointing at
// the same repository (deb822 included) is stale and removeStaleRepositories takes it away: two entries
// for one URI with different signed-by keyrings make every `apt-get update` fail ("Conflicting values
// set for option Signed-By").
//
// The key is trusted only once checked: the fetched bytes come back to this job, which reads them
// (./openpgp.ts), refuses a file holding anything it cannot account for (a second armour block of any
// type, text or binary around the armour: apt would read those too), and requires the primary keys to be
// exactly `fingerprints`; only then is anything written to the VM, so a wrong key leaves no key and no
// source behind, and the check does not depend on gpg being on the VM. What is written is not the served
// file but a binary keyring rebuilt from the packets that were checked, so apt can only ever trust the
// expected primaries. That is why an http:// key URL is acceptable: whoever can alter the download can
// change the key, not make apt trust another one; the repository's own files are then checked by apt
// against that key.
//
// Keys go to /etc/apt/keyrings (created 0755) as <name>.gpg, world-readable (apt reads them as the _apt
// user). The key is fetched by the login user (curl needs no root) and written by root from stdin. Earlier
// versions wrote an armoured key as the served bytes to <name>.asc: the next call writes <name>.gpg and
// points the source at it, and removeStaleRepositories removes the .asc (supersededKeyrings).
/** File stems for keyrings and source files: no slashes, nothing a shell or apt treats specially. */
const REPO_NAME = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
/** Suites ("jammy", "bookworm-pgdg") and components ("stable", "main"). */
const SUITE = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
/** dpkg architecture names ("amd64", "arm64", "armhf", "ppc64el", "s390x", "i386"). */
const ARCH = /^[a-z0-9][a-z0-9-]{0,31}$/;

export const KEYRINGS_DIR = "/etc/apt/keyrings";
export const SOURCES_DIR = "/etc/apt/sources.list.d";

export interface AptRepositorySpec {
  /** File stem: /etc/apt/keyrings/<name>.gpg and /etc/apt/sources.list.d/<name>.list. */
  name: string;
  /** Where the repository's signing key is published (http/https). */
  keyUrl: string;
  /** The repository's base URI, e.g. https://download.docker.com/linux/ubuntu (no trailing slash needed). */
  uri: string;
  /** The suite, usually the release codename ("jammy", "bookworm"). */
  suite: string;
  components: string[];
  /** The primary keys (40 hex digits, upper case) the keyring must hold: all of them and no other. */
  fingerprints: string[];
  /** How the user changes the key URL and the fingerprints, for the mismatch message (setting names). */
  settings?: { keyUrl: string; fingerprints: string };
  /** @default [the VM's own architecture, `dpkg --print-architecture`] */
  architectures?: string[];
}

export interface AptRepositoryOutcome {
  /** True when this call changed a file (the caller should run apt-get update). */
  changed: boolean;
  /** What changed, one line each ("wrote /etc/apt/keyrings/docker.gpg (new key)", ...). */
  changes: string[];
  /** The files this call wrote where there was none: vm-install's, so state absent takes them back. */
  created: string[];
  /** The keyring file the source is signed by. */
  keyring: string;
  /** The source file written. */
  sourceFile: string;
  /** The source line, as written. */
  line: string;
  uri: string;
  architectures: string[];
}

/** The source line for `spec` with its keyring: `deb [arch=amd64 signed-by=K] URI suite comps`. */
export function sourceLine(
  spec: { uri: string; suite: string; components: string[] },
  architectures: string[],
  keyring: string,
): string {
  return (
    `deb [arch=${architectures.join(",")} signed-by=${keyring}] ${trimSlash(spec.uri)} ${spec.suite} ` +
    `${spec.components.join(" ")}`
  );
}

function trimSlash(uri: string): string {
  return uri.replace(/\/+$/, "");
}

/** Throws (a programming error: callers validate their events) when `spec` holds anything unsafe. */
function checkSpec(spec: AptRepositorySpec): void {
  const problems: string[] = [];
  if (!REPO_NAME.test(spec.name)) problems.push(`name ${JSON.stringify(spec.name)} is not a plain file stem`);
  if (!REPO_URL.test(spec.keyUrl))
    problems.push(`keyUrl ${JSON.stringify(spec.keyUrl)} is not an http(s) URL without quotes or spaces`);
  if (!REPO_URL.test(spec.uri))
    problems.push(`uri ${JSON.stringify(spec.uri)} is not an http(s) URL without quotes or spaces`);
  if (!SUITE.test(spec.suite)) problems.push(`suite ${JSON.stringify(spec.suite)} is not a suite name`);
  if (spec.components.length === 0 || !spec.components.every((c) => SUITE.test(c)))
    problems.push(`components ${JSON.stringify(spec.components)} are not component names`);
  if (spec.fingerprints.length === 0) problems.push("fingerprints: at least one expected key fingerprint is required");
  else if (!spec.fingerprints.every((f) => KEY_FINGERPRINT.test(f)))
    problems.push(`fingerprints ${JSON.stringify(spec.fingerprints)} are not 40 upper-case hex digits each`);
  if (spec.architectures && (spec.architectures.length === 0 || !spec.architectures.every((a) => ARCH.test(a)))) {
    problems.push(`architectures ${JSON.stringify(spec.architectures)} are not dpkg architectures`);
  }
  if (problems.length) throw new Error(`apt repository ${spec.name}: ${problems.join("; ")}`);
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
 * Makes sure the VM has `spec`'s signing key in /etc/apt/keyrings and a signed-by source line for it.
 * Two commands when nothing differs (fetch + compare), and the compare command is also the one that
 * writes, so files are only replaced when their bytes differ. Throws with what to check when the key
 * cannot be fetched or is not a key.
 */
export async function ensureAptRepository(
  remote: Remote,
  spec: AptRepositorySpec,
  progress?: Progress,
): Promise<AptRepositoryOutcome> {
  checkSpec(spec);
  return stepIf(
    progress,
    `apt repository ${spec.name}: ${trimSlash(spec.uri)} ${spec.suite}`,
    async () => {
      const { vmArch, keyringBytes } = await fetchKey(remote, spec);
      const architectures = spec.architectures ?? [vmArch];
      const keyring = `${KEYRINGS_DIR}/${spec.name}.gpg`;
      const sourceFile = `${SOURCES_DIR}/${spec.name}.list`;
      const line = sourceLine(spec, architectures, keyring);
      const { changes, created } = await writeKeyAndSource(remote, keyringBytes, keyring, sourceFile, line);
      for (const change of changes) progress?.info(change);
      if (changes.length === 0) progress?.info(`${sourceFile} and ${keyring} are up to date`);
      return {
        changed: changes.length > 0,
        changes,
        created,
        keyring,
        sourceFile,
        line,
        uri: trimSlash(spec.uri),
        architectures,
      };
    },
    "apt_repository",
  );
}

/**
 * The keyring an earlier version wrote for repository `name`: the served key file itself, which apt reads
 * whole (every key in it trusted). An installer that finds it sets its repository up again, so it is
 * rebuilt from the verified key, even when nothing else is to be installed.
 */
export function legacyKeyring(name: string): string {
  return `${KEYRINGS_DIR}/${name}.asc`;
}

/** The keyring files earlier versions of ensureAptRepository wrote for the repository now in `keyring`. */
export function supersededKeyrings(keyring: string): string[] {
  const m = /^(\/etc\/apt\/keyrings\/[a-z0-9][a-z0-9_.-]*)\.gpg$/.exec(keyring);
  return m ? [`${m[1]}.asc`] : [];
}

/**
 * The VM's architecture and the keyring rebuilt from the key as the VM sees it (it, not this job, must
 * reach the URL). base64 so a binary key survives the text channel; curl's own message on failure.
 */
async function fetchKey(remote: Remote, spec: AptRepositorySpec): Promise<{ vmArch: string; keyringBytes: Buffer }> {
  const fetched = await remote.run(
    `dpkg --print-architecture && ${keyFetchProxy(spec.keyUrl)}t=$(mktemp) && trap 'rm -f "$t"' EXIT && ` +
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
  const vmArch = archLine.trim();
  if (!ARCH.test(vmArch))
    throw new Error(
      `dpkg --print-architecture on the VM printed ${JSON.stringify(vmArch.slice(0, 40))}, not an architecture`,
    );
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
function verifyKey(spec: AptRepositorySpec, key: Buffer): Buffer {
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
function unreadable(spec: AptRepositorySpec, what: string, err: OpenPgpError, hint: string): string {
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

/**
 * Compares on the VM and replaces only what differs (remote-file.ts's unlessSame, as root into root's
 * /etc/apt directories); each replacement prints one "changed:" line, which is returned. Key and source line
 * are the two parts of stdin, in that order; each goes in through a temporary name + mv, so apt never reads
 * half a file.
 */
async function writeKeyAndSource(
  remote: Remote,
  key: Buffer,
  keyring: string,
  sourceFile: string,
  line: string,
): Promise<{ changes: string[]; created: string[] }> {
  const k = quote(keyring);
  const source = `${line}\n`;
  const file = (path: string, content: string | Buffer): RemoteFile =>
    ({ path, content, writer: "root", mode: "0644", unlessSame: true }) as const;
  // Said apart from "new key": a key this run wrote new is removed again when the repository then
  // fails, a migrated one is not.
  const [old] = supersededKeyrings(keyring);
  const script = [
    `if [ -d ${KEYRINGS_DIR} ]; then :; else echo "changed:created ${KEYRINGS_DIR}"; fi`,
    `if [ -e ${k} ]; then why="key differed"; ` +
      `${old ? `elif [ -e ${quote(old)} ]; then why=${quote(`replaces ${old}`)}; ` : ""}else why="new key"; fi`,
    writeFragment({ ...file(keyring, key), dir: { mode: "0755" } }),
    `case $w in new | content) echo "changed:wrote ${keyring} ($why)";; ` +
      `mode) echo ${quote(`changed:made ${keyring} root's and 0644 (apt reads it as _apt)`)};; esac`,
    `if [ -n "$w" ] && [ "$why" = "new key" ]; then echo ${quote(`created:${keyring}`)}; fi`,
    writeFragment(file(sourceFile, source)),
    `case $w in new) echo "changed:wrote ${sourceFile} (new source)"; echo ${quote(`created:${sourceFile}`)};; ` +
      `content) echo "changed:wrote ${sourceFile} (line differed)";; ` +
      `mode) echo "changed:wrote ${sourceFile} (mode differed)";; esac`,
  ].join("\n");
  const result = await remote.run(script, {
    sudo: true,
    stdin: Buffer.concat([key, Buffer.from(source)]),
    label: `writing ${keyring} and ${sourceFile}`,
    timeoutMs: 60_000,
    mutates: true,
  });
  const marked = (mark: string) =>
    result.stdout
      .split("\n")
      .filter((l) => l.startsWith(mark))
      .map((l) => l.slice(mark.length));
  return { changes: marked("changed:"), created: marked("created:") };
}
