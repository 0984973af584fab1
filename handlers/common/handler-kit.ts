// The frame every installer runs in, so each handler file is only its own business:
//   validate the event and the env (nothing touches the network before both pass)
//   -> connect (retry policy from the event's `ssh` key) -> detect the OS
//   -> the installer's own work (inspect, act only where needed, verify)
//   -> the one result shape every installer reports (see InstallerResult).
// With the event's `check: true` the same phases run but nothing on the VM changes: the installer reports
// what it would change and the kit turns that into `would_change` (check-mode.ts).
// Any error leaves as one Error whose message names the installer and the phase, scrubbed of secrets.
// What leaves (result, error, progress) is also made printable (progress.ts): text from the VM goes to
// the operator's terminal and Terraform's logs, never its escape sequences.
//
//   export const handler = defineHandler({
//     definition: dockerDefinition,            // its settings: the event's keys, rules and defaults
//     run: async ({ event, remote, apt, os, progress }) => ({ status: "ok", changes: [], summary: "...", ... }),
//   });
//   export const install = (event: unknown) => runHandler(handler, event);

import type { InstallerDefinition } from "../../shared/installer-definition";
import { secrets as defaultSecrets, type SecretScrubber } from "../../shared/secrets";
import { type EventOf, eventFields, type Settings } from "../../shared/settings";
import type { SshEventSettings } from "../../shared/ssh-retry";
import { boolean, type FieldsOf, integer, object, optional, ValidationError, validate } from "../../shared/validate";
import { Apt, type AptEventSettings, aptEventSettings, resolveAptSettings } from "./apt";
import { checkSummary, lookOnly } from "./check-mode";
import { waitForCloudInit } from "./cloud-init";
import { type ConnectionEnv, readConnectionEnv } from "./connection-env";
import type { Remote } from "./exec";
import { FirstBootClock } from "./first-boot";
import { detectOs, type OsInfo } from "./os-release";
import { Progress, printable } from "./progress";
import { type JobBudget, ResilientConnection } from "./resilient-connection";
import { type ConnectOptions, connect, resolveSshRetry, type SshRetry, sshEventSettings } from "./ssh";
import { SshSession } from "./ssh-session";

/** What an installer's `run` reports; the kit turns it into an InstallerResult. */
export interface InstallerReport {
  /** "ok": everything asked for is in place; "partial": some of it could not be done (see warnings). */
  status: "ok" | "partial";
  /**
   * What this run did on the VM, one line each in words; empty when it changed nothing. In check mode:
   * what it would have done, in the same words a real run would use (the kit reports it as would_change).
   */
  changes: string[];
  /** One line for people reading the Terraform output. */
  summary: string;
  /** What a person should read though the job succeeded. @default [] */
  warnings?: string[];
}

/** The result every installer returns, in this key order, followed by the installer's own fields. */
export interface CommonResult {
  status: InstallerReport["status"];
  /** True when this run changed anything on the VM (as Ansible reports it): `changes` is not empty. */
  changed: boolean;
  changes: string[];
  /** Check mode only (the event's `check: true`): what a real run would change, one line each; `changes` is empty. */
  would_change?: string[];
  summary: string;
  warnings: string[];
  /** The host key fingerprint seen, "SHA256:..." (pin it with SSH_HOST_KEY_SHA256). */
  host_key_sha256: string;
  os: OsInfo;
  /** Milliseconds per phase (validate, connect, os, the installer's own steps, total). */
  timings_ms: Record<string, number>;
}

export type InstallerResult<R> = CommonResult & Omit<R, keyof InstallerReport>;

/** An open connection as the kit needs it; SshSession is one, tests give a scripted double. */
export interface Connection extends Remote {
  readonly target: string;
  readonly hostKeySha256: string;
  close(): Promise<void>;
}

/** The event keys every installer accepts besides its own. */
export interface CommonEvent {
  /** SSH retry policy (shared/ssh-retry.ts). */
  ssh?: SshEventSettings;
  /** How apt-get waits for the dpkg lock and for an install (common/apt.ts). */
  apt?: AptEventSettings;
  /**
   * Seconds the whole job may take (the stack sets it from wait_timeout_sec, less a margin): every inner
   * limit (connect, lock waits, update, install) is cut to what is left of it. Absent: no overall limit.
   */
  time_budget_sec?: number;
  /** Check mode: inspect and report what would change (would_change), change nothing on the VM. @default false */
  check?: boolean;
}

