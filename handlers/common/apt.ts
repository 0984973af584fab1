// apt on the VM, modelled on Ansible's apt module: look at the state first, change only what differs,
// report per package. Also what two installers on one host need: apt waits for the dpkg lock itself
// (DPkg::Lock::Timeout) and we retry on top of that; a lock that never frees names its holder.
//
// Typical use (install-packages does exactly this, install-docker/-postgres can too):
//   const apt = new Apt(remote, resolveAptSettings(event.apt), { progress });
//   const outcome = await ensurePackages(apt, ["git", "curl=7.88.1-10"], { update: true, cacheValidSec: 3600 });

import { CommandError, Remote, RunResult, tail } from "./exec";
import { parsePackageSpec } from "../../shared/names";
import { formatDuration, Progress } from "./progress";
import { command, quote } from "../../shared/shell-quote";
import { EventOf, eventFields, setting } from "../../shared/settings";
import { integer, object, Validator } from "../../shared/validate";

// ---------------------------------------------------------------------------------------------------
// Settings: the event's optional `apt` object.

/** The event's `apt` key: how apt-get waits for the dpkg lock and for an install. Event only. */
export const APT_LOCK_SETTINGS = {
  lockTimeoutSec: setting(integer(0, 3600), { event: "lock_timeout_sec", eventOnly: true, default: 30, doc: "How long one apt-get waits for the dpkg lock itself (-o DPkg::Lock::Timeout)." }),
  lockAttempts: setting(integer(1, 50), { event: "lock_attempts", eventOnly: true, default: 5, doc: "apt-get runs in all while the lock stays busy; then the error names the holder's pid and command." }),
  lockRetryDelaySec: setting(integer(0, 600), { event: "lock_retry_delay_sec", eventOnly: true, default: 15, doc: "Seconds between those runs." }),
  installTimeoutSec: setting(integer(10, 7200), { event: "install_timeout_sec", eventOnly: true, default: 600, doc: "Limit in seconds for one apt-get install, downloads included." }),
} as const;

/** The event's `apt` key once checked: every field filled in. */
export type AptEventSettings = EventOf<typeof APT_LOCK_SETTINGS>;

export interface AptSettings {
  lockTimeoutSec: number;
  lockAttempts: number;
  lockRetryDelaySec: number;
  installTimeoutSec: number;
}

/** 5 tries 15 s apart outlast an unattended-upgrades run; each apt-get also waits 30 s on its own. */
export const DEFAULT_APT: AptSettings = {
  lockTimeoutSec: APT_LOCK_SETTINGS.lockTimeoutSec.default,
  lockAttempts: APT_LOCK_SETTINGS.lockAttempts.default,
  lockRetryDelaySec: APT_LOCK_SETTINGS.lockRetryDelaySec.default,
  installTimeoutSec: APT_LOCK_SETTINGS.installTimeoutSec.default,
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
  };
}

// ---------------------------------------------------------------------------------------------------
// Parsers (pure, so the tests can feed them real tool output).

/** One package as dpkg sees it. */
export interface PackageState {
  name: string;
  /** True when dpkg's status is "installed" (fully configured). */
  installed: boolean;
  /** dpkg's state word: installed, not-installed, config-files, half-configured, unpacked, ... */
  status: string;
  /** Installed version, when there is one. */
  version?: string;
}

/**
 * Output of `dpkg-query -W -f='${Package}\t${Status}\t${Version}\n' NAMES...`. Names dpkg has never
 * heard of get no line; they come back as not-installed. With several architectures of one package
 * the installed one wins.
 */
export function parseDpkgQuery(stdout: string, names: string[]): Map<string, PackageState> {
  const states = new Map<string, PackageState>(names.map((name) => [name, { name, installed: false, status: "not-installed" }]));
  for (const line of stdout.split("\n")) {
    const [pkg, status, version] = line.split("\t");
    if (!pkg || status === undefined) continue;
    const name = pkg.split(":")[0];
    if (!states.has(name)) continue;
    const word = status.trim().split(/\s+/)[2] ?? "not-installed"; // "install ok installed" -> installed
    const state: PackageState = { name, installed: word === "installed", status: word };
    if (version && version.trim() && word !== "not-installed" && word !== "config-files") state.version = version.trim();
    if (!states.get(name)!.installed) states.set(name, state);
  }
  return states;
}

