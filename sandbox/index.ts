// The sandbox VM: a Debian 12 (or, with release "trixie", 13) target with real systemd, booted by
// systemd-nspawn in a network namespace of its own and reached over real SSH, standing in for a Nubes VM
// in end-to-end tests and the no-cloud demo. See /work/shared/notes/sandbox-recipe.md for the measured recipe this follows.
//
//   image.ts    debootstrap base image, cached under /var/cache/vm-install keyed by its build script
//   hostapt.ts  the host's mirror and apt options, which the image copies
//   release.ts  the releases a sandbox boots (bookworm by default, trixie) and VM_INSTALL_SANDBOX_RELEASE
//   network.ts  netns, veth, 10.200.N.0/24 claims, NAT + MSS clamp in an nft table per sandbox
//   boot.ts     overlay, unshare + nspawn tree, keys, waiting for sshd
//   exec.ts     root commands inside the target through nsenter
//   state.ts    run directories (/run/vm-install-sandbox/<name>) that let any process find a sandbox

import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import {
  bootPaths,
  findInit,
  killTree,
  makeClientKey,
  prepareRunDir,
  processesMentioning,
  SSH_PORT,
  spawnTree,
  waitUntilReady,
} from "./boot";
import { nocloudMetaData } from "./cloud-init";
import { type RootExecOptions, type RootExecResult, spawnInTarget } from "./exec";
import { ensureBaseImage, ensureBaseRootfs, IMAGE_USER } from "./image";
import { claimSubnet, listClaims, netPlan, releaseSubnet, setupNetwork, teardownNetwork } from "./network";
import { type Release, resolveRelease } from "./release";
import { listRunDirs, RUN_ROOT, readState, runDirOf, type SandboxState, validateName, writeState } from "./state";
import { checkSandboxSupport } from "./support";
import { type ProcRef, procAlive, procRef, sleep, writeFileAtomic } from "./util";

export type { SshRun } from "./client";
export { jobEnvFor, sshRun } from "./client";
export { loginUserCloudConfig, multipartUserData, userDataKind } from "./cloud-init";
export type { Release } from "./release";
export { DEFAULT_RELEASE, parseRelease, RELEASE_ENV, RELEASES, resolveRelease, SUPPORTED_RELEASES } from "./release";
export { CACHE_DIR, RUN_ROOT } from "./state";
export { checkSandboxSupport, SandboxUnsupportedError, sandboxSupportProblems } from "./support";
export type { RootExecOptions, RootExecResult };
export { ensureBaseImage };

export interface SandboxInfo {
  name: string;
  address: string;
  port: number;
  user: string;
  privateKeyPath: string;
  /** "SHA256:..." OpenSSH form of the target's ed25519 host key. */
  hostKeySha256: string;
}

export interface Sandbox extends SandboxInfo {
  /** The Debian release it runs ("bookworm", "trixie"). */
  release: Release;
  /** The network namespace the target lives in. */
  netns: string;
  /** The host's end of the veth (10.200.N.1): serve things to the target here; the target reaches it directly. */
  hostAddress: string;
  /** The target's ed25519 host key as an OpenSSH public key line ("ssh-ed25519 AAAA..."). */
  hostPublicKey: string;
  /** A known_hosts file holding exactly that key for `address`, for `ssh -o UserKnownHostsFile=...`. */
  knownHostsPath: string;
  /** /run/vm-install-sandbox/<name>: keys, state.json, console.log, overlay upper layer. */
  runDir: string;
  /** The host's end of the veth pair (an interface name on the host). */
  hostVeth: string;
  /** The sandbox's own nft table (family ip): NAT and MSS clamp. */
  nftTable: string;
  /** The `unshare` process at the top of the sandbox's process tree; killing it kills everything inside. */
  topPid: number;
  /** Milliseconds: image (cache check or build), network, bootToSsh (spawn to logins allowed), total. */
  timings: Record<string, number>;
  /** Run a shell command as root inside the target (NOT over SSH: nsenter into the container's init),
   * for test set-up and fault injection. Rejects only when nsenter cannot run or the timeout expires. */
  rootExec(command: string, opts?: RootExecOptions): Promise<RootExecResult>;
  /** Start a long-running root command inside the target in the background. */
  rootSpawn(command: string): { done: Promise<RootExecResult>; kill(): void };
  /** Removes every trace: processes, netns, veth, nft table, run directory. */
  stop(): Promise<void>;
  /** `cloud-init status --wait --long` inside the target; default timeout 5 min. Bookworm's 22.4: exit 0
   * done, 1 error, the latter as soon as any stage failed even while later ones still run (no exit 2
   * before 23.4); see the sandbox README. */
  cloudInitDone(opts?: RootExecOptions): Promise<RootExecResult>;
}

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

