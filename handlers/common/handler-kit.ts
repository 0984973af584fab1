// The frame every installer runs in, so each handler file is only its own business:
//   validate the event and the env (handler-input.ts) -> connect (retry policy from the event's `ssh`)
//   -> detect the OS -> wait for the first boot -> the installer's model (installer-model.ts: inspect,
//   plan, and unless `check: true` apply and verify) -> the one result shape (installer-result.ts).
// Any error leaves as one Error naming the installer and the phase, scrubbed of secrets and printable:
// text from the VM reaches the operator's terminal and Terraform's logs, never its escape sequences.

import type { InstallerDefinition } from "../../lib/shared/installer-definition";
import { printable } from "../../lib/shared/printable-text";
import { secrets as defaultSecrets, type SecretScrubber } from "../../lib/shared/secrets";
import type { EventOf, Settings } from "../../lib/shared/settings";
import { ValidationError } from "../../lib/shared/validate";
import { Apt, resolveAptSettings } from "./apt";
import { withAptProxy } from "./apt-proxy";
import { type BootFacts, lookAtBoot } from "./boot-look";
import { lookOnly } from "./check-mode";
import { cloudInitState, waitForCloudInit } from "./cloud-init";
import type { ConnectionEnv } from "./connection-env";
import type { Connection, Remote } from "./exec";
import { FirstBootClock } from "./first-boot";
import { type CommonEvent, validateInput } from "./handler-input";
import { type InstallerModel, runModel } from "./installer-model";
import { type InstallerReport, type InstallerResult, result } from "./installer-result";
import type { OsInfo } from "./os-release";
import { recordInstalls } from "./package-inventory";
import { Progress } from "./progress";
import { type JobBudget, ResilientConnection } from "./resilient-connection";
import { type ConnectOptions, connect } from "./ssh";
import { resolveSshRetry, type SshRetry } from "./ssh-retry-policy";
import { SshSession } from "./ssh-session";

/** An installer's handler: its definition (name, event keys and rules, secrets) and its model. */
export interface HandlerSpec<S extends Settings, R extends InstallerReport> {
  /** handlers/<handler>/definition.ts: the event's keys come from its settings; unknown keys are rejected. */
  definition: InstallerDefinition<S>;
  /** The installer's model (installer-model.ts): the kit runs it, check mode included. */
  // biome-ignore lint/suspicious/noExplicitAny: the state, outcome and proof types are the installer's own.
  model: InstallerModel<EventOf<S>, any, R, any, any>;
}

/** Identity helper that gives `spec` its types. */
export function defineHandler<S extends Settings, R extends InstallerReport>(
  spec: HandlerSpec<S, R>,
): HandlerSpec<S, R> {
  return spec;
}

/** What runHandler uses from the outside world; tests replace any of it. */
export interface InstallerDeps {
  /** @default process.env */
  env?: NodeJS.ProcessEnv;
  /** @default ssh.connect */
  connect?: (target: ConnectionEnv, opts: ConnectOptions) => Promise<Connection>;
  /** Progress output. @default process.stdout */
  write?: (line: string) => void;
  /** @default the process-wide registry */
  secrets?: SecretScrubber;
  now?: () => number;
  /** Waits between looks (first boot, lock retries). @default setTimeout */
  sleep?: (ms: number) => Promise<void>;
}

/** An error the kit has already worded (prefix, phase, scrubbed). */
export class InstallerError extends Error {
  constructor(
    message: string,
    readonly phase: string,
  ) {
    super(message);
    this.name = "InstallerError";
  }
}

/** The SSH retry budget, cut to what is left of the job's (never below one attempt's worth). */
function withinBudget(retry: SshRetry, budget: { started: number; budgetSec?: number; now: () => number }): SshRetry {
  if (budget.budgetSec === undefined) return retry;
  const leftSec = Math.floor((budget.started + budget.budgetSec * 1000 - budget.now()) / 1000);
  return { ...retry, budgetSec: Math.max(1, Math.min(retry.budgetSec, leftSec)) };
}

