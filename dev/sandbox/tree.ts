// The sandbox's process tree as the host sees it: finding systemd and nspawn inside it, stopping it in
// order, and finding leftovers whose top pid was never recorded.
import * as fs from "node:fs";
import { descendantsOf, nsPids, type ProcRef, procAlive, procComm } from "./procfs";
import { sleep } from "./wait";

/** The container's init (systemd), seen from the host: the descendant that is PID 1 of the innermost
 * of the two pid namespaces below ours (unshare's, then nspawn's). */
export function findInit(top: ProcRef): number | undefined {
  if (!procAlive(top)) return undefined;
  const depth = nsPids(process.pid).length;
  for (const pid of descendantsOf(top.pid)) {
    const ns = nsPids(pid);
    if (ns.length === depth + 2 && ns[ns.length - 1] === 1) return pid;
  }
  return undefined;
}

function findNspawn(top: ProcRef): number | undefined {
  if (!procAlive(top)) return undefined;
  return descendantsOf(top.pid).find((p) => procComm(p) === "systemd-nspawn");
}

/**
 * Stops the tree: SIGTERM to nspawn is an orderly poweroff of the container (well under a second when
 * idle); if that does not finish in time, SIGKILL to unshare kills every process of its pid namespace.
 */
export async function killTree(top: ProcRef | undefined, graceMs = 10_000): Promise<void> {
  if (!top || !procAlive(top)) return;
  const nspawn = findNspawn(top);
  if (nspawn) {
    try {
      process.kill(nspawn, "SIGTERM");
    } catch {
      /* gone already */
    }
    const deadline = Date.now() + graceMs;
    while (procAlive(top) && Date.now() < deadline) await sleep(50);
  }
  if (procAlive(top)) {
    try {
      process.kill(top.pid, "SIGKILL");
    } catch {
      /* gone */
    }
    const deadline = Date.now() + 5000;
    while (procAlive(top) && Date.now() < deadline) await sleep(50);
    if (procAlive(top)) throw new Error(`unshare pid ${top.pid} survived SIGKILL for 5 s (stuck in the kernel?)`);
  }
}

/** Processes whose command line names the run directory: catches a tree whose top pid was never
 * recorded (the starting process was killed between spawn and writing state). */
export function processesMentioning(dir: string): number[] {
  const out: number[] = [];
  for (const e of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    const pid = Number(e);
    if (pid === process.pid) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmd.split("\0").some((a) => a === dir || a.includes(`${dir}/`) || a.includes(`${dir}:`))) {
        out.push(pid);
      }
    } catch {
      /* exited */
    }
  }
  return out;
}