// Non-persistent sandboxes this process started and has not stopped. If the process exits without
// stopping them (a test run cut short), their process trees are killed on the way out so postgres and
// dockerd do not keep running; the network and run directory go at the next start's prune or `down`.
const ownTrees = new Map<string, ProcRef>();
let exitHook = false;
function trackTree(name: string, top: ProcRef): void {
  ownTrees.set(name, top);
  if (exitHook) return;
  exitHook = true;
  process.on("exit", () => {
    for (const top of ownTrees.values()) {
      if (procAlive(top)) {
        try {
          process.kill(top.pid, "SIGKILL");
        } catch {
          /* gone */
        }
      }
    }
  });
}

const CLOUD_INIT_WAIT = "cloud-init status --wait --long";

function attach(state: SandboxState): Sandbox {
  const { address, hostKeySha256, netns, hostAddress, hostPublicKey, knownHostsPath, hostVeth, nftTable } = state;
  if (
    !address ||
    !hostKeySha256 ||
    !netns ||
    !hostAddress ||
    !hostPublicKey ||
    !knownHostsPath ||
    !hostVeth ||
    !nftTable ||
    !state.pid
  ) {
    throw new Error(`sandbox ${state.name} is not fully started (status ${state.status}; ${state.runDir}/state.json)`);
  }
  let init: ProcRef | undefined;
  const top = state.pid;
  const initPid = (): number => {
    if (init && procAlive(init)) return init.pid;
    const pid = findInit(top);
    init = pid ? procRef(pid) : undefined;
    if (!init) {
      throw new Error(
        `sandbox ${state.name} is not running: no systemd under unshare pid ${top.pid} ` +
          `(see ${state.runDir}/console.log; remove it with \`npm run sandbox down ${state.name}\`)`,
      );
    }
    return init.pid;
  };
  return {
    name: state.name,
    release: state.release ?? "bookworm",
    address,
    port: state.port,
    user: state.user,
    privateKeyPath: state.privateKeyPath,
    hostKeySha256,
    netns,
    hostAddress,
    hostPublicKey,
    knownHostsPath,
    runDir: state.runDir,
    hostVeth,
    nftTable,
    topPid: top.pid,
    timings: state.timings ?? {},
    rootExec: (command, opts) => spawnInTarget(initPid, command, opts).done,
    rootSpawn: (command) => spawnInTarget(initPid, command),
    stop: () => stopSandbox(state.name),
    cloudInitDone: (opts) => spawnInTarget(initPid, CLOUD_INIT_WAIT, { timeoutMs: 300_000, ...opts }).done,
  };
}

