// Processes as /proc shows them, identified by pid + start time so a recycled pid is never mistaken
// for ours: liveness, children, command names and the pids a process has in nested pid namespaces.
import * as fs from "node:fs";

export interface ProcRef {
  pid: number;
  /** Field 22 of /proc/PID/stat (clock ticks since boot). */
  startTime: string;
}

function statFields(pid: number): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // comm may contain spaces and parentheses: fields start after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return rest; // rest[0] is field 3 (state)
  } catch {
    return undefined;
  }
}

export function procRef(pid: number): ProcRef | undefined {
  const f = statFields(pid);
  return f ? { pid, startTime: f[19] } : undefined;
}

/** True while the process exists, is not a zombie, and is the same process that was recorded. */
export function procAlive(ref: ProcRef | undefined): boolean {
  if (!ref) return false;
  const f = statFields(ref.pid);
  if (!f) return false;
  if (f[0] === "Z" || f[0] === "X") return false;
  return f[19] === ref.startTime;
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[] = [];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const t of tasks) {
    try {
      const txt = fs.readFileSync(`/proc/${pid}/task/${t}/children`, "utf8").trim();
      if (txt) for (const c of txt.split(/\s+/)) out.push(Number(c));
    } catch {
      /* task gone */
    }
  }
  return out;
}

export function descendantsOf(pid: number): number[] {
  const out: number[] = [];
  const queue = [pid];
  while (queue.length) {
    const p = queue.shift()!;
    for (const c of childrenOf(p)) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}

export function procComm(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
}

/** The pid of a process in each nested pid namespace, outermost first (the NSpid line of /proc/PID/status). */
export function nsPids(pid: number): number[] {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const m = /^NSpid:\s*(.*)$/m.exec(status);
    return m ? m[1].trim().split(/\s+/).map(Number) : [];
  } catch {
    return [];
  }
}
