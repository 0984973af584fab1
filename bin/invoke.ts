// `npm run invoke -- <installer> ...`: runs one installer job locally, bundled exactly as the stack bundles
// it and run exactly as the platform runs it (lib/jobs), against whatever VM the SSH_* variables name.
// Progress goes to stdout as it comes; the last stdout line is the job's outcome as one JSON object, so
// scripts read one line and people read the rest. The options, their parsing and the result files are the
// protocol the local job target shares with this CLI: lib/jobs/invoke-args.ts and job-result-file.ts.
import * as fs from "node:fs";
import * as path from "node:path";
import { bundleHandler } from "../lib/construct/bundling/bundle";
import { type Invocation, resolveInvocation } from "../lib/jobs/invocation";
import { type InvokeArgs, parseInvokeArgs, USAGE, USAGE_HINT, UsageError } from "../lib/jobs/invoke-args";
import { JobLog } from "../lib/jobs/job-log";
import { resultAsTfstate, writeResultFile } from "../lib/jobs/job-result-file";
import { takeJobSlot } from "../lib/jobs/job-slots";
import { type JobResult, runJob } from "../lib/jobs/run-job";
import { BadUsage, type CommandSpec, EXIT, runCommand } from "../lib/operator/exit-codes";

// The exit codes are the operator tools' convention (lib/operator/exit-codes.ts), which the job protocol in lib/jobs
// does not import: the CLI adds them to the protocol's usage.
const HELP = `${USAGE}\nExit code: ${EXIT.ok} Succeeded, ${EXIT.error} Failed, ${EXIT.usage} bad usage.`;
// Help only as the first argument: parseInvokeArgs finds -h/--help anywhere else, where it is not an option's value.
const COMMAND: CommandSpec = { name: "invoke", usage: USAGE_HINT, help: "first", helpText: HELP };

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

/**
 * A job the stack runs (--name) that cannot start: its Failed result, as a job that ran and failed reports it,
 * so Terraform shows one line naming the job and the setting at fault, never this command's usage, and
 * `npm run status` reads why. A person at the command line gets the usage error.
 */
function cannotStart(args: InvokeArgs, err: UsageError): number {
  if (args.name === undefined) throw new BadUsage(`${err.message}\n`);
  if (args.resultTfstate)
    fs.mkdirSync(path.dirname(path.resolve(args.resultTfstate)), { recursive: true, mode: 0o700 });
  const files = { resultFile: args.resultFile, resultTfstate: args.resultTfstate };
  return report({ phase: "Failed", message: err.message }, args.name, files);
}

async function main(argv: string[]): Promise<number> {
  let args: InvokeArgs | "help";
  try {
    args = parseInvokeArgs(argv);
  } catch (err) {
    if (err instanceof UsageError) throw new BadUsage(`${err.message}\n`);
    throw err;
  }
  if (args === "help") {
    process.stdout.write(`${HELP}\n`);
    return EXIT.ok;
  }
  let inv: Invocation;
  try {
    inv = await resolveInvocation(args);
  } catch (err) {
    if (err instanceof UsageError) return cannotStart(args, err);
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
  log?.line(JSON.stringify({ phase: result.phase, message: result.message }));
  log?.close();
  return report(result, label, inv, inv.name !== undefined);
}

/**
 * Writes the outcome where it was asked for and prints it as the last stdout line; a failed job the stack
 * runs says which job and why on stderr too (Terraform reports only "exit status 1" for a failed local-exec).
 */
function report(
  result: Pick<JobResult, "phase" | "message">,
  label: string,
  files: { resultFile?: string; resultTfstate?: string },
  named = true,
): number {
  const json = JSON.stringify({ phase: result.phase, message: result.message });
  let code: number = result.phase === "Succeeded" ? EXIT.ok : EXIT.error;
  const outputs: [string | undefined, string, string][] = [
    [files.resultFile, json, "--result-file"],
    [files.resultTfstate, resultAsTfstate(result, label), "--result-tfstate"],
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
  if (result.phase === "Failed" && named) process.stderr.write(`[${label}] Failed: ${result.message}\n`);
  return code;
}

if (require.main === module) runCommand(COMMAND, process.argv.slice(2), main);
