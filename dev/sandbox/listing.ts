// What sandboxes exist on this machine and in what state, read from their run directories (the CLI's
// `list`, the twin's reads of its VMs).
import { procAlive } from "./procfs";
import type { Release } from "./release";
import { listRunDirs, readState, type SandboxState } from "./state";

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