/** What the configured repositories offer for one package. */
export interface Candidate {
  name: string;
  /** The version apt would install; undefined for "(none)". */
  candidate?: string;
  /** Installed version; undefined for "(none)". */
  installed?: string;
  /** Every version in the version table (installable with name=version). */
  versions: string[];
}

/** Output of `apt-cache policy NAMES...` (LC_ALL=C). A name apt does not know has no block at all. */
export function parseAptCachePolicy(stdout: string): Map<string, Candidate> {
  const out = new Map<string, Candidate>();
  let current: Candidate | undefined;
  let inTable = false;
  const none = (v: string) => (v === "(none)" ? undefined : v);
  for (const line of stdout.split("\n")) {
    const header = /^(\S+):$/.exec(line);
    if (header) {
      current = { name: header[1], versions: [] };
      out.set(current.name, current);
      inTable = false;
      continue;
    }
    if (!current) continue;
    let m: RegExpExecArray | null;
    if ((m = /^\s+Installed: (.*)$/.exec(line))) current.installed = none(m[1].trim());
    else if ((m = /^\s+Candidate: (.*)$/.exec(line))) current.candidate = none(m[1].trim());
    else if (/^\s+Version table:/.test(line)) inTable = true;
    else if (inTable && (m = /^\s+(?:\*\*\*\s+)?(\S+)\s+(-?\d+)$/.exec(line))) current.versions.push(m[1]);
  }
  return out;
}

/** Why `name[=version]` cannot be installed given what apt offers; undefined when it can. */
export function candidateProblem(spec: { name: string; version?: string }, offer: Candidate | undefined): string | undefined {
  if (!offer) return "unknown package: apt on the VM knows no package of that name (check the spelling, or whether its repository is configured)";
  if (spec.version === undefined) {
    return offer.candidate ? undefined : "no installation candidate: apt knows the name but nothing installs it (a virtual or obsolete package? `apt-cache showpkg` on the VM lists what provides it)";
  }
  if (offer.versions.includes(spec.version)) return undefined;
  const close = offer.versions.find((v) => v.replace(/^[0-9]+:/, "") === spec.version);
  const available = offer.versions.length ? offer.versions.slice(0, 8).join(", ") : "none";
  return `version ${spec.version} is not available` + (close ? ` (did you mean ${close}?)` : "") + `; available: ${available}`;
}

/** True when apt or dpkg output says the lock is taken by someone else. */
export function isLockError(text: string): boolean {
  return /Could not get lock|Unable to acquire the dpkg frontend lock|Unable to lock (the )?(directory|administration directory)|(is )?locked by another process/.test(text);
}

/** The lines of an apt failure that explain it: errors and unmet dependencies, at most a few. */
export function aptFailureReason(result: { stdout: string; stderr: string }): string {
  const lines = `${result.stdout}\n${result.stderr}`.split("\n").map((l) => l.trim());
  const picked = lines.filter((l) => /^E: /.test(l) || /: (Pre-)?Depends: |: Breaks: |: Conflicts: /.test(l));
  return picked.length ? [...new Set(picked)].slice(0, 6).join("; ") : tail(result.stderr || result.stdout, 4).replace(/\n/g, "; ");
}

/** A process holding one of apt's locks. */
export interface LockHolder {
  lock: string;
  pid: number;
  command: string;
}

/** The files apt and dpkg lock, in the order they are taken. */
export const APT_LOCK_FILES = ["/var/lib/dpkg/lock-frontend", "/var/lib/dpkg/lock", "/var/lib/apt/lists/lock", "/var/cache/apt/archives/lock"];

/**
 * Pairs `stat -c '%n %i'` lines for the lock files with /proc/locks (whose 6th field is
 * maj:min:inode) to find which pids hold them. Blocked waiters ("->" lines) are not holders.
 * Matching is by inode only: the lock files all live on the root filesystem.
 */
