// apt on the VM, modelled on Ansible's apt module: look at the state first, change only what differs,
// report per package. apt waits for the dpkg lock itself (DPkg::Lock::Timeout) and apt-lock.ts retries
// on top: the first boot's hold as long as the job may take, any other a bounded number of times.
// The kit gives every installer a ready `apt`; ensure-packages.ts is the per-package whole.

import { APT_LOCK_SETTINGS, type AptEventSettings } from "../../lib/shared/apt-lock-settings";
import { eventFields } from "../../lib/shared/settings";
import { command } from "../../lib/shared/shell-quote";
import { object, type Validator } from "../../lib/shared/validate";
import { type LockWaitContext, waitForFirstBootLocks, withLock } from "./apt-lock";
import {
  type Candidate,
  dpkgQueryAnswer,
  dpkgQueryCommand,
  type PackageState,
  parseAptCachePolicy,
} from "./apt-output";
import type { TransactionRecorder } from "./apt-transaction";
import { followedStep, recordedStep, type SeenFacts, TRANSACTION_OPTIONS } from "./apt-transaction";
import {
  afterUpdateFrom,
  afterUpdateLook,
  failOnUnreachable,
  LISTS_AGE_SCRIPT,
  listsAge,
  UPDATE_COMMAND,
  updateDue,
} from "./apt-update";
import type { DpkgHealth } from "./dpkg-health";
import { repairDpkg } from "./dpkg-repair-run";
import { CommandError, type Remote, type RunResult, runLong } from "./exec";
import { FirstBootClock } from "./first-boot";
import { type LockHolder, readLockHolders } from "./lock-holders";
import type { Progress } from "./progress";
import { followedByLook, lookAtEnd, type Probe } from "./vm-facts";

/** An install's options: downgrades allowed; probes read in the look after it (with a recorder). */
type InstallOptions = { allowDowngrades?: boolean; also?: readonly Probe[] };
type Installed = RunResult & { seen?: SeenFacts };

// ---------------------------------------------------------------------------------------------------
// Settings: the event's optional `apt` object (declared in lib/shared/apt-lock-settings.ts).

export interface AptSettings {
  lockTimeoutSec: number;
  lockAttempts: number;
  lockRetryDelaySec: number;
  installTimeoutSec: number;
  firstBootWaitSec: number;
}

/** 5 tries 15 s apart outlast an unattended-upgrades run; each apt-get also waits 30 s on its own. */
export const DEFAULT_APT: AptSettings = {
  lockTimeoutSec: APT_LOCK_SETTINGS.lockTimeoutSec.default,
  lockAttempts: APT_LOCK_SETTINGS.lockAttempts.default,
  lockRetryDelaySec: APT_LOCK_SETTINGS.lockRetryDelaySec.default,
  installTimeoutSec: APT_LOCK_SETTINGS.installTimeoutSec.default,
  firstBootWaitSec: APT_LOCK_SETTINGS.firstBootWaitSec.default,
};

/** Validator for the event's `apt` key; defaults filled in. */
export const aptEventSettings: Validator<AptEventSettings> = object(eventFields(APT_LOCK_SETTINGS));

/** The event's `apt` key as `Apt` takes it; what it leaves out gets the declared default. */
export function resolveAptSettings(settings: Partial<AptEventSettings> = {}): AptSettings {
  return {
    lockTimeoutSec: settings.lock_timeout_sec ?? DEFAULT_APT.lockTimeoutSec,
    lockAttempts: settings.lock_attempts ?? DEFAULT_APT.lockAttempts,
    lockRetryDelaySec: settings.lock_retry_delay_sec ?? DEFAULT_APT.lockRetryDelaySec,
    installTimeoutSec: settings.install_timeout_sec ?? DEFAULT_APT.installTimeoutSec,
    firstBootWaitSec: settings.first_boot_wait_sec ?? DEFAULT_APT.firstBootWaitSec,
  };
}

