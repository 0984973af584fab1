// The configuration: listen_addresses (a conf.d drop-in, needs a restart) and pg_hba.conf (needs a reload),
// planned from the server's state, written only where they differ and checked by the server itself before
// it is restarted or reloaded; then the restart or reload, and a look at what the server runs with.

import { quote } from "../../lib/shared/shell-quote";
import { runLong } from "../common/exec";
import { writeFragment } from "../common/remote-file";
import { defineLook, type Facts } from "../common/vm-facts";
import type { PostgresEvent } from "./decisions";
import { listenerFacts, listenerLook } from "./listener";
import type { ParameterPlan } from "./parameters";
import type { Cluster, ServerState } from "./pg";
import {
  clusterUnit,
  dropInContent,
  dropInPath,
  type HbaPlan,
  hbaCopyWarning,
  hbaEntry,
  listenOverride,
  normalizeListen,
  parsePsqlJson,
  planHba,
} from "./pg";
import { restartOrRollBack } from "./recovery";
import type { Run } from "./run";
import { clusterFile, psqlJson, writeFile } from "./server";
import { type ListenerSeen, psqlProbeCommand } from "./server-look";
import { CONFIG_CHECK_SQL, type ConfigCheck, SETTLED_SQL, type Settled } from "./sql";
import { joinedFailure, type SqlFirst, sqlFromStdin } from "./sql-first";

/**
 * What the configuration changes, decided from the server's state alone (no I/O): plan.ts makes its
 * lines a change, written by writeConfiguration; the restart or reload acts on it.
 */
export interface ConfigPlan {
  listen: string;
  /** Our conf.d drop-in. */
  dropIn: string;
  /** listen_addresses must change (or a change of it still waits for a restart): a restart. */
  listenChanged: boolean;
  hba: HbaPlan;
  /** pg_hba.conf must be rewritten: a reload. */
  hbaChanged: boolean;
  /** The wanted entries whose line is ours, for the inventory. */
  owned: string[];
  /** Copies of lines it takes back, kept (warnings: a check's from the plan, a run's from applying it). */
  hbaCopies: string[];
  /** One line per change, in the words the result's `changes` uses. */
  lines: string[];
  /** The grants it takes back, one line each (the result's `revoked`). */
  revoked: string[];
  /** `parameters` (parameters.ts withParameters): their plan, and the drop-in's text holding them. */
  parameters?: ParameterPlan;
  dropInText?: string;
}

/**
 * `recordedHba`: the entries the inventory lists for this file (undefined: no inventory yet, so every
 * line carrying our marker counts as ours).
 */
export function planConfiguration(
  event: Pick<
    PostgresEvent,
    "listen_addresses" | "remote_ssl" | "allow_remote" | "allowed_cidrs" | "db_name" | "db_user"
  >,
  state: ServerState,
  recordedHba: string[] | undefined,
): ConfigPlan {
  const listen = normalizeListen(event.listen_addresses);
  const dropIn = dropInPath(state.config_file);
  const listenChanged =
    normalizeListen(state.listen_addresses) !== listen || state.pending_restart.includes("listen_addresses");
  const type = event.remote_ssl ? "hostssl" : "host";
  const wanted = event.allow_remote
    ? event.allowed_cidrs.map((c) => hbaEntry(type, event.db_name, event.db_user, c))
    : [];
  const hba = planHba(state.hba_text, wanted, recordedHba);
  const lines: string[] = [];
  if (listenChanged) {
    lines.push(
      normalizeListen(state.listen_addresses) === listen
        ? `listen_addresses '${listen}' applied (it was waiting for a restart)`
        : `listen_addresses '${state.listen_addresses}' -> '${listen}' (${dropIn})`,
    );
  }
  for (const e of hba.added) lines.push(`pg_hba.conf: ${e} added`);
  for (const e of hba.duplicates) lines.push(`pg_hba.conf: a second copy of ${e} removed`);
  for (const e of hba.removed)
    lines.push(`revoked: pg_hba.conf: ${e} removed (written by vm-install, no longer in the settings)`);
  const revoked = hba.removed.map((e) => `pg_hba.conf: ${e}`);
  return {
    listen,
    dropIn,
    listenChanged,
    hba,
    hbaChanged: hba.content !== state.hba_text,
    owned: hba.owned,
    hbaCopies: hba.copies.map((e) => hbaCopyWarning(state.hba_file, e)),
    lines,
    revoked,
  };
}

/**
 * The files written where they differ and checked by the server, in one exec as postgres (three before, issue
 * 30); nothing is restarted or reloaded yet. With `first`, that SQL runs before them in the same exec, its
 * bytes first on stdin: when it fails nothing is written, and the error names it.
 */
