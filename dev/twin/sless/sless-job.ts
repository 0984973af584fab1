// sless_job as the plan describes the platform: a one-shot run of source_dir in a fresh process with only
// env_vars, event_json as the event and the given entrypoint, waited for up to wait_timeout_sec. A
// handler that throws (or times out) is a job in phase Failed with the error in message, not a provider
// error: the platform reports it, the stack decides (its postcondition on phase).
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { eventSecrets } from "../../../lib/jobs/invocation";
import { DEFAULT_TIMEOUT_SEC, parseEntrypoint } from "../../../lib/jobs/job-contract";
import { runJob } from "../../../lib/jobs/run-job";
import { TWIN_STATE_DIR } from "../nubes/records";
import type { CtyObject } from "../protocol/cty-value";
import { type Diagnostic, errorDiagnostic, TwinError } from "../protocol/diagnostics";
import type { ResourceImplementation } from "../protocol/resource";

/**
 * Where the twin keeps a job run's output, as the platform keeps a job's log: the provider's own stderr
 * reaches only Terraform's debug log. Root-only, like the local target's logs (lines are already scrubbed).
 */
export function slessJobLog(jobId: string): string {
  return path.join(TWIN_STATE_DIR, "sless", "logs", `${jobId}.log`);
}

function keepLog(jobId: string, lines: string[]): void {
  const file = slessJobLog(jobId);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, lines.map((l) => `${l}\n`).join(""), { mode: 0o600 });
}

/** Runtimes the twin runs: any Node major, on this machine's Node (the platform's names are "nodejs<major>"). */
const RUNTIME = /^nodejs\d+$/;

function validateJob(config: CtyObject): Diagnostic[] {
  const out: Diagnostic[] = [];
  const { runtime, entrypoint, event_json, wait_timeout_sec } = config;
  if (typeof runtime === "string" && !RUNTIME.test(runtime)) {
    out.push(
      errorDiagnostic(
        `sless_job: runtime ${JSON.stringify(runtime)} is not a Node runtime`,
        'The twin runs Node handlers only: use "nodejs20" (sless.runtime in cdktf.json).',
        "runtime",
      ),
    );
  }
  if (typeof entrypoint === "string") {
    try {
      parseEntrypoint(entrypoint);
    } catch (e) {
      out.push(errorDiagnostic("sless_job: invalid entrypoint", (e as Error).message, "entrypoint"));
    }
  }
  if (typeof event_json === "string") {
    try {
      JSON.parse(event_json);
    } catch (e) {
      out.push(
        errorDiagnostic(
          "sless_job: event_json is not JSON",
          `${(e as Error).message}; the platform passes it to the handler as the parsed event.`,
          "event_json",
        ),
      );
    }
  }
  if (typeof wait_timeout_sec === "number" && !(wait_timeout_sec > 0)) {
    out.push(
      errorDiagnostic(
        "sless_job: wait_timeout_sec must be a positive number of seconds",
        `got ${wait_timeout_sec}`,
        "wait_timeout_sec",
      ),
    );
  }
  return out;
}

async function runOnce(planned: CtyObject, log: (line: string) => void, signal: AbortSignal): Promise<CtyObject> {
  const name = String(planned.name);
  const dir = String(planned.source_dir);
  if (!fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory()) {
    throw new TwinError(
      `sless_job ${name}: source_dir ${dir} is not a directory`,
      "The platform uploads source_dir; build the handler bundle first (cdktf synth does).",
      "source_dir",
    );
  }
  const env = Object.fromEntries(
    Object.entries((planned.env_vars ?? {}) as Record<string, string>).map(([k, v]) => [k, String(v)]),
  );
  const event = planned.event_json === null ? {} : JSON.parse(String(planned.event_json));
  const lines: string[] = [];
  const result = await runJob({
    dir,
    env,
    event,
    entrypoint: typeof planned.entrypoint === "string" ? planned.entrypoint : undefined,
    timeoutSec: typeof planned.wait_timeout_sec === "number" ? planned.wait_timeout_sec : DEFAULT_TIMEOUT_SEC,
    secrets: [...(env.SSH_KEY ? [env.SSH_KEY] : []), ...eventSecrets(event)],
    onOutput: (line) => {
      lines.push(line);
      log(`[${name}] ${line}`);
    },
    signal,
  });
  log(`[${name}] ${result.phase} in ${(result.durationMs / 1000).toFixed(1)} s`);
  const id = `${name}-${randomBytes(6).toString("hex")}`;
  keepLog(id, lines);
  return { ...planned, id, phase: result.phase, message: result.message };
}

/** sless_job, and a stop that cancels every running job (Terraform's StopProvider on Ctrl-C). */
export function slessJob(log: (line: string) => void): { resource: ResourceImplementation; stop(): void } {
  let cancel = new AbortController();
  const resource: ResourceImplementation = {
    // One-shot: what runs, and the run id, make a new run; the platform never reruns a job by itself.
    replaceOn: ["name", "runtime", "entrypoint", "source_dir", "event_json", "run_id"],
    validate: validateJob,
    create: (planned) => runOnce(planned, log, cancel.signal),
    // env_vars and wait_timeout_sec apply to the next run; this one's outcome stays.
    update: async (prior, planned) => ({ ...planned, id: prior.id, phase: prior.phase, message: prior.message }),
    // A finished job has nothing to stop; destroy forgets its record.
    delete: async () => undefined,
  };
  const stop = () => {
    cancel.abort();
    cancel = new AbortController();
  };
  return { resource, stop };
}