/** The rule for the event's time_budget_sec. */
export const TIME_BUDGET_RULE = integer(10, 86400);

export interface InstallerContext<E> {
  /** The validated event, defaults filled in. */
  event: E & CommonEvent;
  /** Check mode: decide, report the changes as usual, make none (`remote` refuses commands marked `mutates`). */
  check: boolean;
  /** The VM. */
  remote: Remote;
  /** apt on the VM, with the event's `apt` settings. */
  apt: Apt;
  os: OsInfo;
  /** Progress lines and timings: `progress.step(label, fn, timingKey)` lands in timings_ms. */
  progress: Progress;
  /** Register more secret values here (the kit has already registered SSH_KEY and the definition's secrets). */
  secrets: SecretScrubber;
  /** "user@host:port". */
  target: string;
  /** The SSH login user (SSH_USER): e.g. the default member of a group the installer sets up. */
  user: string;
}

/** An installer's handler: its definition (name, event keys and rules, secrets) and its work. */
export interface HandlerSpec<S extends Settings, R extends InstallerReport> {
  /** handlers/<handler>/definition.ts: the event's keys come from its settings; unknown keys are rejected. */
  definition: InstallerDefinition<S>;
  /** The installer's work, on a connected VM of a supported OS. */
  run(ctx: InstallerContext<EventOf<S>>): Promise<R>;
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

/** The event as given: an object, or event_json's string form. */
export function eventObject(event: unknown): unknown {
  if (typeof event !== "string") return event ?? {};
  try {
    return JSON.parse(event);
  } catch (err) {
    throw new ValidationError("event", [`(top level): not valid JSON (${(err as Error).message})`]);
  }
}

/** `value` with every string in it (keys too) made printable: a result carries text from the VM. */
function printableDeep<T>(value: T): T {
  if (typeof value === "string") return printable(value) as T;
  if (Array.isArray(value)) return value.map(printableDeep) as T;
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [printable(k), printableDeep(v)])) as T;
  }
  return value;
}

/** The one result shape: common keys first, in a fixed order, then the installer's own. */
function result<R extends InstallerReport>(
  report: R,
  connection: Connection,
  os: OsInfo,
  timings: Record<string, number>,
  repairs: string[] = [],
  check = false,
  firstBoot: string[] = [],
): InstallerResult<R> {
  const { status, changes: reported, summary, warnings: ownWarnings = [], ...own } = report;
  const warnings = [...firstBoot, ...ownWarnings];
  const changes = [...repairs, ...reported];
  const common: CommonResult = {
    status,
    changed: !check && changes.length > 0,
    changes: check ? [] : changes,
    ...(check ? { would_change: changes } : {}),
    summary: check ? checkSummary(changes, summary) : summary,
    warnings,
    host_key_sha256: connection.hostKeySha256,
    os,
    timings_ms: timings,
  };
  return printableDeep({ ...common, ...own }) as InstallerResult<R>;
}