export async function writeConfiguration(
  run: Run,
  state: ServerState,
  port: number,
  plan: ConfigPlan,
  first?: SqlFirst,
): Promise<void> {
  // A change still waiting for a restart may already be in the drop-in.
  const text = plan.dropInText ?? dropInContent(plan.listen);
  const files: FileWrite[] = [];
  if ((plan.listenChanged || plan.parameters?.changed) && (state.dropin_text ?? "") !== text)
    files.push({ path: plan.dropIn, content: text, mode: "0644" });
  if (plan.hbaChanged) files.push({ path: state.hba_file, content: plan.hba.content, mode: "0640" });
  const parts = [...files.map(writeFromStdin), `{ ${psqlProbeCommand(port, CONFIG_CHECK_SQL)}; }`];
  const writes = [...files.map((f) => `writing ${f.path}`), "psql (checking the configuration files)"];
  const label = [...(first ? [first.label] : []), ...writes].join(", ");
  const script = (first ? [sqlFromStdin(port, first.sql), ...parts] : parts).join(" && ");
  const r = await run.remote.run(script, {
    user: "postgres",
    stdin: (first?.sql ?? "") + files.map((f) => f.content).join(""),
    label,
    timeoutMs: 120_000,
    mutates: files.length > 0 || first !== undefined,
    // Joined, the exit status says which part failed: the error is built here (sql-first.ts).
    check: first === undefined,
  });
  const failed = first && joinedFailure(r, script, label, first);
  if (failed) throw failed;
  await checkConfiguration(run, state, plan, parsePsqlJson<ConfigCheck>(r.stdout, label));
}

export interface FileWrite {
  path: string;
  content: string;
  mode: string;
}

/** writeFile's replace (server.ts) as a fragment of the joined exec, its content the next bytes of its stdin. */
export function writeFromStdin(f: FileWrite): string {
  return writeFragment(clusterFile(f.path, f.content, f.mode));
}

/** The server's own reading of the files; a broken pg_hba.conf is put back before failing. */
async function checkConfiguration(run: Run, state: ServerState, change: ConfigPlan, check: ConfigCheck): Promise<void> {
  const dropIn = dropInPath(state.config_file);
  const problems = [
    ...check.config_errors.map((e) => `${e.file ?? "?"} line ${e.line ?? "?"}: ${e.error}`),
    ...check.hba_errors.map((e) => `${state.hba_file} line ${e.line}: ${e.error}`),
  ];
  const override = change.listenChanged ? listenOverride(check.listen, dropIn) : undefined;
  if (!problems.length && !override) return;
  if (change.hbaChanged) await writeFile(run.remote, state.hba_file, state.hba_text, "0640");
  throw new Error(
    (problems.length ? `the server would not accept its configuration files: ${problems.join("; ")}; ` : "") +
      (override
        ? `listen_addresses is also set in ${override.file} line ${override.line} ('${override.setting}'), ` +
          `which is read after ${dropIn} and wins: remove it there` +
          `${override.file?.endsWith("postgresql.auto.conf") ? " (ALTER SYSTEM RESET listen_addresses)" : ""}; `
        : "") +
      `nothing was reloaded${change.hbaChanged ? `, and ${state.hba_file} was put back as it was` : ""}. ` +
      "Fix the files on the VM and run the job again",
  );
}

// ---------------------------------------------------------------------------------------------------
// Restart (listen_addresses is read only when the postmaster starts) or reload, then a look at what the
// server runs with.

/** What the server runs with after a restart or reload: warnings, and who listens on its port then. */
export interface SettledOutcome {
  warnings: string[];
  listener: ListenerSeen;
}

/** The restart, then what the server runs with; returns the warnings of what is still not applied. */
export async function restartForListen(
  run: Run,
  cluster: Cluster,
  state: ServerState,
  plan: ConfigPlan,
): Promise<SettledOutcome> {
  const unit = clusterUnit(cluster);
  const previous = { text: state.dropin_text, listen: state.listen_addresses };
  const params = plan.parameters?.lines.length ? plan.parameters : undefined;
  const names = [...(plan.listenChanged ? ["listen_addresses"] : []), ...(params?.restart ?? [])];
  const subject = params
    ? [
        ...(plan.listenChanged ? [`listen_addresses '${plan.listen}'`] : []),
        ...[...params.restart, ...params.reload].map((n) =>
          n in params.settings ? `${n} = ${params.settings[n]}` : `${n} (removed)`,
        ),
      ].join(", ")
    : undefined;
  // What the server runs with is read in the restart's own exec (issue 30: one round trip less).
  const look = settledLook(cluster);
  const seen = await run.progress.step(
    `systemctl restart ${unit} (${names.join(", ")})`,
    () => restartOrRollBack(run, cluster, dropInPath(state.config_file), plan.listen, previous, subject, look),
    "restart",
  );
  return settled(run, cluster, plan.listen, true, seen);
}