/** Boots a sandbox; builds and caches the base image on first use (about 1.5 min once per machine). */
export async function startSandbox(opts: StartOptions = {}): Promise<Sandbox> {
  checkSandboxSupport();
  const log = opts.log ?? defaultLog();
  const name = opts.name ?? newSandboxName();
  validateName(name);
  if (opts.cloudInit && opts.authorizedKey) {
    const where = "put the key in the user-data's users[].ssh_authorized_keys";
    throw new Error(`startSandbox: authorizedKey and cloudInit exclude each other: ${where}`);
  }
  const release = resolveRelease(opts.release);
  const t0 = Date.now();
  await pruneSandboxes(log);
  const img = await ensureBaseRootfs(log, { release });
  const tImage = Date.now();

  fs.mkdirSync(RUN_ROOT, { recursive: true, mode: 0o755 });
  const runDir = runDirOf(name);
  try {
    fs.mkdirSync(runDir, { mode: 0o700 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") {
      throw new Error(
        `sandbox ${name} already exists (${runDir}): pick another name, or remove it with \`npm run sandbox down ${name}\``,
      );
    }
    throw e;
  }
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
    lowerDir: img.rootfs,
    imageHash: img.hash,
    release,
  };
  writeState(state);
  try {
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
    await Promise.all([setupNetwork(name, plan, log), makeClientKey(paths, name)]);
    const tNet = Date.now();

    const cloudInit = opts.cloudInit && seedOf(opts.cloudInit, name, fs.readFileSync(paths.publicKey, "utf8").trim());
    state.cloudInit = !!cloudInit;
    const { user, authorizedKey } = opts;
    state.pid = spawnTree({ name, lowerDir: img.rootfs, netns: plan.netns, paths, user, authorizedKey, cloudInit });
    writeState(state);
    if (!opts.persistent) trackTree(name, state.pid);
    const top = state.pid;
    let init: number | undefined;
    const exec = (cmd: string) => spawnInTarget(() => (init ??= findInit(top)) ?? 0, cmd, { timeoutMs: 10_000 }).done;
    const hostKeyFrom = cloudInit ? "sshd" : "file";
    const ready = await waitUntilReady(
      name,
      top,
      paths,
      plan.address,
      opts.bootTimeoutMs ?? (cloudInit ? 180_000 : 90_000),
      exec,
      hostKeyFrom,
    );
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

function unmountUnder(dir: string): void {
  // Mounts live in the sandbox's private namespace and die with it; this only catches a mount that
  // reached the host's namespace some other way, so that rm -rf never walks into a live filesystem.
  let info = "";
  try {
    info = fs.readFileSync("/proc/self/mountinfo", "utf8");
  } catch {
    return;
  }
  const points = info
    .split("\n")
    .map((l) => l.split(" ")[4])
    .filter((m): m is string => !!m && (m === dir || m.startsWith(`${dir}/`)))
    .sort((a, b) => b.length - a.length);
  for (const m of points) {
    require("node:child_process").spawnSync("umount", ["-l", m]);
  }
}

/** Removes a sandbox and every trace of it; works from any process and for half-started leftovers. */
export async function stopSandbox(name: string): Promise<void> {
  validateName(name);
  ownTrees.delete(name);
  const runDir = runDirOf(name);
  const state = readState(name);
  if (state && fs.existsSync(runDir)) {
    state.status = "stopping";
    try {
      writeState(state);
    } catch {
      /* run dir going away under us: keep removing */
    }
  }
  await killTree(state?.pid);
  // Anything still running from this run directory (a tree whose pid was never recorded).
  for (let round = 0; round < 20; round++) {
    const left = processesMentioning(runDir);
    if (!left.length) break;
    for (const pid of left) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        /* gone */
      }
    }
    await sleep(100);
  }
  // The network by what state recorded, plus any claim by this name state did not record yet.
  const nets = new Map<number | undefined, { netns?: string; hostVeth?: string; nftTable?: string }>();
  nets.set(state?.subnet, {
    netns: state?.netns ?? `vmis-${name}`,
    hostVeth: state?.hostVeth,
    nftTable: state?.nftTable,
  });
  for (const c of listClaims()) {
    if (c.name === name && !nets.has(c.subnet)) nets.set(c.subnet, netPlan(name, c.subnet));
  }
  for (const [subnet, net] of nets) {
    await teardownNetwork(net);
    if (subnet !== undefined) releaseSubnet(subnet, name);
  }
  unmountUnder(runDir);
  fs.rmSync(runDir, { recursive: true, force: true });
}

export interface SandboxListing {
  name: string;
  status: SandboxState["status"] | "broken";
  /** The process tree is alive. */
  alive: boolean;
  persistent: boolean;
  release?: Release;
  address?: string;
  hostAddress?: string;
  pid?: number;
  createdAt?: string;
}

export function listSandboxes(): SandboxListing[] {
  return listRunDirs().map((name) => {
    const s = readState(name);
    if (!s) return { name, status: "broken", alive: false, persistent: false };
    return {
      name,
      status: s.status,
      alive: procAlive(s.pid),
      persistent: !!s.persistent,
      release: s.release ?? "bookworm",
      address: s.address,
      hostAddress: s.hostAddress,
      pid: s.pid?.pid,
      createdAt: s.createdAt,
    };
  });
}

/**
 * Removes sandboxes nobody can use any more: those whose starting process died before they were up,
 * non-persistent ones whose owner process is gone (a killed test run), and any whose process tree has
 * died. Persistent, running ones (the CLI's) stay until `down`.
 */
export async function pruneSandboxes(log: (l: string) => void = () => undefined): Promise<string[]> {
  const removed: string[] = [];
  for (const name of listRunDirs()) {
    const s = readState(name);
    let why: string | undefined;
    if (!s) {
      let age = 0;
      try {
        age = Date.now() - fs.statSync(runDirOf(name)).mtimeMs;
      } catch {
        continue;
      }
      if (age > 60_000) why = "it has no state.json";
    } else if (s.status !== "running") {
      if (!procAlive(s.owner ?? undefined))
        why = `the process that was ${s.status === "starting" ? "starting" : "stopping"} it (pid ${s.owner?.pid}) is gone`;
    } else if (!procAlive(s.pid)) {
      why = "its process tree has exited";
    } else if (!s.persistent && !procAlive(s.owner ?? undefined)) {
      why = `its owner process (pid ${s.owner?.pid}) is gone`;
    }
    if (!why) continue;
    log(`removing leftover sandbox ${name}: ${why}`);
    try {
      await stopSandbox(name);
      removed.push(name);
    } catch (e) {
      log(`could not remove leftover sandbox ${name}: ${(e as Error).message}`);
    }
  }
  return removed;
}
