// What every benchmark here shares: medians, a fresh sandbox per measured run (stopped even on ^C), and
// one installer job timed through the job runner exactly as the platform would run it.
import { bundleHandler } from "../lib/bundling/bundle";
import { runJob } from "../lib/runner/run-job";
import { jobEnvFor, Sandbox, startSandbox } from "../sandbox";

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

export const fmtMs = (ms: number) => `${Math.round(ms)} ms`;
export const fmtS = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** Rounds from argv[2] (default `fallback`), or exit 2 with the usage line. */
export function roundsArg(script: string, fallback = 3): number {
  const n = Number(process.argv[2] ?? fallback);
  if (!Number.isInteger(n) || n < 1) {
    process.stderr.write(`usage: node -r ./bin/ts-register.js bench/${script} [rounds >= 1]\n`);
    process.exit(2);
  }
  return n;
}

const live = new Set<Sandbox>();
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.once(sig, () => {
    Promise.allSettled([...live].map((sb) => sb.stop())).finally(() => process.exit(130));
  });
}

/** Runs `fn` on a fresh sandbox (boot and teardown outside any measurement) and always stops it. */
export async function withSandbox<T>(fn: (sb: Sandbox) => Promise<T>): Promise<T> {
  const sb = await startSandbox();
  live.add(sb);
  try {
    return await fn(sb);
  } finally {
    live.delete(sb);
    await sb.stop();
  }
}

export interface TimedJob {
  /** Wall time from spawning the job's process to its outcome. */
  ms: number;
  result: any;
}

/** One installer job through the runner on `sb`; throws with the job's message unless it Succeeded. */
export async function timeJob(sb: Sandbox, handler: string, event: unknown, secrets: string[] = [], env: Record<string, string> = {}): Promise<TimedJob> {
  const dir = bundleHandler({ handler }).dir;
  const jobEnv = jobEnvFor(sb, env);
  const started = performance.now();
  const out = await runJob({ dir, env: jobEnv, event, timeoutSec: 900, secrets: [jobEnv.SSH_KEY, ...secrets] });
  const ms = performance.now() - started;
  if (out.phase !== "Succeeded") throw new Error(`${handler} failed on ${sb.name}: ${out.message}`);
  return { ms, result: JSON.parse(out.message) };
}

/** Exit non-zero with the error, after stopping any sandbox still up. */
export function runMain(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    async (err) => {
      process.stderr.write(`bench failed: ${(err as Error).stack ?? err}\n`);
      await Promise.allSettled([...live].map((sb) => sb.stop()));
      process.exit(1);
    },
  );
}