export async function reloadForHba(run: Run, cluster: Cluster, plan: ConfigPlan): Promise<SettledOutcome> {
  const unit = clusterUnit(cluster);
  const what = [...(plan.hbaChanged ? ["pg_hba.conf"] : []), ...(plan.parameters?.reload ?? [])].join(", ");
  await run.progress.step(
    `systemctl reload ${unit} (${what})`,
    () =>
      runLong(run.remote, `systemctl reload ${quote(unit)}`, {
        label: `systemctl reload ${unit}`,
        timeoutMs: 120_000,
      }),
    "reload",
  );
  return settled(run, cluster, plan.listen, false);
}

const SETTLED_LABEL = "psql (checking the running settings)";

/**
 * After a restart or reload, one exec as root: what the server runs with (psql as postgres) and who listens
 * on its port (the login check's proof when nothing but the records changes before it; issue 30).
 */
export function settledLook(cluster: Pick<Cluster, "port" | "major" | "name">) {
  return defineLook("the look at the server after a restart or reload", [
    {
      name: "settled",
      command: psqlProbeCommand(cluster.port, SETTLED_SQL),
      writer: "service",
      readAs: "postgres",
      use: "listen_addresses in effect and what still waits for a restart, as the server reports them",
    },
    ...listenerLook(cluster.port, clusterUnit(cluster)).probes,
  ] as const);
}

/**
 * The server runs with `listen` and, right after a restart, nothing waits for another; returns warnings.
 * `seen`: settledLook's facts as the restart's exec read them; else the look is one exec of its own.
 */
async function settled(
  run: Run,
  cluster: Cluster,
  listen: string,
  restarted: boolean,
  seen?: Facts<ReturnType<typeof settledLook>["probes"]>,
): Promise<SettledOutcome> {
  const look = settledLook(cluster);
  const label = `${SETTLED_LABEL} + ss -ltnp sport :${cluster.port}`;
  const facts =
    seen ??
    look.parse(
      (await run.remote.run(look.script, { sudo: true, env: { LC_ALL: "C" }, label, timeoutMs: 120_000 })).stdout,
    );
  const answer = facts.get("settled");
  // A psql that failed in the look is run again on its own, so its error reads as before.
  const now =
    answer.code === 0
      ? parsePsqlJson<Settled>(answer.text, SETTLED_LABEL)
      : await psqlJson<Settled>(run.remote, cluster.port, SETTLED_SQL, SETTLED_LABEL);
  const log = cluster.logFile ?? "the cluster's log";
  if (normalizeListen(now.listen_addresses) !== listen) {
    throw new Error(
      `after the restart the server listens on '${now.listen_addresses}', not '${listen}': ` +
        `see ${log} and pg_file_settings on the VM`,
    );
  }
  if (now.pending_restart.length && restarted) {
    throw new Error(
      `settings still wait for a restart right after one: ${now.pending_restart.join(", ")}; see ${log} on the VM`,
    );
  }
  const unit = clusterUnit(cluster);
  const listener = {
    port: cluster.port,
    unit,
    ...listenerFacts((name) => facts.get(name)),
  };
  return { warnings: unappliedWarnings(run.event, unit, now.pending_restart, listen), listener };
}

/**
 * What works as asked but not as meant: settings someone else changed that wait for a restart this job
 * does not make, and remote access with a server listening only locally.
 */
export function unappliedWarnings(
  event: Pick<PostgresEvent, "allow_remote">,
  unit: string,
  pendingRestart: string[],
  listen: string,
): string[] {
  const warnings: string[] = [];
  if (pendingRestart.length) {
    warnings.push(
      `settings changed by someone else wait for a restart of ${unit}: ${pendingRestart.join(", ")} ` +
        "(not restarted by this job)",
    );
  }
  if (event.allow_remote && listen.split(",").every((a) => a === "localhost" || a === "127.0.0.1" || a === "::1")) {
    warnings.push(
      `allow_remote is true but listen_addresses '${listen}' accepts local connections only: ` +
        `set listen_addresses to "*" (or the VM's address) for remote clients`,
    );
  }
  return warnings;
}
