// install-postgres: a PostgreSQL server with one application database and role, Ansible postgresql_user /
// postgresql_db style: change only what differs, report it, prove the result by logging in over TCP.
// A run is inspect (state.ts) -> plan (plan.ts, pure) -> apply (apply.ts), looking again and re-planning
// after a change later ones depend on -> TCP login (verify.ts). A check is inspect -> plan, so its
// would_change is the plan's words; it logs in only when nothing would change (before a change the login
// cannot be expected to work; after, a failure is the error a run would end with).

import { checkSummary } from "../common/check-mode";
import { defineHandler, runHandler } from "../common/handler-kit";
import type { InstallerResult } from "../common/installer-result";
import { requireSystemd } from "../common/systemd";
import { resolveListenNames } from "./addresses";
import { chooseMajor, planRoleAndDatabase, registerPasswordForms } from "./decisions";
import { postgresDefinition } from "./definition";
import { type PlanInput, type PostgresPlan, planPostgres } from "./plan";
import { type InstallPostgresReport, postgresReport, type ServerFacts } from "./report";
import { type Run, warn } from "./run";
import { scramSecret } from "./scram";
import { inspect, type PostgresState } from "./state";
import { verifyLogin } from "./verify";

export type { InstallPostgresReport };
export { chooseMajor, planRoleAndDatabase };

/** Looks a plan can ask for in one run: install, create, start, and one spare. More is a bug in a plan. */
const MAX_LOOKS = 4;

/** A run: apply the plan's changes in order, looking again and re-planning after each marked replan. */
async function apply(run: Run, input: PlanInput): Promise<InstallPostgresReport> {
  let state = await inspect(run, false);
  const done: Pick<ServerFacts, "installedFrom" | "restarted" | "reloaded"> = {
    installedFrom: "already installed",
    restarted: false,
    reloaded: false,
  };
  for (let look = 1; ; look++) {
    const plan = planPostgres(state, input);
    say(run, plan, false);
    const next = await applyUntilReplan(run, plan, done);
    if (!next) return report(run, plan, done);
    if (look === MAX_LOOKS)
      throw new Error(`install-postgres re-planned ${look} times without settling (a bug in install-postgres)`);
    state = await inspect(run, false, next);
  }
}

/** The plan's changes applied up to one marked replan; what it learned then, undefined when all are done. */
async function applyUntilReplan(
  run: Run,
  plan: PostgresPlan,
  done: Pick<ServerFacts, "installedFrom" | "restarted" | "reloaded">,
): Promise<Partial<PostgresState> | undefined> {
  for (const change of plan.changes) {
    const applied = await change.apply(run);
    run.changes.push(...(applied?.what ?? change.what));
    run.revoked.push(...(change.revoked ?? []));
    if (applied?.installedFrom) done.installedFrom = applied.installedFrom;
    if (change.kind === "restart") done.restarted = true;
    if (change.kind === "reload") done.reloaded = true;
    if (change.replan) return applied?.learned ?? {};
  }
  return undefined;
}

async function report(
  run: Run,
  plan: PostgresPlan,
  done: Pick<ServerFacts, "installedFrom" | "restarted" | "reloaded">,
): Promise<InstallPostgresReport> {
  if (!plan.login) throw new Error("install-postgres ended without a running server to log in to (a bug)");
  const { port, listen, hbaFile } = plan.login;
  const { host, serverVersion } = await verifyLogin(run, port, listen, hbaFile, done.reloaded);
  const result = postgresReport(run, { ...plan.facts, ...done, serverVersion, verifiedHost: host });
  run.progress.info(result.summary);
  return result;
}

/** A check: the plan's words are what would change; the login only when nothing would. */
async function check(run: Run, input: PlanInput): Promise<InstallPostgresReport> {
  const plan = planPostgres(await inspect(run, true), input);
  say(run, plan, true);
  for (const change of plan.changes) {
    run.changes.push(...change.what);
    run.revoked.push(...(change.revoked ?? []));
  }
  let facts = plan.facts;
  if (!run.changes.length && plan.login) {
    const { port, listen, hbaFile } = plan.login;
    const { host, serverVersion } = await verifyLogin(run, port, listen, hbaFile, false);
    facts = { ...facts, serverVersion, verifiedHost: host };
  }
  const result = postgresReport(run, facts);
  run.progress.info(checkSummary(run.changes, result.summary));
  return result;
}

/** The plan's lines in the progress, warnings in the result too; a re-plan does not say a line twice. */
function say(run: Run, plan: PostgresPlan, check: boolean): void {
  for (const s of plan.said) {
    if (s.checkOnly && !check) continue;
    if (!s.warning) run.progress.info(s.line);
    else if (!run.warnings.includes(s.line)) warn(run, s.line);
  }
}

export const handler = defineHandler({
  definition: postgresDefinition,
  async run({ event, check: checkOnly, remote, apt, os, progress, secrets }): Promise<InstallPostgresReport> {
    // The password is never on a command line or in the environment, and reaches the server only as its
    // SCRAM verifier when it is ASCII (scram.ts, sql.ts QUIET_SESSION, server.ts tcpLogin); every form it
    // takes in what is sent is registered, so no output, error or progress line can carry it.
    registerPasswordForms(secrets, event.db_password);
    await requireSystemd(remote, "PostgreSQL");
    const run: Run = {
      event,
      remote,
      apt,
      os,
      progress,
      secrets,
      changes: [],
      warnings: [],
      revoked: [],
      resolved: {},
    };
    // Before anything changes, in a check too: a listen_addresses name that is not the VM's own.
    run.resolved = await resolveListenNames(remote, event.listen_addresses);
    const input: PlanInput = {
      event,
      os,
      scram: (pw) => {
        const secret = scramSecret(pw);
        secrets.add(secret, "db_password_scram");
        return secret;
      },
    };
    return checkOnly ? check(run, input) : apply(run, input);
  },
});

/** The job's entrypoint (handler.install). */
export async function install(event: unknown): Promise<InstallerResult<InstallPostgresReport>> {
  return runHandler(handler, event);
}
