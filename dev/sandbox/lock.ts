// Cross-process locks as directories: mkdir is atomic on every local filesystem, needs no native module,
// and the owner's pid + start time inside lets a later process take over a lock whose holder was killed.
import * as fs from "node:fs";
import * as path from "node:path";
import { type ProcRef, procAlive, procRef } from "./procfs";
import { sleep } from "./wait";

export interface DirLock {
  dir: string;
  release(): void;
}

function ownerOf(dir: string): ProcRef | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, "owner"), "utf8")) as ProcRef;
  } catch {
    return undefined;
  }
}

/** Tries once. Returns undefined while a live process holds it; a lock left by a dead process is broken. */
function tryLock(dir: string, extra?: Record<string, unknown>): DirLock | undefined {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.mkdirSync(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const owner = ownerOf(dir);
      if (owner && procAlive(owner)) return undefined;
      // No owner file yet may mean the holder is between mkdir and write: only a lock older than a few
      // seconds without a live owner is stale.
      if (!owner) {
        try {
          if (Date.now() - fs.statSync(dir).mtimeMs < 5000) return undefined;
        } catch {
          continue;
        }
      }
      fs.rmSync(dir, { recursive: true, force: true });
      continue;
    }
    const me = procRef(process.pid)!;
    fs.writeFileSync(path.join(dir, "owner"), JSON.stringify({ ...me, ...extra }));
    return { dir, release: () => fs.rmSync(dir, { recursive: true, force: true }) };
  }
  return undefined;
}

/** Waits for the lock, saying once what it waits for so a slow build in another process is not a mystery. */
export async function lock(dir: string, what: string, timeoutMs: number, log?: (l: string) => void): Promise<DirLock> {
  const deadline = Date.now() + timeoutMs;
  let said = false;
  for (;;) {
    const l = tryLock(dir);
    if (l) return l;
    if (!said) {
      log?.(`waiting for ${what} (lock ${dir}, held by pid ${ownerOf(dir)?.pid ?? "?"})`);
      said = true;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}: lock ${dir} is held by pid ` +
          `${ownerOf(dir)?.pid ?? "unknown"}; if that process is stuck, kill it (or remove the directory)`,
      );
    }
    await sleep(250);
  }
}
