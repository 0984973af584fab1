// The sandbox VM: a Debian 12 (or 13, "trixie") target with real systemd under systemd-nspawn in its own
// network namespace, reached over real SSH: the Nubes VM of end-to-end tests and the no-cloud demo
// (how to use one: dev/sandbox/README.md). This file boots one and re-exports the public API; handle.ts drives a
// running one, teardown.ts removes them, listing.ts lists them, snapshot.ts keeps one's state to boot others
// from; image, hostapt and release make the base image; network, boot, ready and tree the netns, nspawn
// tree, sshd wait and kill.
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { type BootPaths, bootPaths, makeClientKey, prepareRunDir, SSH_PORT, spawnTree } from "./boot";
import { nocloudMetaData } from "./cloud-init";
import { spawnInTarget } from "./exec";
import { attach, type Sandbox } from "./handle";
import { ensureBaseRootfs, IMAGE_USER } from "./image";
import { claimSubnet, type NetPlan, netPlan, setupNetwork } from "./network";
import { procRef } from "./procfs";
import { NOT_READY, type ReadyInfo, waitUntilReady } from "./ready";
import { resolveRelease } from "./release";
import { copySnapshotDocker, ensureSnapshotWith, type Snapshot, type SnapshotRecipe } from "./snapshot";
import { RUN_ROOT, readState, runDirOf, type SandboxState, validateName, writeFileAtomic, writeState } from "./state";
import { checkSandboxSupport } from "./support";
import { pruneSandboxes, stopSandbox, trackTree } from "./teardown";
import { findInit } from "./tree";

export { jobEnvFor, sshRun } from "./client";
export { loginUserCloudConfig, multipartUserData } from "./cloud-init";
export type { Sandbox } from "./handle";
export { ensureBaseImage } from "./image";
export { listSandboxes } from "./listing";
export type { Release } from "./release";
export { RELEASES, resolveRelease } from "./release";
export { keepAsSnapshot, SNAPSHOT_ROOT, type Snapshot } from "./snapshot";
export { checkSandboxSupport, sandboxSupportProblems } from "./support";
export { pruneSandboxes, stopSandbox } from "./teardown";

export interface StartOptions {
  /** Unique among running sandboxes; default "sb-<random>". Also the target's hostname. */
  name?: string;
  /** Keep it running after this process exits (the CLI's `up`). Otherwise a later start cleans it up
   * once this process is gone, so a killed test run leaves nothing behind for long. */
  persistent?: boolean;
  /** Progress lines (image build, waiting for a lock). */
  log?: (line: string) => void;
  /** The Debian release to boot; default $VM_INSTALL_SANDBOX_RELEASE, else "bookworm". An unknown name is refused. */
  release?: string;
  /** Boot-to-SSH budget; default 90 s, 180 s with cloudInit (its Python stages run before sshd and slow
   * down most when CI boots several at once). */
  bootTimeoutMs?: number;
  /** Login user created at boot when not the image's "ubuntu" (the twin's VMs honour user_login). */
  user?: string;
  /** The one key the login user accepts, instead of the sandbox's own (the twin's VMs honour user_public_key). */
  authorizedKey?: string;
  /** Boot with cloud-init from a NoCloud seed: cloud-init, not the sandbox, makes the login user (`user`
   * names the one the user-data creates), its keys and the host keys; the image's `ubuntu` is removed. */
  cloudInit?: CloudInitOptions;
  /** The sandbox reaches the host side (`hostAddress`) and nothing beyond: forwarded traffic from it is
   * refused, so its only way to a mirror is a proxy the test runs on the host side. */
  hostOnly?: boolean;
  /** Boot from this snapshot (snapshot.ts): its packages, files and data, this sandbox's own identity. Its
   * release is the sandbox's; the login user is the image's, made by the sandbox (no user, no cloudInit). */
  from?: Snapshot;
}

export interface CloudInitOptions {
  /** A function gets the sandbox's own client public key, to authorise it (privateKeyPath then logs in). */
  userData: string | ((clientPublicKey: string) => string);
  /** Default: a fresh instance-id and local-hostname = the sandbox's name. */
  metaData?: string;
}