export function parseLockTable(statOut: string, procLocks: string): { lock: string; pid: number }[] {
  const byInode = new Map<string, string>();
  for (const line of statOut.split("\n")) {
    const m = /^(\S+) ([0-9]+)$/.exec(line.trim());
    if (m) byInode.set(m[2], m[1]);
  }
  const found: { lock: string; pid: number }[] = [];
  for (const line of procLocks.split("\n")) {
    const fields = line.trim().split(/\s+/);
    if (fields.length < 6 || fields[1] === "->") continue;
    const pid = Number(fields[4]);
    const inode = fields[5].split(":")[2];
    const lock = inode !== undefined ? byInode.get(inode) : undefined;
    if (lock && pid > 0 && !found.some((f) => f.lock === lock && f.pid === pid)) found.push({ lock, pid });
  }
  return found;
}

/** apt's own "It is held by process 1234 (apt-get)" note, used when /proc/locks shows nothing. */
export function parseAptHolderNote(text: string): LockHolder | undefined {
  const m = /Could not get lock (\S+?)\.? It is held by process ([0-9]+) \(([^)]*)\)/.exec(text);
  return m ? { lock: m[1], pid: Number(m[2]), command: m[3] } : undefined;
}

export function describeHolders(holders: LockHolder[]): string {
  return holders.map((h) => `${h.lock} is held by pid ${h.pid} (${h.command || "command unknown"})`).join("; ");
}

/** The dpkg/apt lock stayed busy through every attempt. */
export class AptLockError extends Error {
  constructor(message: string, readonly holders: LockHolder[]) {
    super(message);
    this.name = "AptLockError";
  }
}

// ---------------------------------------------------------------------------------------------------
// Talking to apt on the VM.

export interface AptOptions {
  /** Retry notices and steps go here. */
  progress?: Progress;
  /** Replaceable in tests. */
  sleep?: (ms: number) => Promise<void>;
}

export interface AptUpdateOutcome {
  ran: boolean;
  /** Why it ran or not, for progress and the result. */
  reason: string;
}

/** Messages stay English (parsed) while the VM's own locale settings (LC_CTYPE ...) stay as they are. */
const QUERY_ENV = { LC_ALL: "C" };
const INSTALL_ENV = { DEBIAN_FRONTEND: "noninteractive", LC_MESSAGES: "C", LANGUAGE: "" };
const STAMP = "/var/lib/apt/periodic/update-success-stamp";

