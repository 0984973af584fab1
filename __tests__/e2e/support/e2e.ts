// Shared by the end-to-end suites: gating on the sandbox's prerequisites, running an installer exactly as
// a job runs (bundled by the stack's bundler, started by the job runner), and checking the target over a
// separate SSH session.

import {
  jobEnvFor,
  type Sandbox,
  type Snapshot,
  sandboxSupportProblems,
  sshRun,
  startSandbox,
} from "../../../dev/sandbox/index";
import { DEFAULT_RELEASE } from "../../../dev/sandbox/release";
import { bundleHandler } from "../../../lib/construct/bundling/bundle";
import { resolveInvocation } from "../../../lib/jobs/invocation";
import { runJob } from "../../../lib/jobs/run-job";
import { type FakeDockerRepo, type FakeDockerRepoOptions, startFakeDockerRepo } from "../fixtures/docker-repo";
import { FACTS, RELEASE, RELEASE_LABEL } from "./release";

/**
 * `describe` when a sandbox can run here, else `describe.skip` with the reason printed. Under CI=true a
 * missing prerequisite is a failure, never a skip: the suite gets one failing test that names it.
 * On a release other than the default the name says which ("... on Debian 13 (trixie)").
 */
export function describeE2E(suiteName: string, body: () => void): void {
  const name = RELEASE === DEFAULT_RELEASE ? suiteName : `${suiteName} on ${RELEASE_LABEL}`;
  const problems = sandboxSupportProblems();
  if (problems.length === 0) {
    describe(name, body);
  } else if (process.env.CI === "true") {
    describe(name, () => {
      test("prerequisites for the sandbox VM are present", () => {
        throw new Error(`end-to-end tests cannot run: ${problems.join("; ")} (run bin/setup as root)`);
      });
    });
  } else {
    console.warn(`skipping end-to-end suite "${name}": ${problems.join("; ")}`);
    describe.skip(name, body);
  }
}

/**
 * A fresh sandbox for the enclosing describe block, or one made from the snapshot `from` gives
 * (snapshots.ts): booted before its first test and handed to `use`, stopped after its last (also when a
 * test failed).
 */
export function sandboxPerSuite(use: (sb: Sandbox) => void, timeoutMs = 300_000, from?: () => Promise<Snapshot>): void {
  let sb: Sandbox | undefined;
  beforeAll(async () => {
    sb = await bootFrom(from && (await from()));
    use(sb);
  }, timeoutMs);
  afterAll(async () => {
    await sb?.stop();
  }, timeoutMs);
}

/**
 * Sandboxes and fake Docker repositories a test starts for itself, stopped after it whatever the outcome:
 * the repository first (the sandbox's network carries it), then the sandbox.
 */
export function perTest(timeoutMs: number): {
  /** A fresh sandbox, or one made from a snapshot (snapshots.ts). */
  sandbox(from?: Snapshot): Promise<Sandbox>;
  dockerRepo(opts: FakeDockerRepoOptions): Promise<FakeDockerRepo>;
} {
  const live: { sb?: Sandbox; repo?: FakeDockerRepo } = {};
  afterEach(async () => {
    await live.repo?.stop();
    live.repo = undefined;
    await live.sb?.stop();
    live.sb = undefined;
  }, timeoutMs);
  return {
    sandbox: async (from) => {
      live.sb = await bootFrom(from);
      return live.sb;
    },
    dockerRepo: async (opts) => (live.repo = await startFakeDockerRepo(opts)),
  };
}

/** A fresh sandbox, or one made from a snapshot and booted to the end. */
export async function bootFrom(from?: Snapshot): Promise<Sandbox> {
  const sb = await startSandbox({ from });
  // sshd answers before the boot has ended: a snapshot's services (docker.service, PostgreSQL) may still be
  // starting. The state the snapshot kept is the one with them running.
  if (from) await sb.rootExec("systemctl is-system-running --wait", { timeoutMs: 180_000 });
  return sb;
}

/** A root command on the target that must succeed; its stdout. */
export async function root(sb: Sandbox, command: string, timeoutMs = 120_000): Promise<string> {
  const r = await sb.rootExec(command, { timeoutMs });
  if (r.code !== 0) throw new Error(`${command} on the target exited ${r.code}: ${r.stderr || r.stdout}`);
  return r.stdout;
}

/** A message without the stack frames ("    at ...") an Error's text may carry. */
export function withoutFrames(message: string): string {
  return message
    .split("\n")
    .filter((l) => !/^\s+at /.test(l))
    .join("\n");
}

/** Asserts phase Succeeded; on failure jest prints the job's own message (no stack frames) and its last lines. */
export function expectSucceeded(run: InstallerRun): void {
  const failure =
    run.phase === "Succeeded"
      ? ""
      : `${withoutFrames(run.message)}\n--- last lines:\n${run.lines.slice(-20).join("\n")}`;
  expect({ phase: run.phase, failure }).toEqual({ phase: "Succeeded", failure: "" });
}

/** Where the installers write: apt's sources and keys, PostgreSQL's and Docker's configuration, the grants inventory. */
const WRITTEN_DIRS = ["/etc/apt", "/etc/postgresql", "/etc/docker", "/var/lib/vm-install"];

/**
 * What a check must leave exactly as it was, by part, for `toEqual` to name the part that moved: dpkg's
 * database, users and groups (`system`); every file and directory the installers write, with mode, owner,
 * mtime, size and content hash, so a temporary file left behind shows too (`files`); apt's lists and their
 * times (`lists`); the services' state, start time and main pid (`started`: no start, restart or reload
 * that forks); PostgreSQL's databases and roles with their passwords' secrets, where it is installed.
 */
