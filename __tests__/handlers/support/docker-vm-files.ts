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

/** writeKeyAndSource's script: each file replaced only when its bytes differ, one "changed:" line each. */
export function writeKeyAndSource(files: Files, keyringsDir: { exists: boolean }, cmd: string, stdin: Buffer): Reply {
  const [key, source] = writtenBytes(cmd, stdin);
  const out: string[] = [];
  if (!keyringsDir.exists) out.push("changed:created /etc/apt/keyrings");
  keyringsDir.exists = true;
  const why =
    files[KEYRING] !== undefined
      ? "key differed"
      : files[OLD_KEYRING] !== undefined
        ? `replaces ${OLD_KEYRING}`
        : "new key";
  const keyWas = files[KEYRING];
  files[KEYRING] = key.bytes.toString("latin1");
  if (keyWas !== files[KEYRING]) out.push(`changed:wrote ${KEYRING} (${why})`);
  if (keyWas !== files[KEYRING] && why === "new key") out.push(`created:${KEYRING}`);
  const sourceWas = files[DOCKER_LIST];
  files[DOCKER_LIST] = source.bytes.toString("latin1");
  if (sourceWas === undefined) out.push(`changed:wrote ${DOCKER_LIST} (new source)`, `created:${DOCKER_LIST}`);
  else if (sourceWas !== files[DOCKER_LIST]) out.push(`changed:wrote ${DOCKER_LIST} (line differed)`);
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

/** The stale entries' removal (stale-repositories.ts removalActions): files removed or rewritten, keyrings removed. */
export function removeStale(files: Files, cmd: string, stdin: Buffer): Reply {
  const out: string[] = [];
  for (const { path, bytes } of writtenBytes(cmd, stdin)) {
    files[path] = bytes.toString("latin1");
    out.push(`changed:removed this repository's entries from ${path}`);
  }
  for (const m of cmd.matchAll(/(then )?rm -f (\S+) && echo ('[^']*'|\S+)/g)) {
    const path = unq(m[2]);
    if (m[1] && files[path] === undefined) continue;
    delete files[path];
    out.push(unq(m[3]));
  }
  return { stdout: out.map((l) => `${l}\n`).join("") };
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