export class Apt {
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(readonly remote: Remote, readonly settings: AptSettings = DEFAULT_APT, private readonly opts: AptOptions = {}) {
    this.sleep = opts.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  /** Where steps and retry notices are reported, if anywhere. */
  get progress(): Progress | undefined {
    return this.opts.progress;
  }

  /** dpkg's view of each name (one dpkg-query for all). */
  async query(names: string[]): Promise<Map<string, PackageState>> {
    if (names.length === 0) return new Map();
    // Exit 1 only means "some name not found": that is an answer, not a failure.
    const result = await this.remote.run(`dpkg-query -W -f='\${Package}\\t\${Status}\\t\${Version}\\n' ${names.map(quote).join(" ")}`, {
      check: false, env: QUERY_ENV, label: "dpkg-query", timeoutMs: 60_000,
    });
    if (result.code > 1) throw new Error(`dpkg-query failed on the VM (exit ${result.code}): ${tail(result.stderr, 5)}`);
    return parseDpkgQuery(result.stdout, names);
  }

  /**
   * Seconds since the package lists were last refreshed, or undefined when there are none (a fresh
   * image with its lists deleted). Like Ansible: our stamp (or Ubuntu's update-notifier's) when there
   * is one, else the lists directory's time.
   */
  async listsAgeSec(): Promise<number | undefined> {
    const script =
      `now=$(date +%s); if ls /var/lib/apt/lists 2>/dev/null | grep -q _Packages; then ` +
      `if [ -e ${STAMP} ]; then t=$(stat -c %Y ${STAMP}); else t=$(stat -c %Y /var/lib/apt/lists); fi; echo "$now $t"; ` +
      `else echo "$now none"; fi`;
    const result = await this.remote.run(script, { env: QUERY_ENV, label: "apt lists age", timeoutMs: 30_000 });
    const m = /^([0-9]+) ([0-9]+|none)\s*$/.exec(result.stdout.trim());
    if (!m || m[2] === "none") return undefined;
    return Math.max(0, Number(m[1]) - Number(m[2]));
  }

  /** `apt-get update`, unless `cacheValidSec` is given and the lists are younger than that. */
  async update(opts: { cacheValidSec?: number } = {}): Promise<AptUpdateOutcome> {
    if (opts.cacheValidSec !== undefined) {
      const age = await this.listsAgeSec();
      if (age !== undefined && age < opts.cacheValidSec) {
        return { ran: false, reason: `package lists are ${age}s old, younger than cache_valid_sec ${opts.cacheValidSec}` };
      }
    }
    await this.withLock("apt-get update", () =>
      this.remote.run(`apt-get update -q && mkdir -p ${STAMP.replace(/\/[^/]+$/, "")} && touch ${STAMP}`, {
        sudo: true, env: QUERY_ENV, label: "apt-get update", timeoutMs: 300_000,
      }),
    );
    return { ran: true, reason: opts.cacheValidSec === undefined ? "update requested" : "package lists older than cache_valid_sec or missing" };
  }

  /** What the repositories offer for each name (one apt-cache policy for all). */
  async candidates(names: string[]): Promise<Map<string, Candidate>> {
    if (names.length === 0) return new Map();
    const result = await this.remote.run(command("apt-cache", "policy", ...names), { env: QUERY_ENV, label: "apt-cache policy", timeoutMs: 60_000 });
    return parseAptCachePolicy(result.stdout);
  }

  /** The apt-get install command line for `specs` (name or name=version). */
  installCommand(specs: string[], opts: { allowDowngrades?: boolean } = {}): string {
    return command(
      "apt-get", "install", "-y", "-q",
      "-o", `DPkg::Lock::Timeout=${this.settings.lockTimeoutSec}`,
      // Keep the VM's changed config files and take the package's default otherwise: never a prompt.
      "-o", "Dpkg::Options::=--force-confdef",
      "-o", "Dpkg::Options::=--force-confold",
      ...(opts.allowDowngrades ? ["--allow-downgrades"] : []),
      ...specs,
    );
  }

  /** `apt-get install -y` of `specs`, noninteractive, with the lock retry. Throws CommandError on failure. */
  async install(specs: string[], opts: { allowDowngrades?: boolean } = {}): Promise<RunResult> {
    return this.withLock("apt-get install", () =>
      this.remote.run(this.installCommand(specs, opts), {
        sudo: true, env: INSTALL_ENV, label: `apt-get install ${specs.join(" ")}`, timeoutMs: this.settings.installTimeoutSec * 1000,
      }),
    );
  }

  /**
   * `apt-get remove -y` of `names` (not purge: configuration and data stay), with the lock retry.
   * Returns every package apt actually removed, which includes what depended on them.
   */
  async remove(names: string[]): Promise<string[]> {
    const result = await this.withLock("apt-get remove", () =>
      this.remote.run(command("apt-get", "remove", "-y", "-q", "-o", `DPkg::Lock::Timeout=${this.settings.lockTimeoutSec}`, ...names), {
        sudo: true, env: INSTALL_ENV, label: `apt-get remove ${names.join(" ")}`, timeoutMs: this.settings.installTimeoutSec * 1000,
      }),
    );
    const removed = [...result.stdout.matchAll(/^Removing (\S+?)(?::\S+)? \(/gm)].map((m) => m[1]);
    return removed.length ? [...new Set(removed)] : names;
  }

  /** Who holds apt's locks right now (via /proc/locks: needs neither fuser nor lsof on the VM). */
  async lockHolders(): Promise<LockHolder[]> {
    const files = APT_LOCK_FILES.map(quote).join(" ");
    const table = await this.remote.run(`for f in ${files}; do [ -e "$f" ] && stat -c '%n %i' "$f"; done; echo '--- /proc/locks'; cat /proc/locks`, {
      sudo: true, check: false, env: QUERY_ENV, label: "finding the apt lock holder", timeoutMs: 30_000,
    });
    const [statOut, procLocks = ""] = table.stdout.split("--- /proc/locks\n");
    const held = parseLockTable(statOut, procLocks);
    if (held.length === 0) return [];
    const pids = [...new Set(held.map((h) => h.pid))];
    const names = await this.remote.run(
      `for p in ${pids.join(" ")}; do printf '%s\\t' "$p"; tr '\\000' ' ' < /proc/$p/cmdline 2>/dev/null; echo; done`,
      { sudo: true, check: false, label: "reading the lock holder's command", timeoutMs: 30_000 },
    );
    const cmdline = new Map<number, string>();
    for (const line of names.stdout.split("\n")) {
      const [pid, cmd] = line.split("\t");
      if (pid) cmdline.set(Number(pid), (cmd ?? "").trim());
    }
    return held.map((h) => ({ ...h, command: cmdline.get(h.pid) ?? "" }));
  }

  /**
   * Runs `op` (an apt command) and, while it fails because the lock is busy, runs it again after
   * lockRetryDelaySec, up to lockAttempts runs. Then throws AptLockError naming who holds the lock.
   */
  async withLock<T>(what: string, op: () => Promise<T>): Promise<T> {
    const { lockAttempts, lockRetryDelaySec } = this.settings;
    for (let attempt = 1; ; attempt++) {
      try {
        return await op();
      } catch (err) {
        if (!(err instanceof CommandError) || !isLockError(`${err.stderr}\n${err.stdout}`)) throw err;
        const holders = await this.lockHolders().catch(() => [] as LockHolder[]);
        const note = parseAptHolderNote(`${err.stderr}\n${err.stdout}`);
        if (holders.length === 0 && note) holders.push(note);
        const who = holders.length ? describeHolders(holders) : "no holder found any more (it was freed just now)";
        if (attempt >= lockAttempts) {
          throw new AptLockError(
            `${what}: the apt/dpkg lock stayed busy through ${lockAttempts} attempt${lockAttempts === 1 ? "" : "s"} ` +
              `(each waiting ${this.settings.lockTimeoutSec}s, ${lockRetryDelaySec}s apart): ${who}. ` +
              `Wait for that process to finish (often unattended-upgrades on a fresh VM; \`sudo systemctl stop unattended-upgrades\` stops it), ` +
              `then run the job again (raise run_id); apt.lock_attempts and apt.lock_timeout_sec wait longer.`,
            holders,
          );
        }
        this.opts.progress?.info(`${what}: lock busy: ${who}; attempt ${attempt + 1}/${lockAttempts} in ${formatDuration(lockRetryDelaySec * 1000)}`);
        await this.sleep(lockRetryDelaySec * 1000);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// The Ansible-like whole: make sure these packages are installed.

export interface EnsureOptions {
  /** Run apt-get update before installing (only when something is to be installed). */
  update: boolean;
  /** With update: skip it when the lists are younger than this many seconds. */
  cacheValidSec?: number;
}

export interface EnsureOutcome {
  /** Installed (or moved to the pinned version) by this run, and verified. */
  installed: string[];
  /** Already there at the wanted version: not touched. */
  already_installed: string[];
  failed: { name: string; reason: string }[];
  /** Installed version of every package in installed and already_installed. */
  versions: Record<string, string>;
  /** True when this run changed the VM. */
  changed: boolean;
  /** apt-get update: whether it ran and why. */
  update: AptUpdateOutcome;
}

/**
 * Check state -> update if needed -> check candidates -> install what is missing -> verify each.
 * One bad package does not stop the others: unknown names and missing versions fail alone, and when
 * the batch install fails the packages are retried one by one so each gets its own reason.
 * Lock trouble (AptLockError) and failures of apt-get update are not per-package: they throw.
 */
export async function ensurePackages(apt: Apt, specs: string[], opts: EnsureOptions): Promise<EnsureOutcome> {
  const progress = apt.progress;
  const step = <T>(label: string, timing: string, fn: () => Promise<T>) => (progress ? progress.step(label, fn, timing) : fn());
  const wanted = specs.map((spec) => {
    const parsed = parsePackageSpec(spec);
    if (!parsed) throw new Error(`ensurePackages: ${JSON.stringify(spec)} is not a package spec (validate the event first)`);
    return { spec, ...parsed };
  });
  const names = wanted.map((w) => w.name);

  // 1. What is there already.
  const before = await step(`checking ${names.length} package${names.length === 1 ? "" : "s"} with dpkg-query`, "check", () => apt.query(names));
  const outcome: EnsureOutcome = { installed: [], already_installed: [], failed: [], versions: {}, changed: false, update: { ran: false, reason: "" } };
  const needed = wanted.filter((w) => {
    const state = before.get(w.name)!;
    const ok = state.installed && (w.version === undefined || state.version === w.version);
    if (ok) {
      outcome.already_installed.push(w.name);
      outcome.versions[w.name] = state.version ?? "";
    }
    return !ok;
  });
  if (needed.length === 0) {
    outcome.update = { ran: false, reason: "nothing to install" };
    progress?.info(`nothing to do: all ${names.length} package${names.length === 1 ? " is" : "s are"} already installed (${names.join(", ")})`);
    return outcome;
  }
  progress?.info(`to install: ${needed.map((w) => w.spec).join(" ")}${outcome.already_installed.length ? `; already installed: ${outcome.already_installed.join(" ")}` : ""}`);

  // 2. Fresh package lists, unless asked not to or they are fresh enough.
  if (opts.update) {
    const label = opts.cacheValidSec === undefined ? "apt-get update" : `apt-get update unless the lists are younger than ${opts.cacheValidSec}s`;
    outcome.update = await step(label, "apt_update", () => apt.update({ cacheValidSec: opts.cacheValidSec }));
    if (!outcome.update.ran) progress?.info(`apt-get update skipped: ${outcome.update.reason}`);
  } else {
    outcome.update = { ran: false, reason: "update: false" };
  }

  // 3. Which of them apt can install at all.
  const offers = await step("apt-cache policy", "candidates", () => apt.candidates(needed.map((w) => w.name)));
  const installable = needed.filter((w) => {
    const problem = candidateProblem(w, offers.get(w.name));
    if (problem) outcome.failed.push({ name: w.name, reason: problem });
    return !problem;
  });
  if (outcome.failed.length > 0 && !opts.update && (await apt.listsAgeSec()) === undefined) {
    for (const f of outcome.failed) f.reason += " (update is false and the VM has no package lists: set update to true)";
  }

  // 4. Install: one transaction, or one by one when it fails, so each failure has its own reason.
  const installErrors = new Map<string, string>();
  if (installable.length > 0) {
    const allowDowngrades = installable.some((w) => w.version !== undefined && before.get(w.name)!.installed);
    const batch = installable.map((w) => w.spec);
    await step(`apt-get install ${batch.join(" ")}`, "apt_install", async () => {
      try {
        await apt.install(batch, { allowDowngrades });
      } catch (err) {
        // Only an apt that ran and said no is a per-package matter; a timeout or a lost connection
        // (no exit code) would only repeat for each package.
        if (!(err instanceof CommandError) || err.code === null) throw err;
        if (installable.length === 1) {
          installErrors.set(installable[0].name, aptFailureReason(err));
          return;
        }
        progress?.info(`apt-get install of all ${installable.length} failed (${aptFailureReason(err)}); installing one by one`);
        for (const w of installable) {
          try {
            await apt.install([w.spec], { allowDowngrades: w.version !== undefined && before.get(w.name)!.installed });
          } catch (one) {
            if (!(one instanceof CommandError) || one.code === null) throw one;
            installErrors.set(w.name, aptFailureReason(one));
          }
        }
      }
    });
  }

  // 5. Verify with dpkg what apt said it did.
  const after = installable.length ? await step("verifying with dpkg-query", "verify", () => apt.query(installable.map((w) => w.name))) : new Map<string, PackageState>();
  for (const w of installable) {
    const state = after.get(w.name)!;
    if (state.installed && (w.version === undefined || state.version === w.version)) {
      outcome.installed.push(w.name);
      outcome.versions[w.name] = state.version ?? "";
    } else {
      const broken = ["half-configured", "half-installed", "unpacked", "triggers-awaited", "triggers-pending"].includes(state.status);
      const seen = state.installed
        ? `version ${state.version}, not ${w.version}`
        : `status ${state.status}` + (broken ? " (an interrupted install: `sudo dpkg --configure -a` on the VM finishes it)" : "");
      outcome.failed.push({ name: w.name, reason: installErrors.get(w.name) ?? `apt-get reported success but dpkg shows ${seen}` });
    }
  }
  outcome.changed = outcome.installed.length > 0;
  // Report in the order asked, whatever order the steps found them in.
  const order = new Map(names.map((n, i) => [n, i]));
  outcome.failed.sort((a, b) => order.get(a.name)! - order.get(b.name)!);
  return outcome;
}
