// The installer model, Terraform's plan/apply split for one VM: an installer says how the VM is
// (inspect, read-only), what differs from what was asked (plan: pure, typed changes, their words
// included) and how each change is made (apply). The kit runs the loop and alone knows check mode: the
// same code stopped before the first apply, so a check's would_change is the next run's changes by
// construction (the words of the same Change objects, or their preview where only applying can know).

import type { SecretScrubber } from "../../lib/shared/secrets";
import type { Apt } from "./apt";
import { checkSummary } from "./check-mode";
import type { Remote } from "./exec";
import type { CommonEvent } from "./handler-input";
import type { InstallerReport } from "./installer-result";
import type { OsInfo } from "./os-release";
import type { Progress } from "./progress";
import type { Fact, Probe } from "./vm-facts";

export interface InstallerContext<E> {
  /** The validated event, defaults filled in. */
  event: E & CommonEvent;
  /** The VM: the real one for apply, the look-only one (check-mode.ts) for inspect, previews and a check. */
  remote: Remote;
  /** apt on the VM, with the event's `apt` settings (look-only where `remote` is). */
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

/** One difference between the VM and what was asked, and how it is put right. */
export interface Change<E = unknown, O extends ApplyOutcome = ApplyOutcome> {
  /** What sort of change, for code and the convergence guard ("install", "service", ...). */
  readonly kind: string;
  /** Its words: one line each in `changes` after a run, in `would_change` in a check. */
  readonly what: readonly string[];
  /** The difference seen that calls for it ("jq is not installed"), for progress and errors. */
  readonly why: string;
  /**
   * Later changes depend on what this one does (an apt update, a package install, a restart): after
   * it the kit inspects again and plans the rest from what the VM is then. @default false
   */
  readonly replan?: boolean;
  /** Makes the change on the VM (ctx.remote is the real one here). */
  apply(ctx: InstallerContext<E>): Promise<O | undefined>;
  /**
   * What only applying can know (what the lists offer, a key not yet fetched), foreseen read-only over the
   * look-only VM: a check reports its words where a run reports the outcome's. Absent: `what` stands.
   */
  preview?(ctx: InstallerContext<E>): Promise<Preview>;
}

/** A line the kit says in the progress; a warning also joins the result's warnings. */
export interface Note {
  readonly line: string;
  readonly warning?: boolean;
}

/** A check's foresight of one change: its words in would_change (else the change's), and what to say. */
export interface Preview {
  what?: readonly string[];
  notes?: readonly Note[];
}

/**
 * The changes that make the VM what the event asks, in the order they are applied, and what the plan says
 * beside them (warnings about the VM as it is). The kit says the notes of the plan it ends with: a check's
 * first, a run's last (the one it applied to the end).
 */
export interface Plan<E, O extends ApplyOutcome = ApplyOutcome> {
  changes: Change<E, O>[];
  notes?: readonly Note[];
}

/**
 * What applying a change learnt, when more than "done". `what`: the lines of what it did, when it did
 * only part of what was planned (a package apt refused) or more than a check can foresee; without it
 * the planned words are reported. Installers extend it with their own data for `report`.
 */
export interface ApplyOutcome {
  what?: readonly string[];
}

/** A change as it was applied, with what applying it said. */
export interface Applied<E, O extends ApplyOutcome> {
  change: Change<E, O>;
  outcome?: O;
}

/** What the installer's inspect gets: the VM through `lookOnly` (anything marked `mutates` is refused). */
export interface InspectContext<E, S = unknown> extends InstallerContext<E> {
  /** 0 for the first look; counts the looks after a `replan` change. */
  round: number;
  /**
   * Round 0 only: the answers of the model's `firstLook` probes, read in the kit's first look when the VM's
   * first boot was already over (else undefined: inspect reads for itself, after the wait).
   */
  firstLook?: (name: string) => Fact | undefined;
  /** After round 0: the look before and what was applied since, so what a change already read is not read again. */
  previous?: { state: S; applied: readonly Applied<E, ApplyOutcome>[] };
}

/**
 * Everything a run (or a check) saw and did, for `verify` and `report`. A report tells the VM as the last
 * look saw it and what was applied: in a check nothing was, and the kit puts the plan in would_change.
 */
export interface ModelRun<S, E, O extends ApplyOutcome, V = undefined> {
  event: E;
  /** The first look at the VM. */
  before: S;
  /** The last look (the first, unless a change asked to replan). */
  state: S;
  /** The first plan: a check's would_change. */
  planned: readonly Change<E, O>[];
  /** The plan the kit ended with (a check's first, a run's last): an installer's own plan type, as it made it. */
  lastPlan: Plan<E, O>;
  /** Every change applied, in order (none in a check). */
  applied: readonly Applied<E, O>[];
  /** How many of `applied` came after `state` was read (0: what it says of the VM still stands). */
  appliedSinceLook: number;
  /** What verify said (undefined without a verify, and in a check that did not run it). */
  verified?: V;
}

/** An installer in the model: the kit runs inspect -> plan -> (check: preview, stop) -> apply -> verify -> report. */
export interface InstallerModel<
  E,
  S,
  R extends InstallerReport = InstallerReport,
  O extends ApplyOutcome = ApplyOutcome,
  V = undefined,
> {
  /**
   * Probes that depend on the event alone, read in the kit's first look (with os-release, one SSH exec), so
   * a rerun that finds everything in place costs one exec over a long link. Their answers reach inspect.
   */
  firstLook?(event: E): readonly Probe[];
  /** How the VM is, as far as the plan and the report need it. Read-only: it runs through lookOnly. */
  inspect(ctx: InspectContext<E, S>): Promise<S>;
  /** Pure: the changes that make `state` what the event asks for (a bare list: no notes). */
  plan(state: S, event: E): Change<E, O>[] | Plan<E, O>;
  /** The proof after the changes (the daemon answers...); a run only, unless `verifyReadsOnly`. */
  verify?(ctx: InstallerContext<E>, run: ModelRun<S, E, O, V>): Promise<V>;
  /**
   * verify only reads (a login over TCP changes nothing on the VM): a check that finds nothing to change
   * runs it too, over the look-only VM, as the proof of the VM as it is. @default false
   */
  verifyReadsOnly?: boolean;
  /** The installer's own fields, status, summary and warnings; the kit fills `changes` from the words. */
  report(run: ModelRun<S, E, O, V>): Omit<R, "changes">;
}

/** At most this many looks after `replan` changes: a plan that needs more does not converge. */
export const MAX_REPLANS = 8;

/** A plan that would loop: a bug in the installer, never something to retry. */
class PlanDoesNotConverge extends Error {
  constructor(detail: string) {
    super(`${detail} (a bug in the installer: its plan does not converge; report it)`);
    this.name = "PlanDoesNotConverge";
  }
}

/** The lines a change reports once applied: what it said it did, else its planned words. */
export function appliedWords(applied: Applied<unknown, ApplyOutcome>): readonly string[] {
  return applied.outcome?.what ?? applied.change.what;
}

type Words = Pick<Change, "kind" | "what" | "why">;
const words = (change: Words) => `${change.kind}: ${change.what.join("; ") || change.why}`;
const same = (a: Words, b: Words) => a.kind === b.kind && a.what.join("\n") === b.what.join("\n");

/** The contexts the loop runs in: the real one for apply, the look-only one for inspect (and a check). */
export interface ModelContexts<E> {
  /** Check mode (the event's `check: true`): the kit stops before the first apply. */
  check: boolean;
  real: InstallerContext<E>;
  look: InstallerContext<E>;
  /** The first look's answers to `firstLook`'s probes, when they may stand for inspect's own reads. */
  firstLook?: (name: string) => Fact | undefined;
}

/** A bare list of changes as a plan without notes. */
function planOf<E, O extends ApplyOutcome>(plan: Change<E, O>[] | Plan<E, O>): Plan<E, O> {
  return Array.isArray(plan) ? { changes: plan } : plan;
}

/** The loop: see the file comment. Returns the installer's report with `changes` filled in. */
export async function runModel<E, S, R extends InstallerReport, O extends ApplyOutcome, V>(
  model: InstallerModel<E, S, R, O, V>,
  { check, real, look, firstLook }: ModelContexts<E>,
): Promise<R> {
  const before = await model.inspect({ ...look, round: 0, firstLook });
  const first = planOf(model.plan(before, real.event));
  const run: ModelRun<S, E, O, V> = {
    event: real.event,
    before,
    state: before,
    planned: first.changes,
    lastPlan: first,
    applied: [],
    appliedSinceLook: 0,
  };
  const ended = check ? await previewAll(first, look) : await applyAll(model, real, look, run, first);
  if (!check) Object.assign(run, ended.run);
  for (const note of ended.notes) real.progress.info(note.line);
  const proves = !check || (model.verifyReadsOnly === true && ended.changes.length === 0);
  const verified = model.verify && proves ? await model.verify(check ? look : real, run) : undefined;
  const reported = model.report({ ...run, verified });
  real.progress.once(check ? checkSummary(ended.changes, reported.summary) : reported.summary);
  const warnings = [...ended.notes.filter((n) => n.warning).map((n) => n.line), ...(reported.warnings ?? [])];
  return { ...reported, warnings, changes: ended.changes } as R;
}

/** How the loop ended: the lines for `changes` (a check's would_change), the notes to say, a run's record. */
interface Ended<S, E, O extends ApplyOutcome> {
  changes: string[];
  notes: readonly Note[];
  run?: { state: S; applied: Applied<E, O>[]; appliedSinceLook: number; lastPlan: Plan<E, O> };
}

/** A check: each change's preview, in order, over the look-only VM; nothing is applied. */
async function previewAll<E, S, O extends ApplyOutcome>(
  plan: Plan<E, O>,
  look: InstallerContext<E>,
): Promise<Ended<S, E, O>> {
  const changes: string[] = [];
  const notes = [...(plan.notes ?? [])];
  for (const change of plan.changes) {
    const preview = change.preview ? await change.preview(look) : undefined;
    changes.push(...(preview?.what ?? change.what));
    notes.push(...(preview?.notes ?? []));
  }
  return { changes, notes };
}

/** Applies the plan in order, looking and planning again after each `replan` change. */
async function applyAll<E, S, R extends InstallerReport, O extends ApplyOutcome, V>(
  model: InstallerModel<E, S, R, O, V>,
  real: InstallerContext<E>,
  look: InstallerContext<E>,
  run: ModelRun<S, E, O, V>,
  first: Plan<E, O>,
): Promise<Ended<S, E, O>> {
  const applied: Applied<E, O>[] = [];
  let state = run.state;
  let plan = first;
  for (let round = 1; ; round++) {
    const thisRound: Change<E, O>[] = [];
    const replanAfter = await applyUntilReplan(plan.changes, real, applied, thisRound);
    if (!replanAfter) {
      const changes = applied.flatMap(appliedWords);
      return {
        changes,
        notes: plan.notes ?? [],
        run: { state, applied, appliedSinceLook: thisRound.length, lastPlan: plan },
      };
    }
    if (round > MAX_REPLANS)
      throw new PlanDoesNotConverge(`still planning after ${MAX_REPLANS} looks (last: ${words(replanAfter)})`);
    state = await model.inspect({ ...look, round, previous: { state, applied: applied.slice(-thisRound.length) } });
    plan = planOf(model.plan(state, real.event));
    const again = plan.changes.find((c) => thisRound.some((done) => same(done, c)));
    if (again) throw new PlanDoesNotConverge(`"${words(again)}" is planned again right after it was applied`);
  }
}

/** Applies changes in order up to and including the first `replan` one; returns that one, if any. */
async function applyUntilReplan<E, O extends ApplyOutcome>(
  plan: readonly Change<E, O>[],
  ctx: InstallerContext<E>,
  applied: Applied<E, O>[],
  thisRound: Change<E, O>[],
): Promise<Change<E, O> | undefined> {
  for (const change of plan) {
    const outcome = await change.apply(ctx);
    applied.push({ change, outcome });
    thisRound.push(change);
    if (change.replan) return change;
  }
  return undefined;
}
