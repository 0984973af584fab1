// The stack's `parallelism` for the local target, held by the jobs themselves: at most N jobs of a stack run
// at once, whatever -parallelism Terraform was given (bin/cdktf passes the setting; `npx cdktf deploy` run
// directly cannot, and Terraform's own default is 10). A slot is a file slot-<i> in the stack's folder,
// created exclusively and holding its runner's pid; a slot whose runner is gone (killed) is taken over.
import * as fs from "node:fs";
import * as path from "node:path";

export interface JobSlots {
  /** How many jobs of the stack may run at once. */
  readonly count: number;
  /** The stack's slot folder (owner-only, beside the jobs' results). */
  readonly dir: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Whether the slot in `file` is held by no one: its runner is gone, or it never wrote its pid (a file only
 * just made has none yet: that runner is alive). Gone meanwhile: not stale, the slot is free next time.
 */
function stale(file: string): boolean {
  try {
    const text = fs.readFileSync(file, "utf8").trim();
    if (text === "") return Date.now() - fs.statSync(file).mtimeMs > 10_000;
    const holder = Number(text);
    return !Number.isInteger(holder) || holder <= 0 || !alive(holder);
  } catch {
    return false;
  }
}

/** Takes a free slot (or one whose runner is gone) and returns its file, or undefined when all are held. */
function tryTake(slots: JobSlots): string | undefined {
  for (let i = 0; i < slots.count; i++) {
    const file = path.join(slots.dir, `slot-${i}`);
    try {
      fs.writeFileSync(file, String(process.pid), { flag: "wx", mode: 0o600 });
      return file;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    if (stale(file)) fs.rmSync(file, { force: true });
  }
  return undefined;
}

/**
 * Waits for a slot, `say`ing once that it waits; resolves with the function that gives it back. A freed slot
 * is noticed when its file goes (fs.watch); a runner that died holding one, at the next look (every second).
 */
export async function takeJobSlot(
  slots: JobSlots,
  say: (line: string) => void,
  signal?: AbortSignal,
): Promise<() => void> {
  fs.mkdirSync(slots.dir, { recursive: true, mode: 0o700 });
  let file = tryTake(slots);
  if (!file) {
    say(`waiting for one of the stack's ${slots.count} job slots (parallelism ${slots.count})`);
    file = await new Promise<string>((resolve, reject) => {
      const look = () => {
        try {
          const taken = tryTake(slots);
          if (!taken) return;
          stop();
          resolve(taken);
        } catch (err) {
          stop();
          reject(err);
        }
      };
      const watcher = fs.watch(slots.dir, look);
      const timer = setInterval(look, 1000);
      const aborted = () => {
        stop();
        reject(new Error("stopped while waiting for a job slot"));
      };
      const stop = () => {
        watcher.close();
        clearInterval(timer);
        signal?.removeEventListener("abort", aborted);
      };
      signal?.addEventListener("abort", aborted);
      look();
    });
  }
  const held = file;
  return () => fs.rmSync(held, { force: true });
}
