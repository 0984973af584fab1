// What install-docker writes and removes under /etc/apt (Docker's key and source, stale entries) and
// elsewhere (daemon.json, grants.json), answered on the stateful docker double (docker-vm.ts) from its
// files: the key fetch, the compare-and-write of key and source, the stale sources' look and their removal.
// The repository's answers serve PGDG's on the postgres double (postgres-vm.ts) too.
import { PACKAGES_FILE } from "../../../handlers/common/package-inventory";
import type { ProbeAnswer, Reply } from "./look-answers";
import { pgpKey } from "./pgp-fixtures";
import { renameOf, writtenBytes } from "./remote-writes";

/** A repository's files as apt-repository.ts writes them for `name`, and the key its site serves. */
export interface RepositoryFiles {
  keyring: string;
  list: string;
  /** What earlier versions wrote (the served file), which a new keyring replaces. */
  oldKeyring: string;
  served: Buffer;
}

const repositoryFiles = (name: string, served: Buffer): RepositoryFiles => ({
  keyring: `/etc/apt/keyrings/${name}.gpg`,
  list: `/etc/apt/sources.list.d/${name}.list`,
  oldKeyring: `/etc/apt/keyrings/${name}.asc`,
  served,
});
/** Docker's repository; its real release key, as its site serves it: the default repo_key_fingerprint accepts it. */
const DOCKER_REPOSITORY = repositoryFiles("docker", pgpKey("docker-release.asc"));
/** PGDG's repository, with PGDG's real key. */
export const PGDG_REPOSITORY = repositoryFiles("pgdg", pgpKey("pgdg.asc"));
export const KEYRING = DOCKER_REPOSITORY.keyring;
export const DOCKER_LIST = DOCKER_REPOSITORY.list;

/** The files the double keeps: path -> bytes as latin1 (a keyring is binary), so the state clones as JSON. */
export type Files = Record<string, string>;

const b64 = (s: string) => Buffer.from(s, "latin1").toString("base64");
const unq = (w: string) => w.replace(/^'|'$/g, "");

/** The key fetch (apt-repository.ts fetchKey): the VM's architecture and the served key, when curl is there. */
export function keyFetch(curl: boolean, repo = DOCKER_REPOSITORY): Reply {
  if (!curl) return { code: 127, stderr: "sh: 1: curl: not found\n" };
  return { stdout: `amd64\n${repo.served.toString("base64")}` };
}

