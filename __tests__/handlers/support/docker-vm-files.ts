// What install-docker writes and removes under /etc/apt (Docker's key and source, stale entries) and
// elsewhere (daemon.json, grants.json), answered on the stateful docker double (docker-vm.ts) from its
// files: the key fetch, the compare-and-write of key and source, the stale sources' look and their removal.
import { PACKAGES_FILE } from "../../../handlers/common/package-inventory";
import type { ProbeAnswer, Reply } from "./look-answers";
import { pgpKey } from "./pgp-fixtures";
import { renameOf, writtenBytes } from "./remote-writes";

/** Docker's real release key, as its site serves it: the default repo_key_fingerprint accepts it. */
const SERVED_KEY = pgpKey("docker-release.asc");
export const KEYRING = "/etc/apt/keyrings/docker.gpg";
export const DOCKER_LIST = "/etc/apt/sources.list.d/docker.list";
const OLD_KEYRING = "/etc/apt/keyrings/docker.asc";

/** The files the double keeps: path -> bytes as latin1 (a keyring is binary), so the state clones as JSON. */
export type Files = Record<string, string>;

const b64 = (s: string) => Buffer.from(s, "latin1").toString("base64");
const unq = (w: string) => w.replace(/^'|'$/g, "");

/** The key fetch (apt-repository.ts fetchKey): the VM's architecture and the served key, when curl is there. */
export function keyFetch(curl: boolean): Reply {
  if (!curl) return { code: 127, stderr: "sh: 1: curl: not found\n" };
  return { stdout: `amd64\n${SERVED_KEY.toString("base64")}` };
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
): Reply {
  const parts = write ? writtenBytes(cmd, stdin) : comparedBytes(cmd, stdin);
  const key = parts.find((p) => p.path === KEYRING)?.bytes.toString("latin1");
  const source = parts.find((p) => p.path === DOCKER_LIST)?.bytes.toString("latin1") ?? "";
  const out: string[] = [];
  if (!keyringsDir.exists) out.push("changed:created /etc/apt/keyrings");
  const why =
    files[KEYRING] !== undefined
      ? "key differed"
      : files[OLD_KEYRING] !== undefined
        ? `replaces ${OLD_KEYRING}`
        : "new key";
  // No key (a check's, before curl is there): "new" without a keyring, the script's own line with one.
  const differs = key === undefined ? files[KEYRING] === undefined : files[KEYRING] !== key;
  if (key === undefined && files[KEYRING] !== undefined) out.push(unq(/unknown\) echo ('[^']*')/.exec(cmd)![1]));
  else if (differs) out.push(`changed:wrote ${KEYRING} (${why})`);
  if (differs && why === "new key") out.push(`created:${KEYRING}`);
  const sourceWas = files[DOCKER_LIST];
  if (sourceWas === undefined) out.push(`changed:wrote ${DOCKER_LIST} (new source)`, `created:${DOCKER_LIST}`);
  else if (sourceWas !== source) out.push(`changed:wrote ${DOCKER_LIST} (line differed)`);
  if (write && key !== undefined) {
    keyringsDir.exists = true;
    files[KEYRING] = key;
    files[DOCKER_LIST] = source;
  }
  return { stdout: out.map((l) => `${l}\n`).join("") };
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
