// Third-party apt repositories (Docker, PGDG) set up the way Docker's install docs do it, Ansible-like:
// look first, change only what differs, say what changed. The key is trusted only once checked here
// (openpgp.ts), and what is written is a keyring rebuilt from the checked packets, not the served file.

import { KEY_FINGERPRINT, REPO_URL } from "../../lib/shared/names";
import { quote } from "../../lib/shared/shell-quote";
import { ARCH, fetchKey, type RepositoryKey, vmArchitecture } from "./apt-key";
import type { Remote } from "./exec";
import { type Progress, stepIf } from "./progress";
import { compareFragment, type RemoteFile, writeFragment } from "./remote-file";

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

export const KEYRINGS_DIR = "/etc/apt/keyrings";
export const SOURCES_DIR = "/etc/apt/sources.list.d";

export interface AptRepositorySpec extends RepositoryKey {
  /** The repository's base URI, e.g. https://download.docker.com/linux/ubuntu (no trailing slash needed). */
  uri: string;
  /** The suite, usually the release codename ("jammy", "bookworm"). */
  suite: string;
  components: string[];
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
 * Makes sure the VM has `spec`'s signing key in /etc/apt/keyrings and a signed-by source line for it.
 * Two commands when nothing differs (fetch + compare), and the compare command is also the one that
 * writes, so files are only replaced when their bytes differ. Throws with what to check when the key
 * cannot be fetched or is not a key.
 */
export function ensureAptRepository(
  remote: Remote,
  spec: AptRepositorySpec,
  progress?: Progress,
): Promise<AptRepositoryOutcome> {
  return keyAndSource(remote, spec, progress, { write: true });
}

/** How a check knows the key: fetched and checked as a run does, or not yet (`why`: curl comes with the run). */
export type KeyInCheck = { fetch: true } | { fetch: false; why: string };

/**
 * A check's ensureAptRepository: the same fetch, key check and compare (the run's decision script without its
 * writes), so its `changes` are the run's lines; nothing is written. A key not fetched leaves one line for the
 * keyring when one is there (whether its bytes are the key's is not known); every other line is the run's.
 */
export function foreseeAptRepository(
  remote: Remote,
  spec: AptRepositorySpec,
  key: KeyInCheck,
  progress?: Progress,
): Promise<AptRepositoryOutcome> {
  return keyAndSource(remote, spec, progress, { write: false, key });
}

type How = { write: true } | { write: false; key: KeyInCheck };

async function keyAndSource(
  remote: Remote,
  spec: AptRepositorySpec,
  progress: Progress | undefined,
  how: How,
): Promise<AptRepositoryOutcome> {
  checkSpec(spec);
  return stepIf(
    progress,
    `apt repository ${spec.name}: ${trimSlash(spec.uri)} ${spec.suite}`,
    async () => {
      const fetch = how.write || how.key.fetch;
      const { vmArch, keyringBytes } = fetch
        ? await fetchKey(remote, spec)
        : { vmArch: spec.architectures ? "" : await vmArchitecture(remote), keyringBytes: undefined };
      const architectures = spec.architectures ?? [vmArch];
      const keyring = `${KEYRINGS_DIR}/${spec.name}.gpg`;
      const sourceFile = `${SOURCES_DIR}/${spec.name}.list`;
      const line = sourceLine(spec, architectures, keyring);
      const files = { key: keyringBytes, keyring, sourceFile, line };
      const notFetched = `${keyring} compared with the key from ${spec.keyUrl} and rewritten if it differs`;
      const unknown = !how.write && !how.key.fetch ? `${notFetched} (${how.key.why})` : undefined;
      const { changes, created } = await keyAndSourceExec(remote, files, how.write, unknown);
      for (const change of changes) progress?.info(how.write ? change : `a run would say: ${change}`);
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
 * Compares on the VM and replaces only what differs (remote-file.ts's unlessSame, as root into root's
 * /etc/apt directories); each replacement prints one "changed:" line, which is returned. Key and source line
 * are the two parts of stdin, in that order; each goes in through a temporary name + mv, so apt never reads
 * half a file. Without `write` (a check) the same script decides with compareFragment and writes nothing; a
 * key not fetched (a check's) is compared with nothing: the `unknown` line stands for it when a keyring is there.
 */
async function keyAndSourceExec(
  remote: Remote,
  files: { key?: Buffer; keyring: string; sourceFile: string; line: string },
  write: boolean,
  unknown?: string,
): Promise<{ changes: string[]; created: string[] }> {
  const { key, keyring, sourceFile, line } = files;
  const k = quote(keyring);
  const source = `${line}\n`;
  const file = (path: string, content: string | Buffer): RemoteFile =>
    ({ path, content, writer: "root", mode: "0644", unlessSame: true }) as const;
  const decide = (spec: RemoteFile) => (write ? writeFragment(spec) : compareFragment(spec));
  // Said apart from "new key": a key this run wrote new is removed again when the repository then
  // fails, a migrated one is not.
  const [old] = supersededKeyrings(keyring);
  const keyFile = { ...file(keyring, key ?? ""), dir: { mode: "0755" } };
  const script = [
    `if [ -d ${KEYRINGS_DIR} ]; then :; else echo "changed:created ${KEYRINGS_DIR}"; fi`,
    `if [ -e ${k} ]; then why="key differed"; ` +
      `${old ? `elif [ -e ${quote(old)} ]; then why=${quote(`replaces ${old}`)}; ` : ""}else why="new key"; fi`,
    key ? decide(keyFile) : compareFragment({ ...keyFile, content: undefined }),
    `case $w in new | content) echo "changed:wrote ${keyring} ($why)";; ` +
      `mode) echo ${quote(`changed:made ${keyring} root's and 0644 (apt reads it as _apt)`)};; ` +
      `${unknown ? `unknown) echo ${quote(`changed:${unknown}`)};; ` : ""}esac`,
    `if [ -n "$w" ] && [ "$why" = "new key" ]; then echo ${quote(`created:${keyring}`)}; fi`,
    decide(file(sourceFile, source)),
    `case $w in new) echo "changed:wrote ${sourceFile} (new source)"; echo ${quote(`created:${sourceFile}`)};; ` +
      `content) echo "changed:wrote ${sourceFile} (line differed)";; ` +
      `mode) echo "changed:wrote ${sourceFile} (mode differed)";; esac`,
  ].join("\n");
  const result = await remote.run(script, {
    sudo: true,
    stdin: Buffer.concat([key ?? Buffer.alloc(0), Buffer.from(source)]),
    label: `${write ? "writing" : "comparing"} ${keyring} and ${sourceFile}`,
    timeoutMs: 60_000,
    mutates: write,
  });
  const marked = (mark: string) =>
    result.stdout
      .split("\n")
      .filter((l) => l.startsWith(mark))
      .map((l) => l.slice(mark.length));
  return { changes: marked("changed:"), created: marked("created:") };
}
