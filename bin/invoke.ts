// `npm run invoke -- <installer> ...`: runs one installer job locally, bundled exactly as the stack bundles
// it and run exactly as the platform runs it (operator/runner), against whatever VM the SSH_* variables name.
// Progress goes to stdout as it comes; the last stdout line is the job's outcome as one JSON object, so
// scripts read one line and people read the rest. The options, their parsing and the result files are the
// protocol the local job target shares with this CLI: construct/jobs/invoke-args.ts and job-result-file.ts.
import * as path from "node:path";
import { bundleHandler } from "../construct/bundling/bundle";
import { type InvokeArgs, parseInvokeArgs, USAGE, USAGE_HINT, UsageError } from "../construct/jobs/invoke-args";
import { resultAsTfstate, writeResultFile } from "../construct/jobs/job-result-file";
import { BadUsage, type CommandSpec, EXIT, runCommand } from "../operator/exit-codes";
import { type Invocation, resolveInvocation } from "../operator/runner/invocation";
import { JobLog } from "../operator/runner/job-log";
import { takeJobSlot } from "../operator/runner/job-slots";
import { type JobResult, runJob } from "../operator/runner/run-job";

// invoke-args.ts's USAGE still ends with the old "2 bad usage" line; it is being moved (construct/jobs/), so the
// codes are put right here, from the one table, until that line goes.
const HELP = USAGE.replace(
  /^Exit code: .*$/m,
  `Exit code: ${EXIT.ok} Succeeded, ${EXIT.error} Failed, ${EXIT.usage} bad usage.`,
);
// Help only as the first argument: parseInvokeArgs finds -h/--help anywhere else, where it is not an option's value.
export const COMMAND: CommandSpec = { name: "invoke", usage: USAGE_HINT, help: "first", helpText: HELP };

/** Bundles (for an installer name) and runs the job; anything that goes wrong on the way is a Failed result. */
async function invoke(inv: Invocation, say: (line: string) => void): Promise<Pick<JobResult, "phase" | "message">> {
  let dir: string;
  try {
    dir = inv.dir ?? bundleHandler({ handler: inv.installer!, handlersDir: inv.handlersDir }).dir;
  } catch (err) {
    return { phase: "Failed", message: (err as Error).message };
  }
  // Ctrl-C stops the job (and whatever it started) and still reports, rather than orphaning it.
  const abort = new AbortController();
  const onSignal = () => abort.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    return await runJob({
      dir,
      entrypoint: inv.entrypoint,
      env: inv.env,
      event: inv.event,
      timeoutSec: inv.timeoutSec,
      secrets: inv.secrets,
      signal: abort.signal,
      onOutput: say,
    });
  } catch (err) {
    return { phase: "Failed", message: `running ${dir}: ${(err as Error).message}` };
  } finally {
    process.removeListener("SIGINT", onSignal);
    process.removeListener("SIGTERM", onSignal);
  }
}

export async function main(argv: string[]): Promise<number> {
  let inv: Invocation;
  let args: InvokeArgs;
  try {
    const parsed = parseInvokeArgs(argv);
    if (parsed === "help") {
      process.stdout.write(`${HELP}\n`);
      return EXIT.ok;
    }
    args = parsed;
    inv = await resolveInvocation(args);
  } catch (err) {
    if (err instanceof UsageError) throw new BadUsage(`${err.message}\n`);
    throw err;
  }

  const label = inv.name ?? inv.installer ?? path.basename(inv.dir ?? "job");
  const log = inv.logDir ? new JobLog(inv.logDir, label) : undefined;
  const say = (line: string) => {
    process.stdout.write(`${line}\n`);
    log?.line(line);
  };
  if (inv.name) say(`[${label}] starting`);
  const slots = args.jobSlots && { count: args.jobSlots.count, dir: path.resolve(args.jobSlots.dir) };
  const release = slots ? await takeJobSlot(slots, (line) => say(`[${label}] ${line}`)) : undefined;
  let result: Pick<JobResult, "phase" | "message">;
  try {
    result = await invoke(inv, say);
  } finally {
    release?.();
  }
  const json = JSON.stringify({ phase: result.phase, message: result.message });
  log?.line(json);
  log?.close();
  let code: number = result.phase === "Succeeded" ? EXIT.ok : EXIT.error;
  const outputs: [string | undefined, string, string][] = [
    [inv.resultFile, json, "--result-file"],
    [inv.resultTfstate, resultAsTfstate(result, label), "--result-tfstate"],
  ];
  for (const [file, text, option] of outputs) {
    if (!file) continue;
    try {
      writeResultFile(file, text);
    } catch (err) {
      process.stderr.write(`invoke: could not write ${option} ${file}: ${(err as Error).message}\n`);
      code = EXIT.error;
    }
  }
  process.stdout.write(`${json}\n`);
  // Terraform reports only "exit status 1" for a failed local-exec: say which job and why on stderr too.
  if (result.phase === "Failed" && inv.name) process.stderr.write(`[${label}] Failed: ${result.message}\n`);
  return code;
}

if (require.main === module) runCommand(COMMAND, process.argv.slice(2), main);