// ---------------------------------------------------------------------------------------------------
// Talking to apt on the VM.

export interface AptOptions {
  /** Retry notices and steps go here. */
  progress?: Progress;
  /** Replaceable in tests. */
  sleep?: (ms: number) => Promise<void>;
  /**
   * Check mode (check-mode.ts): update() runs no apt-get update, a dpkg needing repair is only recorded
   * in `repairs`, and install() / remove() are refused. @default false
   */
  check?: boolean;
  /** How long the first boot is waited for (first-boot.ts); the kit gives the job's. @default the cap alone */
  clock?: FirstBootClock;
}

export interface AptUpdateOutcome {
  ran: boolean;
  /** Why it ran or not, for progress and the result. */
  reason: string;
}

/** Messages stay English (parsed) while the VM's own locale settings (LC_CTYPE ...) stay as they are. */
const QUERY_ENV = { LC_ALL: "C" };

const INSTALL_ENV = { DEBIAN_FRONTEND: "noninteractive", LC_MESSAGES: "C", LANGUAGE: "" };
/** apt's words when dpkg itself was interrupted under it. */
const DPKG_DIED = /dpkg was interrupted|Sub-process \/usr\/bin\/dpkg (received signal|exited unexpectedly)/;
/** apt's words when dpkg ran to its end but failed on a package (a maintainer script, most often). */
const DPKG_FAILED = /Sub-process \/usr\/bin\/dpkg returned an error code/;

export class Apt {
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly clock: FirstBootClock;
  private health?: Promise<void>;
  /** apt-cache policy read after the update, for the names asked: candidates() answers it once. */
  private offered?: { names: Set<string>; offers: Map<string, Candidate> };
  private recorder?: TransactionRecorder;
  /** What this run repaired before its apt work ("repaired dpkg: ..."), for the result's `changes`. */
  readonly repairs: string[] = [];

  constructor(
    readonly remote: Remote,
    readonly settings: AptSettings = DEFAULT_APT,
    private readonly opts: AptOptions = {},
  ) {
    this.sleep = opts.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    const { progress } = opts;
    this.clock = opts.clock ?? new FirstBootClock({ capSec: settings.firstBootWaitSec, sleep: this.sleep, progress });
  }

  /** Where steps and retry notices are reported, if anywhere. */
  get progress(): Progress | undefined {
    return this.opts.progress;
  }

  /** dpkg's view of each name (one dpkg-query for all). */
  async query(names: string[]): Promise<Map<string, PackageState>> {
    if (names.length === 0) return new Map();
    const result = await this.remote.run(dpkgQueryCommand(names), {
      check: false,
      env: QUERY_ENV,
      label: "dpkg-query",
      timeoutMs: 60_000,
    });
    return dpkgQueryAnswer(result.stdout, result.code, result.stderr, names);
  }

  /** Seconds since the lists were refreshed (apt-update.ts); undefined when there are none (lists deleted). */
  async listsAgeSec(): Promise<number | undefined> {
    const r = await this.remote.run(LISTS_AGE_SCRIPT, { env: QUERY_ENV, label: "apt lists age", timeoutMs: 30_000 });
    return listsAge(r.stdout);
  }

