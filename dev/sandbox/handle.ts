// A handle on a running sandbox, built from its state.json so that any process (the test that booted it,
// the CLI, the twin) drives it the same way: root commands through nsenter, cloud-init's wait, stop.
import type { SandboxInfo } from "./client";
import { type RootExecOptions, type RootExecResult, spawnInTarget } from "./exec";
import { type ProcRef, procAlive, procRef } from "./procfs";
import type { Release } from "./release";
import type { SandboxState } from "./state";
import { stopSandbox } from "./teardown";
import { findInit } from "./tree";

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

const CLOUD_INIT_WAIT = "cloud-init status --wait --long";

export function attach(state: SandboxState): Sandbox {
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