function defaultLog(): (l: string) => void {
  return process.env.VM_INSTALL_SANDBOX_DEBUG ? (l) => process.stderr.write(`sandbox: ${l}\n`) : () => undefined;
}

/** A fresh default name ("sb-" + 8 hex digits). */
export function newSandboxName(): string {
  return `sb-${randomBytes(4).toString("hex")}`;
}

/**
 * Boots a sandbox; builds and caches the base image on first use (about 1.5 min once per machine). A boot
 * that runs out of its default time is torn down and booted once more, saying why on stderr: CI once saw
 * one of six sandboxes booted together not allow logins for 90 s, where boots take seconds (not seen again
 * in 24 boots six at a time beside other suites), and a suite should fail on what it tests, not its bench.
 */
export function startSandbox(opts: StartOptions = {}): Promise<Sandbox> {
  return bootingOnceMore(startOnce, opts);
}

/** `start(opts)`, and once more when it ran out of its default boot time (saying so on `say`). */
export async function bootingOnceMore<T>(
  start: (opts: StartOptions) => Promise<T>,
  opts: StartOptions,
  say: (text: string) => void = (text) => process.stderr.write(text),
): Promise<T> {
  try {
    return await start(opts);
  } catch (e) {
    if ((e as Error).name !== NOT_READY || opts.bootTimeoutMs !== undefined) throw e;
    say(`sandbox: ${(e as Error).message}\nsandbox: booting it once more\n`);
    return start(opts);
  }
}

async function startOnce(opts: StartOptions): Promise<Sandbox> {
  checkSandboxSupport();
  const log = opts.log ?? defaultLog();
  const name = opts.name ?? newSandboxName();
  validateName(name);
  if (opts.cloudInit && opts.authorizedKey) {
    const where = "put the key in the user-data's users[].ssh_authorized_keys";
    throw new Error(`startSandbox: authorizedKey and cloudInit exclude each other: ${where}`);
  }
  const release = resolveRelease(opts.from?.release ?? opts.release);
  const t0 = Date.now();
  await pruneSandboxes(log);
  const img = await ensureBaseRootfs(log, { release });
  const tImage = Date.now();
  const from = opts.from && snapshotUsable(opts, img.hash);

  const runDir = makeRunDir(name);
  const paths = bootPaths(runDir);
  const state: SandboxState = {
    name,
    runDir,
    status: "starting",
    createdAt: new Date().toISOString(),
    owner: procRef(process.pid) ?? null,
    persistent: !!opts.persistent,
    port: SSH_PORT,
    user: opts.user ?? IMAGE_USER,
    privateKeyPath: paths.privateKey,
    lowerDir: from ? `${from.layer}:${img.rootfs}` : img.rootfs,
    imageHash: img.hash,
    snapshot: from?.layer,
    release,
  };
  writeState(state);
  try {
    const plan = await bringUpNetwork(state, paths, log, !!opts.hostOnly);
    if (from) copySnapshotDocker(from, paths.docker);
    const tNet = Date.now();

    const ready = await bootTree(state, opts, plan, paths);
    const tReady = Date.now();

    state.hostPublicKey = ready.hostPublicKey;
    state.hostKeySha256 = ready.hostKeySha256;
    state.knownHostsPath = paths.knownHosts;
    writeFileAtomic(paths.knownHosts, `${plan.address} ${ready.hostPublicKey.split(/\s+/).slice(0, 2).join(" ")}\n`);
    state.status = "running";
    state.timings = { image: tImage - t0, network: tNet - tImage, bootToSsh: tReady - tNet, total: tReady - t0 };
    writeState(state);
    return attach(state);
  } catch (e) {
    await stopSandbox(name).catch((stopErr: Error) =>
      log(`cleanup after the failed start of ${name} also failed: ${stopErr.message}`),
    );
    throw e;
  }
}