export async function vmFingerprint(sb: Sandbox): Promise<Record<string, string>> {
  const sh = (command: string) => root(sb, command, 60_000);
  const psql = (sql: string) =>
    `if command -v psql >/dev/null; then cd / && runuser -u postgres -- psql -X -At -c '${sql}'; fi`;
  return {
    system: await sh("sha256sum /var/lib/dpkg/status /etc/group /etc/passwd /etc/shadow; getent group docker; true"),
    files: await sh(
      `for d in ${WRITTEN_DIRS.join(" ")}; do [ -e "$d" ] && find "$d"; done | sort | ` +
        `while read -r f; do stat -c '%n %a %U %Y %s' "$f"; if [ -f "$f" ]; then sha256sum "$f"; fi; done`,
    ),
    lists: await sh("ls -lA --time-style=full-iso /var/lib/apt/lists"),
    started: await sh(
      `systemctl show -p ActiveState -p ActiveEnterTimestamp -p MainPID docker.service docker.socket postgresql@${FACTS.pgMajor}-main`,
    ),
    databases: await sh(psql("SELECT datname, datdba FROM pg_database ORDER BY 1")),
    roles: await sh(psql("SELECT rolname, rolcanlogin, rolpassword FROM pg_authid ORDER BY 1")),
  };
}

export interface InstallerRun {
  phase: "Succeeded" | "Failed";
  message: string;
  /** The parsed result when Succeeded. */
  result: any;
  /** Every line the handler printed, in order. */
  lines: string[];
  durationMs: number;
}

/** The job env for a sandbox, as the stack would give it. */
export const jobEnv = jobEnvFor;

/** Bundles handlers/<handler> as the stack does and runs it through the job runner against `sb`. */
export async function runInstaller(
  sb: Sandbox,
  handler: string,
  event: unknown,
  opts: {
    env?: Record<string, string>;
    timeoutSec?: number;
    secrets?: string[];
    signal?: AbortSignal;
    onLine?: (line: string) => void;
    /**
     * Secret event fields (field -> value) sent as the deployed job sends them: the runner's --secret-env
     * sets each from a TF_VAR_ variable into the event and scrubs it from everything printed.
     */
    secretEnv?: Record<string, string>;
  } = {},
): Promise<InstallerRun> {
  const bundle = bundleHandler({ handler });
  const lines: string[] = [];
  const env = opts.env ?? jobEnv(sb);
  const inv = opts.secretEnv ? await withSecretEnv(bundle.dir, event, opts.secretEnv) : { event, secrets: [] };
  const out = await runJob({
    dir: bundle.dir,
    env,
    event: inv.event,
    timeoutSec: opts.timeoutSec ?? 900,
    secrets: [env.SSH_KEY, ...(opts.secrets ?? []), ...inv.secrets].filter(Boolean),
    onOutput: (line) => {
      lines.push(line);
      opts.onLine?.(line);
    },
    signal: opts.signal,
  });
  return { ...out, result: out.phase === "Succeeded" ? JSON.parse(out.message) : undefined, lines };
}

/** The event as the runner completes it from --secret-env FIELD=TF_VAR_e2e_FIELD, and what it scrubs. */
async function withSecretEnv(
  dir: string,
  event: unknown,
  values: Record<string, string>,
): Promise<{ event: unknown; secrets: string[] }> {
  const secretEnv = Object.keys(values).map((field) => ({ field, variable: `TF_VAR_e2e_${field}` }));
  const environment = Object.fromEntries(secretEnv.map((v) => [v.variable, values[v.field]]));
  const inv = await resolveInvocation({ dir, event: event as Record<string, unknown>, secretEnv }, environment);
  return { event: inv.event, secrets: inv.secrets };
}

/** Runs `command` on the target as the SSH user over a separate session (the `ssh` client, pinned key). */
export async function sshUser(
  sb: Sandbox,
  command: string,
  timeoutMs = 60000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await sshRun(sb, command, { timeoutMs });
  return { code, stdout, stderr };
}

/** dpkg's view of packages on the target: name -> status line ("install ok installed"). */
export async function dpkgStatus(sb: Sandbox, names: string[]): Promise<Record<string, string>> {
  const r = await sb.rootExec(`dpkg-query -W -f='\${Package} \${Status}\\n' ${names.join(" ")} 2>/dev/null; true`);
  const out: Record<string, string> = {};
  for (const line of r.stdout.split("\n")) {
    const [name, ...status] = line.trim().split(" ");
    if (name) out[name] = status.join(" ");
  }
  return out;
}

/** Lines of the target's process list and process environments that mention any needle. */
const PS = "ps -e -ww -o args; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'";

/** What the watch has seen so far, for a `fn` that goes on only once the watch has seen something. */
export interface ProcessWatch {
  polls(): number;
  hits(): string[];
}

/** Runs `fn` while polling the target's processes every ~100 ms; returns its value, the hits and the poll count. */
export async function watchProcesses<T>(
  sb: Sandbox,
  needles: string[],
  fn: (watch: ProcessWatch) => Promise<T>,
): Promise<{ value: T; hits: string[]; polls: number }> {
  let stop = false;
  let polls = 0;
  const hits = new Set<string>();
  const loop = (async () => {
    while (!stop) {
      const r = await sb.rootExec(PS, { timeoutMs: 10_000 }).catch(() => undefined);
      if (r) {
        polls++;
        for (const line of r.stdout.split("\n")) if (needles.some((n) => line.includes(n))) hits.add(line);
      }
      await new Promise((res) => setTimeout(res, 100));
    }
  })();
  try {
    return { value: await fn({ polls: () => polls, hits: () => [...hits] }), hits: [...hits], polls };
  } finally {
    stop = true;
    await loop;
  }
}
