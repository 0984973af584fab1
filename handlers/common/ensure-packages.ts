// The Ansible-apt whole: make sure these packages are installed, reporting per package.
import { parsePackageSpec } from "../../lib/shared/names";
import type { Apt, AptUpdateOutcome } from "./apt";
import { aptFailureReason, candidateProblem, dpkgQueryAnswer, dpkgQueryCommand, type PackageState } from "./apt-output";
import type { SeenFacts } from "./apt-transaction";
import { updateDue } from "./apt-update";
import { CommandError } from "./exec";
import { stepIf } from "./progress";
import type { Fact, Probe } from "./vm-facts";

export interface EnsureOptions {
  /** Run apt-get update before installing (only when something is to be installed). */
  update: boolean;
  /** With update: skip it when the lists are younger than this many seconds. */
  cacheValidSec?: number;
  /**
   * Read in the look right after the install (the transaction's, with the packages' own verify: one exec),
   * their answers in the outcome's `seen`; undefined there when none was read (nothing to install, no record).
   */
  also?: readonly Probe[];
  /** packagesProbe's answer for these specs from an earlier look (the kit's first), instead of a dpkg-query. */
  early?: Fact;
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
  /** Previews only (approximatePreview, exactPreview): the specs a run would install (in the order asked). */
  wouldInstall: string[];
  /** The answers to `also` after the last install, when it was read (EnsureOptions.also). */
  seen?: SeenFacts;
}

/** A package asked for: the spec as given, and its parts. */
export interface Wanted {
  spec: string;
  name: string;
  version?: string;
}