/** opts.from, when this sandbox can boot from it; else why not, thrown. */
function snapshotUsable(opts: StartOptions, imageHash: string): Snapshot {
  const s = opts.from as Snapshot;
  const why =
    opts.user || opts.cloudInit
      ? "a sandbox made from a snapshot has the image's login user: no user, no cloudInit"
      : opts.release && resolveRelease(opts.release) !== s.release
        ? `it is of ${s.release}, not ${opts.release}`
        : s.imageHash !== imageHash
          ? `it sits on base image ${s.imageHash}, this ${s.release} image is ${imageHash}`
          : !fs.existsSync(s.layer)
            ? `its layer ${s.layer} is gone`
            : undefined;
  if (why) throw new Error(`startSandbox: cannot boot from the snapshot in ${path.dirname(s.layer)}: ${why}`);
  return s;
}

/** The snapshot `recipe` describes, made once on a fresh sandbox of its release (snapshot.ts), then shared. */
export function ensureSnapshot(recipe: SnapshotRecipe): Promise<Snapshot> {
  return ensureSnapshotWith(recipe, (release) => startSandbox({ release, log: recipe.log }));
}

/** The run directory, claimed by creating it: a second start of the same name fails here. */
function makeRunDir(name: string): string {
  fs.mkdirSync(RUN_ROOT, { recursive: true, mode: 0o755 });
  const runDir = runDirOf(name);
  try {
    fs.mkdirSync(runDir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") {
      throw new Error(
        `sandbox ${name} already exists (${runDir}): pick another name, ` +
          `or remove it with \`npm run sandbox down ${name}\``,
      );
    }
    throw e;
  }
  return runDir;
}

/** Claims a subnet and builds the netns, veth and nft table; recorded first so a crash is cleaned up by name. */
async function bringUpNetwork(
  state: SandboxState,
  paths: BootPaths,
  log: (l: string) => void,
  hostOnly: boolean,
): Promise<NetPlan> {
  const { name } = state;
  const plan = netPlan(name, await claimSubnet(name));
  Object.assign(state, {
    subnet: plan.subnet,
    netns: plan.netns,
    hostVeth: plan.hostVeth,
    nftTable: plan.nftTable,
    address: plan.address,
    hostAddress: plan.hostAddress,
  });
  writeState(state); // before creating anything, so a crash from here on is cleaned up by name
  prepareRunDir(paths);
  await Promise.all([setupNetwork(name, plan, log, { hostOnly }), makeClientKey(paths, name)]);
  return plan;
}

/** Spawns the nspawn tree and waits until its sshd lets the login user in. */
async function bootTree(state: SandboxState, opts: StartOptions, plan: NetPlan, paths: BootPaths): Promise<ReadyInfo> {
  const { name, lowerDir = "" } = state;
  const cloudInit = opts.cloudInit && seedOf(opts.cloudInit, name, fs.readFileSync(paths.publicKey, "utf8").trim());
  state.cloudInit = !!cloudInit;
  const { user, authorizedKey } = opts;
  state.pid = spawnTree({ name, lowerDir, netns: plan.netns, paths, user, authorizedKey, cloudInit });
  writeState(state);
  if (!opts.persistent) trackTree(name, state.pid);
  const top = state.pid;
  let init: number | undefined;
  const exec = (cmd: string) => spawnInTarget(() => (init ??= findInit(top)) ?? 0, cmd, { timeoutMs: 10_000 }).done;
  const hostKeyFrom = cloudInit ? "sshd" : "file";
  const timeoutMs = opts.bootTimeoutMs ?? (cloudInit ? 180_000 : 90_000);
  return waitUntilReady(name, top, paths, plan.address, timeoutMs, exec, hostKeyFrom);
}

function seedOf(c: CloudInitOptions, name: string, clientPublicKey: string): { userData: string; metaData: string } {
  const userData = typeof c.userData === "function" ? c.userData(clientPublicKey) : c.userData;
  return { userData, metaData: c.metaData ?? nocloudMetaData(name) };
}

/** A handle on a running sandbox started elsewhere (e.g. by `npm run sandbox up`). */
export function getSandbox(name: string): Sandbox {
  validateName(name);
  const state = readState(name);
  if (!state)
    throw new Error(
      `no sandbox named ${name} (no ${runDirOf(name)}/state.json): start one with \`npm run sandbox up ${name}\``,
    );
  return attach(state);
}