  /**
   * `apt-get update`, unless `cacheValidSec` is given and the lists are younger than that (or in check mode).
   * The look after it, in the same exec, reads dpkg's health when this run has not looked yet, and apt-cache
   * policy of `policyOf` (what candidates() of those names then answers without an exec of its own).
   */
  async update(opts: { cacheValidSec?: number; policyOf?: readonly string[] } = {}): Promise<AptUpdateOutcome> {
    if (this.opts.check) {
      await this.ensureDpkgHealthy();
      return { ran: false, reason: "check mode: the package lists are read as they are, not refreshed" };
    }
    if (opts.cacheValidSec !== undefined) {
      const age = await this.listsAgeSec();
      if (!updateDue(age, opts.cacheValidSec)) {
        return {
          ran: false,
          reason: `package lists are ${age}s old, younger than cache_valid_sec ${opts.cacheValidSec}`,
        };
      }
    }
    const fresh = this.health === undefined;
    const look = afterUpdateLook({ health: fresh, names: opts.policyOf ?? [] });
    const updated = await this.withLock("apt-get update", () =>
      runLong(this.remote, followedByLook(UPDATE_COMMAND, look), {
        env: QUERY_ENV,
        label: "apt-get update",
        timeoutMs: 300_000,
      }),
    );
    const { before, facts } = lookAtEnd(look, updated.stdout);
    failOnUnreachable(`${before}\n${updated.stderr}`);
    const seen = facts ? afterUpdateFrom(look, (name) => facts.get(name)) : {};
    if (seen.offers) this.offered = { names: new Set(opts.policyOf), offers: seen.offers };
    // Nobody held a lock as dpkg was read: that look stands for the one before the first apt work.
    if (fresh && seen.health) this.health ??= this.repair(seen.health);
    await this.ensureDpkgHealthy();
    return {
      ran: true,
      reason:
        opts.cacheValidSec === undefined ? "update requested" : "package lists older than cache_valid_sec or missing",
    };
  }

  /** What the repositories offer for each name (one apt-cache policy for all). */
  async candidates(names: string[]): Promise<Map<string, Candidate>> {
    if (names.length === 0) return new Map();
    const kept = this.offered;
    this.offered = undefined;
    if (kept && names.every((n) => kept.names.has(n))) return kept.offers;
    const result = await this.remote.run(command("apt-cache", "policy", ...names), {
      env: QUERY_ENV,
      label: "apt-cache policy",
      timeoutMs: 60_000,
    });
    return parseAptCachePolicy(result.stdout);
  }

  /** The apt-get install command line for `specs` (name or name=version). */
  installCommand(specs: string[], opts: { allowDowngrades?: boolean } = {}, extra: string[] = []): string {
    return command(
      "apt-get",
      "install",
      "-y",
      "-q",
      ...extra,
      "-o",
      `DPkg::Lock::Timeout=${this.settings.lockTimeoutSec}`,
      // Keep the VM's changed config files and take the package's default otherwise: never a prompt.
      "-o",
      "Dpkg::Options::=--force-confdef",
      "-o",
      "Dpkg::Options::=--force-confold",
      ...(opts.allowDowngrades ? ["--allow-downgrades"] : []),
      ...specs,
    );
  }

  /**
   * `apt-get install -y` of `specs`, noninteractive, with the lock retry. Throws CommandError on failure.
   * With a recorder, `also` is read in the look after the install (the transaction's), its answers in `seen`.
   */
  async install(specs: string[], opts: InstallOptions = {}): Promise<Installed> {
    await this.ensureDpkgHealthy();
    const once = () => this.withLock("apt-get install", () => this.installOnce(specs, opts));
    try {
      return await once();
    } catch (err) {
      // dpkg died under this very install (killed, out of memory): repair what it left, then once more.
      if (!(err instanceof CommandError) || err.code === null) throw err;
      const said = `${err.stderr}\n${err.stdout}`;
      this.health = undefined;
      if (DPKG_DIED.test(said)) {
        await this.ensureDpkgHealthy();
        return once();
      }
      if (!DPKG_FAILED.test(said)) throw err;
      // A maintainer script failed or was killed: a package the request did not name (a trigger's, a
      // dependency's) may be left half-configured while the named ones look installed, and no later run
      // would look again. Repaired once; when nothing was to repair or the repair fails, apt's own error
      // stands (per package, as before) and later installs of this run do not repeat the repair.
      const before = this.repairs.length;
      const repaired = await this.ensureDpkgHealthy().then(
        () => this.repairs.length > before,
        () => false,
      );
      this.health = Promise.resolve();
      if (!repaired) throw err;
      return once();
    }
  }

