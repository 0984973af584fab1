// `state: "absent"` in the kit's model: an installer's present model and its absent one behind one
// model, chosen by the event, so check mode, the convergence guard and the result shape are the kit's
// for both. The generic absent model takes back what package-inventory.ts recorded (removal.ts); an
// installer with grants of its own puts its changes before those (install-docker/absent.ts).
import type { InstallerState } from "../../lib/shared/removal-settings";
import {
  type ApplyOutcome,
  appliedWords,
  type Change,
  type InstallerContext,
  type InstallerModel,
  type ModelRun,
} from "./installer-model";
import type { InstallerReport } from "./installer-result";
import { lookForRemoval, planRemoval, type RemovalLook, type RemovalMode, removalWarnings } from "./removal";

/** Every absent report: what was (or, in a check, would be) taken off, and what was kept and why. */
export interface AbsentReport extends InstallerReport {
  state: "absent";
  /** Packages removed (purged) by this run; none in a check, where would_change says what would be. */
  removed: string[];
  /** Grants taken back ("group docker: deploy"). */
  revoked: string[];
  /**
   * Recorded packages kept: something vm-install did not install depends on them, or dpkg's log cannot say
   * whether they were removed and installed again since (removal.ts).
   */
  kept: string[];
}

// biome-ignore lint/suspicious/noExplicitAny: each side keeps its own state, outcome and proof types.
type AnyModel<E, R extends InstallerReport> = InstallerModel<E, any, R, any, any>;

/**
 * One model: `absent` when the event says `state: "absent"`, `present` otherwise. Typed as the present
 * report, which callers of an installer's handler read; an absent run's result says `state: "absent"`.
 */
export function presentOrAbsent<
  E extends { state: InstallerState },
  P extends InstallerReport,
  A extends InstallerReport,
>(present: AnyModel<E, P>, absent: AnyModel<E, A>): AnyModel<E, P> {
  const pick = (event: E): AnyModel<E, P | A> => (event.state === "absent" ? absent : present);
  const model: AnyModel<E, P> = {
    firstLook: (event) => pick(event).firstLook?.(event) ?? [],
    inspect: (ctx) => pick(ctx.event).inspect(ctx),
    plan: (state, event) => pick(event).plan(state, event),
    verify: (ctx, run) => pick(run.event).verify?.(ctx, run) ?? Promise.resolve(undefined),
    // Absent has no verify: only the present side's reads-only proof runs in a check.
    ...(present.verifyReadsOnly ? { verifyReadsOnly: true } : {}),
    report: (run) => pick(run.event).report(run) as Omit<P, "changes">,
  };
  return model;
}

/** What the generic absent model saw: the removal look, plus an installer's own. */
export interface AbsentSeen<X = undefined> {
  removal: RemovalLook;
  extra: X;
}

/** An installer's own part of taking back: looked at first, planned before the recorded packages. */
export interface AbsentExtra<E, X> {
  inspect(ctx: InstallerContext<E>): Promise<X>;
  plan(extra: X): Change<E>[];
  /** Its changes after the packages' (data a package removal leaves). */
  after?(extra: X): Change<E>[];
  /** "remove" keeps the packages' configuration and data (install-postgres without purgeData). @default purge */
  mode?(event: E): RemovalMode;
  /** Its own result fields. */
  report?(extra: X, done: boolean): Record<string, unknown>;
  /** What it could not take back and why, after the removal's warnings. */
  warnings?(extra: X): string[];
  /** Members it takes back out of groups, so a group they were the only members of is not kept for them. */
  revokedMembers(extra: X): string[];
  revoked(extra: X): string[];
}

const NO_EXTRA: AbsentExtra<unknown, undefined> = {
  inspect: () => Promise.resolve(undefined),
  plan: () => [],
  revokedMembers: () => [],
  revoked: () => [],
};

/** The absent model for `installer` (its key in the inventory), with the installer's own part if any. */
export function absentModel<E, X = undefined>(
  installer: string,
  extra: AbsentExtra<E, X> = NO_EXTRA as unknown as AbsentExtra<E, X>,
): InstallerModel<E, AbsentSeen<X>, AbsentReport> {
  return {
    async inspect(ctx) {
      const own = await ctx.progress.step("reading what vm-install granted", () => extra.inspect(ctx), "check");
      const label = `reading what vm-install installed (${installer})`;
      const removal = await ctx.progress.step(
        label,
        () => lookForRemoval(ctx, installer, extra.revokedMembers(own), extra.mode?.(ctx.event)),
        "check",
      );
      return { removal, extra: own };
    },
    plan: (seen) => [...extra.plan(seen.extra), ...planRemoval<E>(seen.removal), ...(extra.after?.(seen.extra) ?? [])],
    report: (run) => absentReport(run, extra),
  };
}

function absentReport<E, X>(
  run: ModelRun<AbsentSeen<X>, E, ApplyOutcome>,
  extra: AbsentExtra<E, X>,
): Omit<AbsentReport, "changes"> {
  const { removal, extra: own } = run.before;
  const done = run.applied.length > 0;
  const applied = run.applied.find((a) => a.change.kind === "remove-packages");
  const removed = done && applied ? removal.set.remove.concat(removal.mode === "purge" ? removal.residual : []) : [];
  const revoked = done ? extra.revoked(own) : [];
  const kept = [...removal.set.kept, ...removal.unsure].map((k) => k.name);
  const nothing = run.planned.length === 0;
  return {
    status: "ok",
    state: "absent",
    // A check that would change something says so in the kit's words (check-mode.ts checkSummary).
    summary: nothing
      ? "nothing to do: nothing vm-install installed for this installer is left on the VM"
      : `removed what vm-install installed: ${run.applied.flatMap(appliedWords).join("; ") || "its record"}`,
    warnings: [...removalWarnings(removal), ...(extra.warnings?.(own) ?? [])],
    removed,
    revoked,
    kept,
    ...extra.report?.(own, done),
  };
}