/** A progress step when the Apt has a Progress, else just the work. */
function stepper(apt: Apt) {
  return <T>(label: string, timing: string, fn: () => Promise<T>) => stepIf(apt.progress, label, fn, timing);
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The specs, parsed (the event's rule has already checked them). */
export function wantedOf(specs: string[]): Wanted[] {
  return specs.map((spec): Wanted => {
    const parsed = parsePackageSpec(spec);
    if (!parsed)
      throw new Error(`ensurePackages: ${JSON.stringify(spec)} is not a package spec (validate the event first)`);
    return { spec, ...parsed };
  });
}

/** An outcome before anything was decided. */
export function emptyOutcome(): EnsureOutcome {
  const update = { ran: false, reason: "" };
  return { installed: [], already_installed: [], failed: [], versions: {}, changed: false, update, wouldInstall: [] };
}

/** The name of packagesProbe's answer in a look. */
export const PACKAGES_PROBE = "packages";
/** The name of the verify's dpkg-query in the look after an install. */
const INSTALLED_PROBE = "installed";

/** dpkg's view of `wanted` as a probe of the kit's first look (installer-model.ts firstLook). */
export function packagesProbe(wanted: readonly Wanted[]): Probe {
  return {
    name: PACKAGES_PROBE,
    command: dpkgQueryCommand(wanted.map((w) => w.name)),
    writer: "root",
    use: "which of the packages asked for dpkg has, at which version: what to install",
  };
}

/** dpkg's view of what was just installed, read in the look after the install (apt-transaction.ts). */
export function verifyProbe(wanted: readonly Wanted[]): Probe {
  return { ...packagesProbe(wanted), name: INSTALLED_PROBE, use: "dpkg's word on the packages just installed" };
}

/**
 * What dpkg says of `wanted` now (one dpkg-query, read-only), or what it said in the kit's first look
 * (`early`, packagesProbe's answer) when that look read it and dpkg-query answered.
 */
export function lookAtPackages(apt: Apt, wanted: Wanted[], early?: Fact): Promise<Map<string, PackageState>> {
  const names = wanted.map((w) => w.name);
  const label = `checking ${plural(wanted.length, "package", "packages")} with dpkg-query`;
  if (early && early.code <= 1) {
    apt.progress?.info(`${label}: read in the first look`);
    return Promise.resolve(dpkgQueryAnswer(early.text, early.code, "", names));
  }
  return stepper(apt)(label, "check", () => apt.query(names));
}

/**
 * The packages still to install (pure); those already there at the wanted version go to `outcome`.
 * Says which in a progress line.
 */
export function stillNeeded(
  apt: Apt,
  wanted: Wanted[],
  before: Map<string, PackageState>,
  outcome: EnsureOutcome,
): Wanted[] {
  const needed = wanted.filter((w) => !alreadyThere(w, before.get(w.name)!, outcome));
  if (needed.length === 0) {
    outcome.update = { ran: false, reason: "nothing to install" };
    const all = plural(wanted.length, "package is", "packages are");
    apt.progress?.info(`nothing to do: all ${all} already installed (${wanted.map((w) => w.name).join(", ")})`);
    return needed;
  }
  const already = outcome.already_installed.length ? `; already installed: ${outcome.already_installed.join(" ")}` : "";
  apt.progress?.info(`to install: ${needed.map((w) => w.spec).join(" ")}${already}`);
  return needed;
}

/**
 * Check state -> update if needed -> check candidates -> install what is missing -> verify each.
 * One bad package does not stop the others: unknown names and missing versions fail alone, and when
 * the batch install fails the packages are retried one by one so each gets its own reason.
 * Lock trouble (AptLockError) and failures of apt-get update are not per-package: they throw.
 */
export async function ensurePackages(apt: Apt, specs: string[], opts: EnsureOptions): Promise<EnsureOutcome> {
  const wanted = wantedOf(specs);
  const outcome = emptyOutcome();
  const before = await lookAtPackages(apt, wanted, opts.early);
  const needed = stillNeeded(apt, wanted, before, outcome);
  if (needed.length === 0) return outcome;
  return installNeeded(apt, { wanted, needed, before }, opts, outcome);
}

/**
 * A check's preview of ensurePackages (installer-model.ts preview), through the look-only Apt: what a run
 * would install, and what the lists as they are cannot offer. `early` as in EnsureOptions.
 */
export async function previewInstall(apt: Apt, specs: string[], early?: Fact): Promise<EnsureOutcome> {
  const wanted = wantedOf(specs);
  const outcome = emptyOutcome();
  const needed = stillNeeded(apt, wanted, await lookAtPackages(apt, wanted, early), outcome);
  return needed.length ? approximatePreview(apt, needed, outcome) : outcome;
}

/** Update, candidates, install, verify: the part of ensurePackages that changes the VM. */
export async function installNeeded(
  apt: Apt,
  { wanted, needed, before }: { wanted: Wanted[]; needed: Wanted[]; before: Map<string, PackageState> },
  opts: EnsureOptions,
  outcome: EnsureOutcome,
): Promise<EnsureOutcome> {
  outcome.update = await refreshLists(apt, opts, needed);
  const installable = await installableOf(apt, needed, opts, outcome);
  const installed = installable.length ? await install(apt, installable, before, opts.also ?? []) : undefined;
  outcome.seen = installed?.seen;
  await verify(apt, installable, installed?.errors ?? new Map<string, string>(), outcome, installed?.verified);
  outcome.changed = outcome.installed.length > 0;
  // Report in the order asked, whatever order the steps found them in.
  const order = new Map(wanted.map((w, i) => [w.name, i]));
  outcome.failed.sort((a, b) => order.get(a.name)! - order.get(b.name)!);
  return outcome;
}

/**
 * A preview of a run that refreshes the lists first (refreshesLists): what it would install, and (in `failed`)
 * what the VM's lists as they are cannot offer, which that run may still install once they are fresh. `apt` is
 * the look-only one (a check's): its update only looks at dpkg's health, so a repair due is foreseen.
 */
export async function approximatePreview(apt: Apt, needed: Wanted[], outcome: EnsureOutcome): Promise<EnsureOutcome> {
  outcome.update = await apt.update(); // the look-only Apt: dpkg's health looked at, nothing run
  const offers = await stepper(apt)("apt-cache policy (the lists as they are)", "candidates", () =>
    apt.candidates(needed.map((w) => w.name)),
  );
  for (const w of needed) {
    const problem = candidateProblem(w, offers.get(w.name));
    if (problem)
      outcome.failed.push({
        name: w.name,
        reason: `${problem} in the VM's current package lists (a real run refreshes them first)`,
      });
  }
  outcome.wouldInstall = needed.map((w) => w.spec);
  return outcome;
}

/**
 * A preview of a run with `opts` that does not refresh the lists (refreshesLists), so installs from these very
 * lists: `failed` is what it fails, in its words, and `wouldInstall` the rest. `apt` is the look-only one.
 */
export async function exactPreview(apt: Apt, needed: Wanted[], outcome: EnsureOutcome, opts: EnsureOptions) {
  const installable = await installableOf(apt, needed, opts, outcome);
  // Such a run looks at dpkg's health (and repairs it) only with its first apt work: the install, if any.
  if (installable.length) await apt.ensureDpkgHealthy();
  outcome.wouldInstall = installable.map((w) => w.spec);
  return outcome;
}

/** Already installed at the wanted version: noted as such in `outcome`. */
function alreadyThere(w: Wanted, state: PackageState, outcome: EnsureOutcome): boolean {
  const ok = state.installed && (w.version === undefined || state.version === w.version);
  if (ok) {
    outcome.already_installed.push(w.name);
    outcome.versions[w.name] = state.version ?? "";
  }
  return ok;
}

/**
 * Whether a run with `opts` refreshes the lists before installing (one look at their age when cacheValidSec
 * is set): when not, what they offer now is what it installs from.
 */
export async function refreshesLists(apt: Apt, opts: EnsureOptions): Promise<boolean> {
  return opts.update && (opts.cacheValidSec === undefined || updateDue(await apt.listsAgeSec(), opts.cacheValidSec));
}

/** Fresh package lists, unless asked not to or they are fresh enough; `needed`'s candidates read with them. */
async function refreshLists(apt: Apt, opts: EnsureOptions, needed: Wanted[]): Promise<AptUpdateOutcome> {
  if (!opts.update) return { ran: false, reason: "update: false" };
  const label =
    opts.cacheValidSec === undefined
      ? "apt-get update"
      : `apt-get update unless the lists are younger than ${opts.cacheValidSec}s`;
  const update = await stepper(apt)(label, "apt_update", () =>
    apt.update({ cacheValidSec: opts.cacheValidSec, policyOf: needed.map((w) => w.name) }),
  );
  if (!update.ran) apt.progress?.info(`apt-get update skipped: ${update.reason}`);
  return update;
}

/** Which of `needed` apt can install at all; the others go to `outcome.failed` with the reason. */
async function installableOf(
  apt: Apt,
  needed: Wanted[],
  opts: EnsureOptions,
  outcome: EnsureOutcome,
): Promise<Wanted[]> {
  const offers = await stepper(apt)("apt-cache policy", "candidates", () => apt.candidates(needed.map((w) => w.name)));
  const installable = needed.filter((w) => {
    const problem = candidateProblem(w, offers.get(w.name));
    if (problem) outcome.failed.push({ name: w.name, reason: problem });
    return !problem;
  });
  if (outcome.failed.length > 0 && !opts.update && (await apt.listsAgeSec()) === undefined) {
    for (const f of outcome.failed)
      f.reason += " (update is false and the VM has no package lists: set update to true)";
  }
  return installable;
}

/**
 * One transaction, or one by one when it fails, so each failure has its own reason: name -> reason. The look
 * after it (with a recorder) reads dpkg's word on the batch (`verified`) and `also` (`seen`).
 */
async function install(
  apt: Apt,
  installable: Wanted[],
  before: Map<string, PackageState>,
  also: readonly Probe[],
): Promise<{ errors: Map<string, string>; verified?: Fact; seen?: SeenFacts }> {
  const errors = new Map<string, string>();
  const downgrade = (w: Wanted) => w.version !== undefined && before.get(w.name)!.installed;
  const batch = installable.map((w) => w.spec);
  const verify = verifyProbe(installable);
  let verified: Fact | undefined;
  let seen: SeenFacts | undefined;
  await stepper(apt)(`apt-get install ${batch.join(" ")}`, "apt_install", async () => {
    try {
      const done = await apt.install(batch, {
        allowDowngrades: installable.some(downgrade),
        also: [verify, ...also],
      });
      verified = done.seen?.(INSTALLED_PROBE);
      seen = done.seen;
    } catch (err) {
      // Only an apt that ran and said no is a per-package matter; a timeout or a lost connection
      // (no exit code) would only repeat for each package.
      if (!(err instanceof CommandError) || err.code === null) throw err;
      if (installable.length === 1) {
        errors.set(installable[0].name, aptFailureReason(err));
        return;
      }
      apt.progress?.info(
        `apt-get install of all ${installable.length} failed (${aptFailureReason(err)}); installing one by one`,
      );
      for (const w of installable) {
        try {
          seen = (await apt.install([w.spec], { allowDowngrades: downgrade(w), also })).seen;
        } catch (one) {
          if (!(one instanceof CommandError) || one.code === null) throw one;
          errors.set(w.name, aptFailureReason(one));
        }
      }
    }
  });
  return { errors, verified, seen };
}

const INTERRUPTED = " (an interrupted install: `sudo dpkg --configure -a` on the VM finishes it)";

/**
 * dpkg's word on what apt said it did: each package to `installed` or `failed`; `verified`: that word as the
 * look after the install read it (else one dpkg-query now).
 */
async function verify(
  apt: Apt,
  installable: Wanted[],
  installErrors: Map<string, string>,
  outcome: EnsureOutcome,
  verified?: Fact,
): Promise<void> {
  if (installable.length === 0) return;
  const names = installable.map((w) => w.name);
  if (verified && verified.code <= 1) apt.progress?.info("verifying with dpkg-query: read with the install's record");
  const after =
    verified && verified.code <= 1
      ? dpkgQueryAnswer(verified.text, verified.code, "", names)
      : await stepper(apt)("verifying with dpkg-query", "verify", () => apt.query(names));
  for (const w of installable) {
    const state = after.get(w.name)!;
    if (state.installed && (w.version === undefined || state.version === w.version)) {
      outcome.installed.push(w.name);
      outcome.versions[w.name] = state.version ?? "";
      continue;
    }
    const broken = ["half-configured", "half-installed", "unpacked", "triggers-awaited", "triggers-pending"].includes(
      state.status,
    );
    const seen = state.installed
      ? `version ${state.version}, not ${w.version}`
      : `status ${state.status}${broken ? INTERRUPTED : ""}`;
    outcome.failed.push({
      name: w.name,
      reason: installErrors.get(w.name) ?? `apt-get reported success but dpkg shows ${seen}`,
    });
  }
}