  /**
   * Hands what each apt-get install of this Apt brought (apt-transaction.ts: its own dpkg's record, whatever
   * its outcome) to `recorder`. A recorder that fails fails the install when apt-get succeeded.
   */
  recordTransactions(recorder: TransactionRecorder): void {
    this.recorder = recorder;
  }

  /** One apt-get install; with a recorder, as a transaction whose record goes to it. */
  private async installOnce(specs: string[], opts: InstallOptions): Promise<Installed> {
    const recorder = this.recorder;
    const line = this.installCommand(specs, opts, recorder ? TRANSACTION_OPTIONS : []);
    const how = {
      env: INSTALL_ENV,
      label: `apt-get install ${specs.join(" ")}`,
      timeoutMs: this.settings.installTimeoutSec * 1000,
    };
    if (!recorder) return runLong(this.remote, line, how);
    const also = opts.also ?? [];
    const { run, answered } = followedStep(this.remote, line, how, [...recorder.probes, ...also]);
    const { result, seen } = await recordedStep(this.remote, run, recorder, "apt-get install", also, answered);
    return { ...result, seen };
  }

  /**
   * `apt-get remove -y` of `names` (not purge: configuration and data stay), with the lock retry.
   * Returns every package apt actually removed, which includes what depended on them.
   */
  async remove(names: string[]): Promise<string[]> {
    await this.ensureDpkgHealthy();
    const result = await this.withLock("apt-get remove", () =>
      runLong(
        this.remote,
        command("apt-get", "remove", "-y", "-q", "-o", `DPkg::Lock::Timeout=${this.settings.lockTimeoutSec}`, ...names),
        {
          env: INSTALL_ENV,
          label: `apt-get remove ${names.join(" ")}`,
          timeoutMs: this.settings.installTimeoutSec * 1000,
        },
      ),
    );
    const removed = [...result.stdout.matchAll(/^Removing (\S+?)(?::\S+)? \(/gm)].map((m) => m[1]);
    return removed.length ? [...new Set(removed)] : names;
  }

  /**
   * Before the first apt work of a run: when dpkg was interrupted or left packages in between states,
   * finish that (dpkg-repair-run.ts) and record it in `repairs`; fail naming the packages, dpkg's last
   * lines and the command a person would run when dpkg is still not clean. Looked at once per run.
   */
  ensureDpkgHealthy(): Promise<void> {
    // The first boot's apt (cloud-init's, apt-daily's) is waited for before dpkg is even looked at.
    this.health ??= this.firstBootLocks().then(() => this.repair());
    return this.health;
  }

  /** dpkg-repair-run.ts on what `seen` says (read after the update), or on a look of its own. */
  private repair(seen?: DpkgHealth): Promise<void> {
    return repairDpkg({
      remote: this.remote,
      settings: this.settings,
      check: !!this.opts.check,
      progress: this.opts.progress,
      withLock: (what, op) => this.withLock(what, op),
      repaired: (line) => this.repairs.push(line),
      record: this.recorder,
      seen,
    });
  }

  /** Who holds apt's locks right now, with their units (lock-holders.ts; needs neither fuser nor lsof on the VM). */
  lockHolders(): Promise<LockHolder[]> {
    return readLockHolders(this.remote);
  }

  private lockContext(): LockWaitContext {
    const { remote, settings, clock, sleep } = this;
    return { remote, settings, clock, progress: this.opts.progress, sleep };
  }

  /** A lock the first boot holds, waited for before the first apt step (not in a check: it takes no lock). */
  private firstBootLocks(): Promise<void> {
    return this.opts.check ? Promise.resolve() : waitForFirstBootLocks(this.lockContext(), "before the first apt step");
  }

  /** Runs `op` (an apt command) through apt-lock.ts's waits: the first boot's as long as allowed, others bounded. */
  withLock<T>(what: string, op: () => Promise<T>): Promise<T> {
    return withLock(this.lockContext(), what, op);
  }
}