/** What a check's compare (remote-file.ts compareFragment) reads from stdin: each file's bytes, in order. */
function comparedBytes(command: string, stdin: Buffer): { path: string; bytes: Buffer }[] {
  let at = 0;
  return [...command.matchAll(/head -c (\d+) \| \{ case "\$\(stat -c %F\.%u\.%a ('[^']*'|\S+) /g)].map((m) => {
    const bytes = stdin.subarray(at, at + Number(m[1]));
    at += bytes.length;
    return { path: unq(m[2]), bytes };
  });
}

/**
 * apt-repository.ts' key and source script: each file replaced only when its bytes differ, one "changed:" line
 * each; a check's (`write` false) decides alike and writes nothing, a keyring there with no key to compare with
 * says the script's own line for it.
 */
export function keyAndSource(
  files: Files,
  keyringsDir: { exists: boolean },
  cmd: string,
  stdin: Buffer,
  write: boolean,
  repo = DOCKER_REPOSITORY,
): Reply {
  const { keyring, list, oldKeyring } = repo;
  const parts = write ? writtenBytes(cmd, stdin) : comparedBytes(cmd, stdin);
  const key = parts.find((p) => p.path === keyring)?.bytes.toString("latin1");
  const source = parts.find((p) => p.path === list)?.bytes.toString("latin1") ?? "";
  const out: string[] = [];
  if (!keyringsDir.exists) out.push("changed:created /etc/apt/keyrings");
  const why =
    files[keyring] !== undefined
      ? "key differed"
      : files[oldKeyring] !== undefined
        ? `replaces ${oldKeyring}`
        : "new key";
  // No key (a check's, before curl is there): "new" without a keyring, the script's own line with one.
  const differs = key === undefined ? files[keyring] === undefined : files[keyring] !== key;
  if (key === undefined && files[keyring] !== undefined) out.push(unq(/unknown\) echo ('[^']*')/.exec(cmd)![1]));
  else if (differs) out.push(`changed:wrote ${keyring} (${why})`);
  if (differs && why === "new key") out.push(`created:${keyring}`);
  const sourceWas = files[list];
  if (sourceWas === undefined) out.push(`changed:wrote ${list} (new source)`, `created:${list}`);
  else if (sourceWas !== source) out.push(`changed:wrote ${list} (line differed)`);
  if (write && key !== undefined) {
    keyringsDir.exists = true;
    files[keyring] = key;
    files[list] = source;
  }
  return { stdout: out.map((l) => `${l}\n`).join("") };
}

/**
 * A repository's commands on a VM with curl whose /etc/apt/keyrings exists (the postgres double's PGDG): curl
 * looked for, the key fetch, key and source compared or written, stale entries asked about or removed.
 */
export function repositoryReply(files: Files, repo: RepositoryFiles, cmd: string, stdin: Buffer): Reply | undefined {
  if (cmd === "command -v curl || true") return { stdout: "/usr/bin/curl\n" };
  if (cmd.startsWith("dpkg --print-architecture && ")) return keyFetch(true, repo);
  if (cmd.startsWith('if [ -d /etc/apt/keyrings ]; then :; else echo "changed:created '))
    return keyAndSource(files, { exists: true }, cmd, stdin, cmd.includes("mv -fT"), repo);
  if (cmd.startsWith("set -e\n")) return removeStale(files, cmd, stdin);
  return staleKeyringsAsked(files, cmd);
}

/** stale-repositories.ts' look's probes: the source files, the legacy keyrings there, apt-key's keyring (none). */
export function sourcesProbe(files: Files, cmd: string): ProbeAnswer | undefined {
  if (cmd.startsWith("for f in /etc/apt/sources.list ")) {
    const sources = Object.keys(files).filter((p) =>
      /^\/etc\/apt\/sources\.list(\.d\/[^/]+\.(list|sources))?$/.test(p),
    );
    return { stdout: sources.map((p) => `${b64(p)} ${b64(files[p])}\n`).join(""), code: 0 };
  }
  if (cmd.startsWith("if [ -e ") && cmd.includes("dpkg -S")) {
    const there = [...cmd.matchAll(/if \[ -e (\S+) \]/g)].map((m) => unq(m[1])).filter((k) => files[k] !== undefined);
    return { stdout: there.map((k) => `${b64(k)}\n`).join(""), code: 0 };
  }
  if (cmd.startsWith("[ -s /etc/apt/trusted.gpg ]")) return { stdout: "", code: 3 };
  return undefined;
}

/** The stale entries' removal (stale-repositories.ts removals): files removed or rewritten, keyrings removed, in order. */
export function removeStale(files: Files, cmd: string, stdin: Buffer): Reply {
  const out: string[] = [];
  const rewritten = writtenBytes(cmd, stdin);
  for (const line of cmd.split("\n")) {
    if (line.includes("head -c ")) {
      const { path, bytes } = rewritten.shift()!;
      files[path] = bytes.toString("latin1");
      out.push(`changed:removed this repository's entries from ${path}`);
    }
    const m = /^(if .*; then )?rm -f (\S+) && echo ('[^']*'|\S+)/.exec(line);
    if (!m || (m[1] && files[unq(m[2])] === undefined)) continue;
    delete files[unq(m[2])];
    out.push(unq(m[3]));
  }
  return { stdout: out.map((l) => `${l}\n`).join("") };
}

/** A check's question about keyrings stale entries name (stale-repositories.ts): the removal's condition, its line. */
export function staleKeyringsAsked(files: Files, cmd: string): Reply | undefined {
  if (!cmd.startsWith("if [ -e ")) return undefined;
  const asked = [...cmd.matchAll(/if \[ -e (\S+) \][^\n]*?; then echo ('[^']*'|\S+); fi/g)];
  const there = asked.filter((m) => files[unq(m[1])] !== undefined).map((m) => unq(m[2]));
  return { stdout: there.map((l) => `${l}\n`).join("") };
}

/** A file written as remote-file.ts writes it (not the package inventory: apt-vm.ts keeps that). */
export function writeFiles(files: Files, cmd: string, stdin: Buffer): Reply | undefined {
  if (cmd.includes(renameOf(PACKAGES_FILE))) return undefined;
  const written = writtenBytes(cmd, stdin);
  if (!written.length) return undefined;
  for (const { path, bytes } of written) files[path] = bytes.toString("latin1");
  return {};
}

/** `rm -f <files>`: the daemon.json removal, and what a failed repository's run had written. */
export function removeFiles(files: Files, cmd: string): Reply | undefined {
  const m = /^rm -f (?:-- )?((?:\S+ ?)+)$/.exec(cmd);
  if (!m) return undefined;
  for (const p of m[1].split(" ")) delete files[unq(p)];
  return {};
}

/** A probe reading a file when it is there (`if [ -e F ]; then cat F; else exit 3; fi`): daemon.json, grants. */
export function fileProbe(files: Files, cmd: string): ProbeAnswer | undefined {
  const m = /^if \[ -e (\S+) \]; then cat \S+; else exit 3; fi$/.exec(cmd);
  if (!m) return undefined;
  const text = files[unq(m[1])];
  return text === undefined ? { stdout: "", code: 3 } : { stdout: text, code: 0 };
}
