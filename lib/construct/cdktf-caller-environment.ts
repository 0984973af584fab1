// The TF_VAR_ values cdktf withholds from the app, and its command line. cdktf starts the app (through
// /bin/sh) with its own environment minus every TF_VAR_ variable, then hands that whole environment to
// Terraform: the values a deploy uses are the ones cdktf itself was started with. On Linux the app reads
// them from the first ancestor that is not cdktf's shell for it (/proc/<pid>/environ: the environment a
// process was started with, readable by its owner). Elsewhere, or when none can be read, there is no answer.
import * as fs from "node:fs";

/** The parent of `pid`, from /proc/<pid>/stat (field 4, after the parenthesised command name). */
function parentOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    return Number.isInteger(ppid) && ppid > 0 ? ppid : undefined;
  } catch {
    return undefined;
  }
}

function environmentOf(pid: number): Map<string, string> | undefined {
  let raw: string;
  try {
    raw = fs.readFileSync(`/proc/${pid}/environ`, "utf8");
  } catch {
    return undefined;
  }
  const env = new Map<string, string>();
  for (const entry of raw.split("\0")) {
    const eq = entry.indexOf("=");
    if (eq > 0) env.set(entry.slice(0, eq), entry.slice(eq + 1));
  }
  return env;
}

function argumentsOf(pid: number): string[] | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").slice(0, -1);
  } catch {
    return undefined;
  }
}

/** The process that ran this app, as /proc shows it: its environment and its command line. */
export interface CdktfCaller {
  environment: Map<string, string>;
  /** Its whole command line (node, cdktf's script, then cdktf's command and options). */
  args: string[] | undefined;
}

/**
 * The process that ran this app: the nearest ancestor whose environment lacks the CDKTF_OUTDIR cdktf gave the
 * app (cdktf's shell for the app has it; cdktf does not). Undefined when the environment cannot be read (no
 * /proc, another user's process) or this was not started with CDKTF_OUTDIR.
 */
export function cdktfCaller(env: NodeJS.ProcessEnv = process.env): CdktfCaller | undefined {
  const outdir = env.CDKTF_OUTDIR;
  if (outdir === undefined) return undefined;
  let pid = process.ppid;
  for (let depth = 0; depth < 8 && pid > 1; depth++) {
    const environment = environmentOf(pid);
    if (!environment) return undefined;
    if (environment.get("CDKTF_OUTDIR") !== outdir) return { environment, args: argumentsOf(pid) };
    const parent = parentOf(pid);
    if (parent === undefined) return undefined;
    pid = parent;
  }
  return undefined;
}

/** The TF_VAR_ variables in a caller's environment. */
export function variablesOf(caller: CdktfCaller): Record<string, string> {
  return Object.fromEntries([...caller.environment].filter(([name]) => name.startsWith("TF_VAR_")));
}