/** Both halves of the input, checked before anything else; every problem of both is reported at once. */
function validateInput<S extends Settings>(
  spec: HandlerSpec<S, InstallerReport>,
  rawEvent: unknown,
  env: NodeJS.ProcessEnv,
): { event: EventOf<S> & CommonEvent; target: ConnectionEnv } {
  type E = EventOf<S> & CommonEvent;
  const validator = object<E>({
    ...eventFields(spec.definition.settings),
    apt: optional(aptEventSettings),
    ssh: optional(sshEventSettings),
    time_budget_sec: optional(TIME_BUDGET_RULE),
    check: optional(boolean()),
  } as FieldsOf<E>);
  const problems: string[] = [];
  let event: E | undefined;
  let target: ConnectionEnv | undefined;
  try {
    event = validate(validator, eventObject(rawEvent), "event");
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    problems.push(...err.problems.map((p) => `event ${p}`));
  }
  try {
    target = readConnectionEnv(env);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    problems.push(...err.problems.map((p) => `env ${p}`));
  }
  if (event?.check && !spec.definition.supportsCheckMode) {
    problems.push(
      `event check: ${spec.definition.handler} does not support check mode (its definition does not declare supportsCheckMode), so it cannot be trusted to only look`,
    );
  }
  if (problems.length > 0 || !event || !target)
    throw new ValidationError("invalid input, nothing was done on the VM", problems);
  return { event, target };
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

/** Waits for the first boot, then hands out the Apt that waits for the first boot's locks. */
async function afterFirstBoot(
  remote: Remote,
  event: CommonEvent,
  opts: { budget: JobBudget; progress: Progress; check: boolean; deps: InstallerDeps },
): Promise<{ apt: Apt; firstBoot: string[] }> {
  const { budget, progress, check, deps } = opts;
  const settings = resolveAptSettings(event.apt);
  const { now, sleep } = deps;
  const clock = new FirstBootClock({ budget, capSec: settings.firstBootWaitSec, now, sleep, progress });
  const firstBoot = await waitForCloudInit(remote, clock, progress);
  return { apt: new Apt(remote, settings, { progress, check, clock, sleep }), firstBoot };
}

/** Runs one installer end to end; see the file comment for the phases. */
export async function runHandler<S extends Settings, R extends InstallerReport>(
  spec: HandlerSpec<S, R>,
  rawEvent: unknown,
  deps: InstallerDeps = {},
): Promise<InstallerResult<R>> {
  const name = spec.definition.handler;
  const secrets = deps.secrets ?? defaultSecrets;
  const now = deps.now ?? Date.now;
  const progress = new Progress(name, { write: deps.write, secrets, now });
  const started = now();
  let phase = "validating the event and the environment";
  let connection: Connection | undefined;
  try {
    const { event, target } = validateInput(spec, rawEvent, deps.env ?? process.env);
    secrets.add(target.privateKey, "SSH_KEY");
    secrets.add((deps.env ?? process.env).SSH_KEY, "SSH_KEY");
    for (const field of Object.keys(spec.definition.secrets ?? {}))
      secrets.add((event as Record<string, unknown>)[field] as string | undefined, field);
    progress.timings.validate = now() - started;

    phase = "connecting over SSH";
    const connectTo: NonNullable<InstallerDeps["connect"]> = deps.connect ?? connect;
    const budget = { started, budgetSec: event.time_budget_sec, now };
    const options = (): ConnectOptions => ({
      retry: withinBudget(resolveSshRetry(event.ssh), budget),
      progress,
      secrets,
      now,
    });
    const where = `${target.user}@${target.host}:${target.port}`;
    const first = await progress.step(`ssh ${where}`, () => connectTo(target!, options()), "connect");
    // Every later session must present the key this one did.
    const again = () => connectTo({ ...target!, hostKeySha256: first.hostKeySha256 }, options());
    connection = new ResilientConnection(first, again, {
      job: name,
      progress,
      budget,
      detach: first instanceof SshSession,
    });
    progress.info(
      `host key ${connection.hostKeySha256}${target.hostKeySha256 ? " (matches SSH_HOST_KEY_SHA256)" : " (not pinned: set SSH_HOST_KEY_SHA256 to this to pin it)"}`,
    );

    phase = "detecting the OS";
    const os = await progress.step("reading /etc/os-release", () => detectOs(connection!), "os");
    progress.info(`os: ${os.pretty_name ?? os.id}, treated as ${os.family} ${os.codename}`);

    const check = event.check === true;
    phase = check ? "checking (check mode: nothing is changed)" : "installing";
    if (check)
      progress.info(
        "check mode: looking only; what would change is reported in would_change, nothing on the VM is changed",
      );
    const remote = check ? lookOnly(connection) : connection;
    const installPhase = phase;
    phase = FIRST_BOOT_PHASE;
    const firstBootDeps = { ...deps, now };
    const { apt, firstBoot } = await afterFirstBoot(remote, event, { budget, progress, check, deps: firstBootDeps });
    phase = installPhase;
    const report = await spec.run({
      event,
      check,
      remote,
      apt,
      os,
      progress,
      secrets,
      target: connection.target,
      user: target.user,
    });

    progress.timings.total = now() - started;
    return result(report, connection, os, { ...progress.timings }, apt.repairs, check, firstBoot);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    const worded = err instanceof ValidationError ? `${name}: ${message}` : `${name} failed while ${phase}: ${message}`;
    const clean = new InstallerError(printable(secrets.scrub(worded)), phase);
    progress.info(`failed after ${((now() - started) / 1000).toFixed(1)}s`);
    throw clean;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}