/**
 * Before the installer's own work: cloud-init finishing the VM's first boot (cloud-init.ts). A check
 * waits too: what it reads (dpkg, apt's lists) is what a real run would see only once the first boot is
 * over, and waiting changes nothing on the VM.
 */
const FIRST_BOOT_PHASE = "waiting for the VM's first boot (cloud-init)";

/** What the frame keeps for one job while it runs: who it is, its clock, and the phase for errors. */
export interface Job {
  name: string;
  secrets: SecretScrubber;
  now: () => number;
  progress: Progress;
  started: number;
  phase: string;
  deps: InstallerDeps;
}

/** A job's frame: its progress lines (scrubbed, printable), its clock, its secrets. */
export function startJob(name: string, deps: Pick<InstallerDeps, "secrets" | "now" | "write"> = {}): Job {
  const secrets = deps.secrets ?? defaultSecrets;
  const now = deps.now ?? Date.now;
  const progress = new Progress(name, { write: deps.write, secrets, now });
  return { name, secrets, now, progress, started: now(), phase: "", deps };
}

/** Runs one installer end to end; see the file comment for the phases. */
export async function runHandler<S extends Settings, R extends InstallerReport>(
  spec: HandlerSpec<S, R>,
  rawEvent: unknown,
  deps: InstallerDeps = {},
): Promise<InstallerResult<R>> {
  const job = startJob(spec.definition.handler, deps);
  const { secrets, now, progress } = job;
  let connection: Connection | undefined;
  try {
    job.phase = "validating the event and the environment";
    const env = deps.env ?? process.env;
    const { event, target } = validateInput(spec.definition, rawEvent, env);
    secrets.add(target.privateKey, "SSH_KEY");
    secrets.add(env.SSH_KEY, "SSH_KEY");
    for (const field of Object.keys(spec.definition.secrets ?? {}))
      secrets.add((event as Record<string, unknown>)[field] as string | undefined, field);
    progress.timings.validate = now() - job.started;

    job.phase = "connecting over SSH";
    connection = await connectJob(job, event, target);
    job.phase = "detecting the OS";
    // One exec: os-release, cloud-init's state, the apt proxy file and the installer's first probes.
    const own = spec.model.firstLook?.(event) ?? [];
    const boot = await progress.step("reading /etc/os-release", () => lookAtBoot(connection!, own), "os");
    const { os } = boot;
    progress.info(`os: ${os.pretty_name ?? os.id}, treated as ${os.family} ${os.codename}`);
    return await runInstaller(spec, job, { event, user: target.user, connection, os, boot });
  } catch (err) {
    throw worded(job, err);
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

/** The first session, then the resilient connection that reconnects to the same host key. */
async function connectJob(job: Job, event: CommonEvent, target: ConnectionEnv): Promise<Connection> {
  const { progress, secrets, now, deps } = job;
  const connectTo: NonNullable<InstallerDeps["connect"]> = deps.connect ?? connect;
  const budget = { started: job.started, budgetSec: event.time_budget_sec, now };
  const options = (): ConnectOptions => ({
    retry: withinBudget(resolveSshRetry(event.ssh), budget),
    progress,
    secrets,
    now,
  });
  const where = `${target.user}@${target.host}:${target.port}`;
  const first = await progress.step(`ssh ${where}`, () => connectTo(target, options()), "connect");
  // Every later session must present the key this one did.
  const again = () => connectTo({ ...target, hostKeySha256: first.hostKeySha256 }, options());
  const connection = new ResilientConnection(first, again, {
    job: job.name,
    progress,
    budget,
    detach: first instanceof SshSession,
  });
  const pinned = target.hostKeySha256
    ? " (matches SSH_HOST_KEY_SHA256)"
    : " (not pinned: set SSH_HOST_KEY_SHA256 to this to pin it)";
  progress.info(`host key ${connection.hostKeySha256}${pinned}`);
  return connection;
}

/** Where the installer runs: the checked event, the login user, the connection and the OS seen. */
interface Connected<E> {
  event: E & CommonEvent;
  user: string;
  connection: Connection;
  os: OsInfo;
  boot: BootFacts;
}

/** First boot, then the installer's model (or its own run), then the one result shape. */
async function runInstaller<S extends Settings, R extends InstallerReport>(
  spec: HandlerSpec<S, R>,
  job: Job,
  { event, user, connection, os, boot: seen }: Connected<EventOf<S>>,
): Promise<InstallerResult<R>> {
  const { progress, secrets, now } = job;
  const check = event.check === true;
  const installPhase = check ? "checking (check mode: nothing is changed)" : "installing";
  if (check)
    progress.info(
      "check mode: looking only; what would change is reported in would_change, nothing on the VM is changed",
    );
  job.phase = FIRST_BOOT_PHASE;
  const budget = { started: job.started, budgetSec: event.time_budget_sec, now };
  const look = lookOnly(connection);
  const deps = { ...job.deps, now };
  const boot = await afterFirstBoot(check ? look : connection, event, { budget, progress, deps, seen });
  job.phase = installPhase;
  const base = { event, os, progress, secrets, target: connection.target, user };
  const lookCtx = { ...base, remote: look, apt: check ? boot.apt(check) : boot.aptOver(look, true) };
  // Every install of a real run is recorded, so that state absent can take back exactly that.
  const apt = check ? lookCtx.apt : recordInstalls(boot.apt(false), spec.definition.key);
  const real = check ? lookCtx : { ...base, remote: connection, apt };
  // The first look's dpkg and the like stand for inspect's own reads only when no first boot ran since.
  const firstLook = boot.waited ? undefined : seen.installer;
  const model = withAptProxy(spec.model, { file: seen.proxyFile });
  const report = await runModel(model, { check, real, look: lookCtx, firstLook });
  progress.timings.total = now() - job.started;
  const frame = { connection, os, timings: { ...progress.timings }, check, firstBoot: boot.firstBoot };
  return result(report, { ...frame, repairs: real.apt.repairs });
}

/** The error as it leaves the job: named, phased, scrubbed, printable. */
export function worded(job: Job, err: unknown): InstallerError {
  const message = err instanceof Error ? err.message : String(err);
  const text =
    err instanceof ValidationError ? `${job.name}: ${message}` : `${job.name} failed while ${job.phase}: ${message}`;
  job.progress.info(`failed after ${((job.now() - job.started) / 1000).toFixed(1)}s`);
  return new InstallerError(printable(job.secrets.scrub(text)), job.phase);
}

/** Waits for the first boot, then hands out Apts that wait for the first boot's locks. */
async function afterFirstBoot(
  remote: Remote,
  event: CommonEvent,
  opts: { budget: JobBudget; progress: Progress; deps: InstallerDeps; seen: BootFacts },
): Promise<{
  apt: (check: boolean) => Apt;
  aptOver: (remote: Remote, check: boolean) => Apt;
  firstBoot: string[];
  /** cloud-init was still at the first boot when the first look read the VM, and it was waited for. */
  waited: boolean;
}> {
  const { budget, progress, deps, seen } = opts;
  const settings = resolveAptSettings(event.apt);
  const { now, sleep } = deps;
  const clock = new FirstBootClock({ budget, capSec: settings.firstBootWaitSec, now, sleep, progress });
  const firstBoot = await waitForCloudInit(remote, clock, progress, seen.cloudInit);
  const aptOver = (over: Remote, check: boolean) => new Apt(over, settings, { progress, check, clock, sleep });
  const waited = clock.enabled && cloudInitState(seen.cloudInit).kind === "running";
  return { apt: (check) => aptOver(remote, check), aptOver, firstBoot, waited };
}
