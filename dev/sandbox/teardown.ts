// Removing sandboxes: one by name with every trace it left (processes, network, run directory), the
// leftovers of runs that died, and the process trees of this process's own sandboxes when it exits.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { removeOwnCgroups } from "./cgroups";
import { listClaims, netPlan, releaseSubnet, teardownNetwork } from "./network";
import { type ProcRef, procAlive } from "./procfs";
import { listRunDirs, readState, runDirOf, validateName, writeState } from "./state";
import { killTree, processesMentioning } from "./tree";
import { sleep } from "./wait";

// Non-persistent sandboxes this process started and has not stopped. If the process exits without
// stopping them (a test run cut short), their process trees are killed on the way out so postgres and
// dockerd do not keep running; the network and run directory go at the next start's prune or `down`.
const ownTrees = new Map<string, ProcRef>();
let exitHook = false;
export function trackTree(name: string, top: ProcRef): void {
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
    spawnSync("umount", ["-l", m]);
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
  // Its cgroups (cgroups.ts), empty once its processes are gone.
  await removeOwnCgroups(name, sleep);
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
        why =
          `the process that was ${s.status === "starting" ? "starting" : "stopping"} it (pid ${s.owner?.pid}) ` +
          "is gone";
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
