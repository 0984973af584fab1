// install-postgres: a PostgreSQL server with one application database and role, Ansible postgresql_user /
// postgresql_db style: change only what differs, report it, prove the result by logging in over TCP.
// The kit runs its model (installer-model.ts): inspect (state.ts) -> plan (plan.ts, pure) -> apply
// (apply.ts), re-planning after a change later ones depend on -> verify (the TCP login) -> report. A check
// stops before apply, so would_change is the plan's words; it logs in only when nothing would change
// (before a change the login cannot be expected to work; after, a failure is the error a run would end with).

import { type AbsentReport, presentOrAbsent } from "../common/absent-model";
import { checkSummary } from "../common/check-mode";
import { defineHandler, runHandler } from "../common/handler-kit";
import type { InstallerContext } from "../common/installer-model";
import { appliedWords, type Change, type InstallerModel, type ModelRun } from "../common/installer-model";
import type { InstallerResult } from "../common/installer-result";
import type { Progress } from "../common/progress";
import { postgresAbsentModel } from "./absent";
import type { PostgresOutcome } from "./apply";
import type { PostgresEvent } from "./decisions";
import { postgresDefinition } from "./definition";
import { type PostgresChange, type PostgresPlan, planPostgres } from "./plan";
import { type InstallPostgresReport, postgresReport, type ReportLines } from "./report";
import type { ListenerSeen } from "./server-look";
import { inspect, type PostgresState, postgresFirstLook } from "./state";
import { verifyLogin } from "./verify";

/** What verify found: the plan the report is made from (the last one) and the TCP login, when it ran. */
interface Verified {
  plan: PostgresPlan;
  warnings: string[];
  login?: { host: string; serverVersion: string };
  /** For the check's summary line, said when the report is made. */
  progress: Progress;
}

type PostgresRun = ModelRun<PostgresState, PostgresEvent, PostgresOutcome, Verified>;

const revokedBy = (change: Change<PostgresEvent, PostgresOutcome>) => (change as PostgresChange).revoked ?? [];

/**
 * The proof: the role logs in over TCP. A check logs in only when nothing would change. The plan's lines
 * are said here, once: a check's all of them, a run's those of its last plan (it re-planned past the rest).
 */
async function verify(ctx: InstallerContext<PostgresEvent>, run: PostgresRun): Promise<Verified> {
  const plan = planPostgres(run.state, run.event);
  const warnings: string[] = [];
  for (const s of plan.said) {
    if (s.checkOnly && !run.check) continue;
    ctx.progress.info(s.line);
    if (s.warning) warnings.push(s.line);
  }
  for (const a of run.applied) warnings.push(...(a.outcome?.warnings ?? []));
  const wouldChange = run.planned.some((c) => c.what.length);
  if (!plan.login || (run.check && wouldChange)) {
    if (!run.check) throw new Error("install-postgres ended without a running server to log in to (a bug)");
    return { plan, warnings, progress: ctx.progress };
  }
  const reloaded = run.applied.some((a) => a.change.kind === "reload");
  // Nothing applied since the server was last looked at: who listened then still stands (the login's proof);
  // else who listened right after the last restart or reload, when only the records were written since.
  const listener = run.appliedSinceLook ? listenerSince(run.applied) : run.state.server?.listener;
  const login = await verifyLogin(ctx, plan.login, { reloaded, resolved: run.state.resolved, listener });
  if ("warning" in login) {
    ctx.progress.info(login.warning);
    return { plan, warnings: [...warnings, login.warning], progress: ctx.progress };
  }
  return { plan, warnings, login, progress: ctx.progress };
}

/**
 * The listener a restart or reload read after it (apply.ts restartOrReload), when every change applied since
 * wrote only the grants inventory (a file of root's, nothing the server reads); else undefined: a look now.
 */
export function listenerSince(applied: PostgresRun["applied"]): ListenerSeen | undefined {
  for (let i = applied.length - 1; i >= 0; i--) {
    const listener = (applied[i].outcome as PostgresOutcome | undefined)?.listener;
    if (listener) return listener;
    if (applied[i].change.kind !== "inventory") return undefined;
  }
  return undefined;
}

function report(run: PostgresRun): Omit<InstallPostgresReport, "changes"> {
  const verified = run.verified as Verified;
  const { event } = run;
  const changes = run.check ? run.planned : run.applied.map((a) => a.change);
  const lines: ReportLines = {
    changes: run.check ? run.planned.flatMap((c) => c.what) : run.applied.flatMap(appliedWords),
    warnings: verified.warnings,
    revoked: changes.flatMap(revokedBy),
  };
  const installedFrom = run.applied.map((a) => a.outcome?.installedFrom).find((from) => from !== undefined);
  const facts = {
    ...verified.plan.facts,
    ...(installedFrom ? { installedFrom } : {}),
    restarted: run.applied.some((a) => a.change.kind === "restart"),
    reloaded: run.applied.some((a) => a.change.kind === "reload"),
    ...(verified.login ? { serverVersion: verified.login.serverVersion, verifiedHost: verified.login.host } : {}),
  };
  const result = postgresReport(event, facts, lines);
  // The kit says a run's summary; a check's is said here, as before the model.
  if (run.check) verified.progress.info(checkSummary([...lines.changes], result.summary));
  return result;
}

const postgresModel: InstallerModel<PostgresEvent, PostgresState, InstallPostgresReport, PostgresOutcome, Verified> = {
  firstLook: postgresFirstLook,
  inspect,
  plan: (state, event) => planPostgres(state, event).changes,
  verify,
  report,
};

/** State absent takes back what install-postgres granted and installed (absent.ts). */
export const handler = defineHandler({
  definition: postgresDefinition,
  model: presentOrAbsent(postgresModel, postgresAbsentModel),
});

/** The job's entrypoint (handler.install). */
export async function install(event: unknown): Promise<InstallerResult<InstallPostgresReport | AbsentReport>> {
  return runHandler<typeof postgresDefinition.settings, InstallPostgresReport | AbsentReport>(handler, event);
}
