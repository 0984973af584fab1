// Snapshots: a state that takes minutes to reach on a sandbox (Docker or PostgreSQL installed) reached once and
// booted from in seconds. A snapshot is a stopped sandbox's own overlay layer, kept as a read-only layer between
// the base image and each new sandbox's layer (startSandbox({ from })), and its docker folder, copied per
// sandbox. A sandbox made from one is a VM made from a template: address, hostname, host key, client key and
// machine-id are its own (boot.ts makes them at every boot); packages, files and data are the snapshot's.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import type { Sandbox } from "./handle";
import { ensureBaseRootfs } from "./image";
import { lock } from "./lock";
import { type Release, resolveRelease } from "./release";
import { RUN_ROOT, readState, runDirOf } from "./state";
import { stopSandbox } from "./teardown";
import { killTree } from "./tree";

export interface Snapshot {
  /** The overlay layer: a lower directory above the base image's rootfs. */
  layer: string;
  /** The snapshot's /var/lib/docker (Docker's own overlays cannot sit on an overlay: copied, not layered). */
  docker: string;
  release: Release;
  /** The base image the layer sits on: a sandbox of another image cannot use it. */
  imageHash: string;
}

/** Snapshots live beside the sandboxes (a tmpfs under bin/test): gone at reboot, never stale across one. */
export const SNAPSHOT_ROOT = path.join(RUN_ROOT, ".snapshots");

/** What a VM made from a template must not share: removed from the layer (boot.ts writes host keys anew). */
const IDENTITY = ["etc/machine-id", "var/lib/systemd/random-seed", "var/lib/dbus/machine-id"];

/** `rel` inside `layer` when no directory on the way is a symlink, else undefined (see scrubIdentity). */
function inside(layer: string, rel: string): string | undefined {
  let at = layer;
  for (const part of path
    .dirname(rel)
    .split("/")
    .filter((p) => p !== ".")) {
    at = path.join(at, part);
    const st = fs.lstatSync(at, { throwIfNoEntry: false });
    if (!st?.isDirectory()) return undefined;
  }
  return path.join(layer, rel);
}

/**
 * Removes the identity files from a layer. The layer is what the VM wrote: its root may have made /etc/ssh
 * a symlink to /etc/ssh, which on the host is the host's own. So no directory on the way is followed
 * when it is a symlink (such a VM keeps those files, and boot.ts writes host keys anew anyway), and the
 * files themselves are unlinked, never followed.
 */
export function scrubIdentity(layer: string): void {
  for (const f of IDENTITY) {
    const file = inside(layer, f);
    if (file) fs.rmSync(file, { force: true });
  }
  // etc/ssh itself a real directory too: inside() checks the directories above the file it is given.
  const ssh = path.join(layer, "etc", "ssh");
  for (const key of inside(layer, "etc/ssh/.") ? fs.readdirSync(ssh) : []) {
    if (key.startsWith("ssh_host_")) fs.rmSync(path.join(ssh, key), { force: true });
  }
}

/**
 * Powers `sb` off (SIGTERM to nspawn: systemd stops every service, so PostgreSQL's data is shut down
 * cleanly; past killTree's 10 s grace it is killed, and PostgreSQL recovers at the next boot) and keeps its
 * layer and docker folder in `dir`, without its identity; then removes the sandbox as stopSandbox does.
 * `dir` must not exist yet.
 */
export async function keepAsSnapshot(sb: Sandbox, dir: string): Promise<Snapshot> {
  const state = readState(sb.name);
  if (!state?.pid || !state.imageHash) throw new Error(`keepAsSnapshot: sandbox ${sb.name} is not running`);
  if (state.snapshot) throw new Error(`keepAsSnapshot: ${sb.name} was made from a snapshot; layers do not stack`);
  await killTree(state.pid);
  const run = runDirOf(sb.name);
  const made = `${dir}.making`;
  fs.rmSync(made, { recursive: true, force: true });
  fs.mkdirSync(made, { recursive: true, mode: 0o700 });
  fs.renameSync(path.join(run, "upper"), path.join(made, "layer"));
  fs.renameSync(path.join(run, "docker"), path.join(made, "docker"));
  scrubIdentity(path.join(made, "layer"));
  const snapshot = { layer: path.join(dir, "layer"), docker: path.join(dir, "docker") };
  const meta: Snapshot = { ...snapshot, release: resolveRelease(state.release), imageHash: state.imageHash };
  fs.writeFileSync(path.join(made, "snapshot.json"), `${JSON.stringify(meta, null, 2)}\n`);
  fs.renameSync(made, dir);
  await stopSandbox(sb.name);
  return meta;
}

/** The snapshot in `dir`, or undefined when there is none (or only one being made). */
function readSnapshot(dir: string): Snapshot | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, "snapshot.json"), "utf8")) as Snapshot;
  } catch {
    return undefined;
  }
}

export interface SnapshotRecipe {
  /** Names the state ("docker.io-installed"): part of the folder's name. */
  name: string;
  /** Everything the state depends on besides the release and base image (e.g. the bundle's hash): hashed. */
  inputs: string[];
  release?: string;
  /** Brings a fresh sandbox to the state. */
  make: (sb: Sandbox) => Promise<void>;
  log?: (line: string) => void;
}

/**
 * The snapshot `recipe` describes, made on a sandbox `start` boots by whichever process asks first (a lock
 * across processes: jest's workers), then shared; a make that fails leaves no snapshot, and the next caller
 * tries again. index.ts's ensureSnapshot boots it with startSandbox.
 */
export async function ensureSnapshotWith(
  recipe: SnapshotRecipe,
  start: (release: Release) => Promise<Sandbox>,
  timeoutMs = 20 * 60_000,
): Promise<Snapshot> {
  if (!/^[a-z0-9][a-z0-9.-]{0,40}$/.test(recipe.name)) {
    throw new Error(`ensureSnapshot: name ${JSON.stringify(recipe.name)} is not [a-z0-9.-], at most 41 characters`);
  }
  const release = resolveRelease(recipe.release);
  // The base image too: a rebuilt image makes the snapshot anew instead of finding one it cannot boot.
  const image = await ensureBaseRootfs(recipe.log, { release });
  const key = createHash("sha256")
    .update(JSON.stringify([release, image.hash, recipe.inputs]))
    .digest("hex")
    .slice(0, 16);
  const dir = path.join(SNAPSHOT_ROOT, `${recipe.name}-${release}-${key}`);
  const ready = readSnapshot(dir);
  if (ready) return ready;
  fs.mkdirSync(SNAPSHOT_ROOT, { recursive: true, mode: 0o700 });
  const held = await lock(`${dir}.lock`, `snapshot ${recipe.name} (${release})`, timeoutMs, recipe.log);
  try {
    const made = readSnapshot(dir);
    if (made) return made;
    const sb = await start(release);
    try {
      await recipe.make(sb);
      return await keepAsSnapshot(sb, dir);
    } catch (e) {
      // Whatever step failed, nothing is left running and no half snapshot stays (`.making` is removed).
      await sb.stop().catch(() => undefined);
      fs.rmSync(`${dir}.making`, { recursive: true, force: true });
      throw e;
    }
  } finally {
    held.release();
  }
}

/** Copies the snapshot's docker folder into a new sandbox's (before its boot), owners and modes kept. */
export function copySnapshotDocker(s: Snapshot, into: string): void {
  const r = spawnSync("cp", ["-a", `${s.docker}/.`, into], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`copying the snapshot's docker folder ${s.docker} failed: ${r.stderr.trim()}`);
}
