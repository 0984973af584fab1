// A job process leads a process group of its own, so whatever the handler starts can be killed with it.
// If this process exits while some still run (a test runner torn down mid-job), take them along rather
// than leave orphans holding SSH sessions.
const live = new Set<number>();
let exitHookInstalled = false;

/** Remembers a job's group until untrack: it is killed if this process exits first. */
export function track(pid: number): void {
  live.add(pid);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once("exit", () => {
      for (const p of live) killGroup(p, "SIGKILL");
    });
  }
}

export function untrack(pid: number): void {
  live.delete(pid);
}

export function killGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // ESRCH: the group is already gone.
  }
}
