// What a person sees of `cdktf deploy` (or destroy) in `npm run demo`: a line for the plan, one per job
// as it ends (its status and summary), one for the result, and on a terminal a progress line with the
// latest thing said (a job's own progress: "demo-install-docker: apt-get install docker.io ...").
// Everything else (Terraform's init text, the plan's every attribute, each job's every step, cdktf's
// outputs) is in the log file the demo names: a fresh deploy prints about 1,400 lines otherwise.
import type { Progress } from "../../lib/shared/progress-line";

/** At most this many lines of Terraform's errors are repeated; the rest is in the log. */
const MAX_ERROR_LINES = 20;

/**
 * The summary reads cdktf's plain output (bin/cdktf gives cdktf CI mode when piped): a stack's lines start
 * with its name, their continuations with as many spaces; a job of the local target speaks through
 * Terraform's local-exec, "<address> (<path>) (local-exec): <line>" (this pattern), its last line
 * {"phase","message"}.
 */
const LOCAL_EXEC = /^(\S+) \([^)]*\) \(local-exec\): (.*)$/;
/** cdktf's own lines, not the stack's: the end of an error's text. */
const CDKTF_OWN = /^(\d+ Stacks? deploying|Invoking Terraform CLI failed)/;

/** A job's final {"phase","message"}: the handler's status and summary when the message is its JSON result. */
export function describeJobResult(phase: string, message: string): string {
  try {
    const result = JSON.parse(message);
    if (result && typeof result === "object" && typeof result.status === "string")
      return `${result.status}: ${result.summary ?? ""}`.trim();
  } catch {
    // not the handler's JSON: a runner's error message
  }
  const first = message.trim().split("\n")[0];
  return phase === "Succeeded" ? first : `failed: ${first}`;
}

export class DeploySummary {
  /** Resource address -> the job's name ("demo-install-packages"), from its "[name] starting" line. */
  private readonly jobs = new Map<string, string>();
  private readonly errors: string[] = [];
  private inError = false;
  private readonly recent: string[] = [];
  private jobFailed = false;
  private completed = false;

  /** `command` is cdktf's ("deploy", "destroy"); `say` prints a line that stays; `progress` the live line. */
  constructor(
    private readonly stack: string,
    private readonly command: string,
    private readonly say: (line: string) => void,
    private readonly progress: Progress,
  ) {
    progress.update(`cdktf ${command}: synthesizing`);
  }

  /** One line of cdktf's output. */
  line(raw: string): void {
    const text = (raw.startsWith(this.stack) ? raw.slice(this.stack.length) : raw).trim();
    if (!text) return;
    this.recent.push(text);
    if (this.recent.length > MAX_ERROR_LINES) this.recent.shift();
    if (/^Error: /.test(text)) this.inError = true;
    if (this.inError) {
      if (CDKTF_OWN.test(text)) this.inError = false;
      else this.errors.push(this.errors.length && !/^Error: /.test(text) ? `  ${text}` : text);
      return;
    }
    this.progress.update(`cdktf ${this.command}: ${this.notable(text) ?? text}`);
  }

  /** After cdktf exited with `code`: the outcome, when cdktf cut Terraform's last lines (its summary) short. */
  finish(code: number): void {
    if (code === 0 && !this.completed)
      this.say(`${this.command} succeeded (exit 0; cdktf cut Terraform's last lines short, its summary among them)`);
  }

  /**
   * What to show after a failed run: Terraform's errors (only their titles when a job's failure was said
   * already: the rest repeats its message), or its last lines when it printed none (cdktf sometimes loses them).
   */
  failure(): string[] {
    if (this.jobFailed && this.errors.length) return this.errors.filter((l) => /^Error: /.test(l));
    const lines = this.errors.length ? this.errors : this.recent;
    return lines.length > MAX_ERROR_LINES
      ? [...lines.slice(0, MAX_ERROR_LINES), `  ... (${lines.length - MAX_ERROR_LINES} more lines in the log)`]
      : lines;
  }

  /** Says the lines worth keeping; returns what the progress line shows instead of `text`, if anything. */
  private notable(text: string): string | undefined {
    let m: RegExpExecArray | null;
    if ((m = /^Plan: (.*)\.$/.exec(text))) this.say(`plan: ${m[1]}`);
    else if (/^No changes\. /.test(text)) this.say("plan: no changes, the infrastructure matches the configuration");
    else if ((m = /^(Apply|Destroy) complete! Resources: (.*)\.$/.exec(text))) {
      this.completed = true;
      this.say(`${m[1].toLowerCase()} complete: ${m[2]}`);
    } else if ((m = LOCAL_EXEC.exec(text))) return this.jobLine(m[1], m[2]);
    return undefined;
  }

  private jobLine(address: string, text: string): string {
    const started = /^\[([^\]]+)\] starting$/.exec(text);
    if (started) this.jobs.set(address, started[1]);
    const job = this.jobs.get(address) ?? address;
    if (/^\{"phase":/.test(text)) {
      try {
        const { phase, message } = JSON.parse(text);
        if (phase !== "Succeeded") this.jobFailed = true;
        this.say(`${job}: ${describeJobResult(String(phase), String(message))}`);
      } catch {
        // a line cut short: the log has it
      }
      return `${job}: done`;
    }
    if (/^Executing: /.test(text)) return `${job}: starting`;
    return `${job}: ${text.replace(/^\[[^\]]+\] /, "")}`;
  }
}
