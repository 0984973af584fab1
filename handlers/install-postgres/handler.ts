// install-postgres: a PostgreSQL server with one application database and role, Ansible postgresql_user /
// postgresql_db style: change only what differs, report it, prove the result by logging in over TCP.
// The kit runs its model (installer-model.ts): inspect (state.ts) -> plan (plan.ts, pure) -> apply
// (apply.ts), re-planning after a change later ones depend on -> verify (the TCP login) -> report. The
// login only reads, so a check that finds nothing to change logs in too, as the proof of the VM as it is.

import { type AbsentReport, presentOrAbsent } from "../common/absent-model";
import { defineHandler, runHandler } from "../common/handler-kit";
import type { InstallerContext } from "../common/installer-model";
import { appliedWords, type Change, type InstallerModel, type ModelRun } from "../common/installer-model";
import type { InstallerResult } from "../common/installer-result";
import { postgresAbsentModel } from "./absent";
import type { PostgresOutcome } from "./apply";
import type { PostgresEvent } from "./decisions";
import { postgresDefinition } from "./definition";
import { planPostgres } from "./plan";
import type { PostgresChange } from "./plan-change";
import { asKitPlan, type KitPostgresPlan } from "./plan-preview";
import { type InstallPostgresReport, postgresReport, type ReportLines } from "./report";
import type { ListenerSeen } from "./server-look";
import { inspect, type PostgresState, postgresFirstLook } from "./state";
import { verifyLogin } from "./verify";

/** What verify found: the changes' own warnings and the TCP login, when it ran. */
interface Verified {
  warnings: string[];
  login?: { host: string; serverVersion: string };
}

type PostgresRun = ModelRun<PostgresState, PostgresEvent, PostgresOutcome, Verified>;

const revokedBy = (change: Change<PostgresEvent, PostgresOutcome>) => (change as PostgresChange).revoked ?? [];

/** The proof: the role logs in over TCP, where the plan the kit ended with says the server listens. */
async function verify(ctx: InstallerContext<PostgresEvent>, run: PostgresRun): Promise<Verified> {
  const plan = run.lastPlan as KitPostgresPlan;
  const warnings = run.applied.flatMap((a) => a.outcome?.warnings ?? []);
  if (!plan.login) throw new Error("install-postgres ended without a running server to log in to (a bug)");
  const reloaded = run.applied.some((a) => a.change.kind === "reload");
  // Nothing applied since the server was last looked at: who listened then still stands (the login's proof);
  // else who listened right after the last restart or reload, when only the records were written since.
  const listener = run.appliedSinceLook ? listenerSince(run.applied) : run.state.server?.listener;
  const login = await verifyLogin(ctx, plan.login, { reloaded, resolved: run.state.resolved, listener });
  if ("warning" in login) {
    ctx.progress.info(login.warning);
    return { warnings: [...warnings, login.warning] };
  }
  return { warnings, login };
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

/** What the run did (in a check: nothing, and `revoked` foreseen) and found, with the plan's facts. */
function report(run: PostgresRun): Omit<InstallPostgresReport, "changes"> {
  const { event, verified } = run;
  const plan = run.lastPlan as KitPostgresPlan;
  // A run applies the plan it ends with to the end; what of it is left unapplied is a check's to foresee.
  const applied = run.applied.map((a) => a.change);
  const takesBack = [...applied, ...plan.changes.filter((c) => !applied.includes(c))];
  const lines: ReportLines = {
    changes: run.applied.flatMap(appliedWords),
    warnings: verified?.warnings ?? [],
    revoked: takesBack.flatMap(revokedBy),
  };
  const installedFrom = run.applied.map((a) => a.outcome?.installedFrom).find((from) => from !== undefined);
  const facts = {
    ...plan.facts,
    ...(installedFrom ? { installedFrom } : {}),
    restarted: run.applied.some((a) => a.change.kind === "restart"),
    reloaded: run.applied.some((a) => a.change.kind === "reload"),
    ...(verified?.login ? { serverVersion: verified.login.serverVersion, verifiedHost: verified.login.host } : {}),
  };
  return postgresReport(event, facts, lines);
}

const postgresModel: InstallerModel<PostgresEvent, PostgresState, InstallPostgresReport, PostgresOutcome, Verified> = {
  firstLook: postgresFirstLook,
  inspect,
  plan: (state, event) => asKitPlan(planPostgres(state, event)),
  verify,
  verifyReadsOnly: true,
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
