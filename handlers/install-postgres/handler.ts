// install-postgres: a PostgreSQL server with one application database and role, Ansible
// postgresql_user/postgresql_db style: look at the state first, change only what differs, report what
// changed, and prove the result by logging in as the role over TCP.
// The event's keys, rules and defaults are in definition.ts; the result is the common shape
// (handler-kit.ts) plus the server's own fields (report.ts). A run is inspect (state.ts) -> plan (plan.ts,
// pure) -> apply (apply.ts), looking again and re-planning after a change later ones depend on -> TCP
// login (verify.ts). A check (the event's check: true) is inspect -> plan: its would_change is the plan's
// words, and it logs in only when nothing would change (before a change the login cannot be expected
// to work; after, a failure is the error a run would end with).
//
// Which major: pg_version when given. Without it, the distribution's own (14 on Ubuntu 22.04, 15 on
// Debian 12) when that is installed or nothing is; a VM that already runs only another major keeps it
// (a second server beside it is never what an omitted version means).
// Where from: the distribution's `postgresql` for its own major, PGDG (`<repo_url> <codename>-pgdg main`,
// key in /etc/apt/keyrings) for any other. Installed only when postgresql-<major> is missing.
//
// The password never travels on a command line or in an environment variable, and never in clear to
// the server when it is ASCII: the job computes the SCRAM-SHA-256 secret itself (scram.ts) and sends
// that on psql's stdin, in a session that keeps its statements out of the log (sql.ts QUIET_SESSION).
// The TCP login check reads it from a 0600 pgpass file in memory (/dev/shm), unlinked before psql
// starts (server.ts tcpLogin), so a dropped connection cannot leave it behind. The value is registered as a secret, so no output, error or progress line can carry it.
//
// Configuration: listen_addresses goes into a conf.d drop-in (Debian's postgresql.conf includes
// conf.d last) and needs a restart; pg_hba.conf lines need only a reload. Both files are checked by
// the server itself (pg_file_settings, pg_hba_file_rules) before it is restarted or reloaded, so a
// broken file is put back instead of leaving a server that will not start.

import { checkSummary } from "../common/check-mode";
import { defineHandler, type InstallerResult, runHandler } from "../common/handler-kit";
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
