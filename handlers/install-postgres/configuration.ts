// The configuration phases: listen_addresses (a conf.d drop-in, needs a restart) and pg_hba.conf (needs a
// reload) written only where they differ and checked by the server itself before it is restarted or
// reloaded; then the restart or reload, and a check of what the server runs with.

import { runLong } from "../common/exec";
import type { Cluster, ServerState } from "./pg";
import { clusterUnit, dropInContent, dropInPath, hbaEntry, listenOverride, normalizeListen, planHba } from "./pg";
import { restartOrRollBack } from "./recovery";
import { type Run, warn } from "./run";
import { psqlJson, writeFile } from "./server";
import { CONFIG_CHECK_SQL, type ConfigCheck, SETTLED_SQL, type Settled } from "./sql";

/** What the configuration phase changed; the restart/reload phase acts on it. */
export interface ConfigChange {
  listen: string;
  listenChanged: boolean;
  hbaChanged: boolean;
  /** The wanted entries whose line is ours, for the inventory. */
  owned: string[];
}

/**
 * `recordedHba`: the entries the inventory lists for this file (undefined: no inventory yet, so every
 * line carrying our marker counts as ours).
 */
export async function writeConfiguration(run: Run, state: ServerState, port: number, recordedHba: string[] | undefined): Promise<ConfigChange> {
  const { event, remote } = run;
  const listen = normalizeListen(event.listen_addresses);
  const dropIn = dropInPath(state.config_file);
  const listenChanged = normalizeListen(state.listen_addresses) !== listen || state.pending_restart.includes("listen_addresses");
  if (listenChanged && (state.dropin_text ?? "") !== dropInContent(listen)) await writeFile(remote, dropIn, dropInContent(listen), "0644");
  const type = event.remote_ssl ? "hostssl" : "host";
  const wanted = event.allow_remote ? event.allowed_cidrs.map((c) => hbaEntry(type, event.db_name, event.db_user, c)) : [];
  const hba = planHba(state.hba_text, wanted, recordedHba);
  const hbaChanged = hba.content !== state.hba_text;
  if (hbaChanged) await writeFile(remote, state.hba_file, hba.content, "0640");
  const change = { listen, listenChanged, hbaChanged, owned: hba.owned };
  if (!listenChanged && !hbaChanged) return change;

  await checkConfiguration(run, state, port, change);
  if (listenChanged) {
    run.changes.push(
      normalizeListen(state.listen_addresses) === listen
        ? `listen_addresses '${listen}' applied (it was waiting for a restart)`
        : `listen_addresses '${state.listen_addresses}' -> '${listen}' (${dropIn})`,
    );
  }
  for (const e of hba.added) run.changes.push(`pg_hba.conf: ${e} added`);
  for (const e of hba.duplicates) run.changes.push(`pg_hba.conf: a second copy of ${e} removed`);
  for (const e of hba.removed) {
    run.changes.push(`revoked: pg_hba.conf: ${e} removed (written by vm-install, no longer in the settings)`);
    run.revoked.push(`pg_hba.conf: ${e}`);
  }
  return change;
}

/** The server's own reading of the files; a broken pg_hba.conf is put back before failing. */
async function checkConfiguration(run: Run, state: ServerState, port: number, change: ConfigChange): Promise<void> {
  const dropIn = dropInPath(state.config_file);
  const check = await psqlJson<ConfigCheck>(run.remote, port, CONFIG_CHECK_SQL, "psql (checking the configuration files)");
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
        ? `listen_addresses is also set in ${override.file} line ${override.line} ('${override.setting}'), which is read after ${dropIn} and wins: ` +
          `remove it there${override.file?.endsWith("postgresql.auto.conf") ? " (ALTER SYSTEM RESET listen_addresses)" : ""}; `
        : "") +
      `nothing was reloaded${change.hbaChanged ? `, and ${state.hba_file} was put back as it was` : ""}. Fix the files on the VM and run the job again`,
  );
}

// ---------------------------------------------------------------------------------------------------
// 5. Restart (listen_addresses is read only when the postmaster starts) or reload, then check.

export async function applyConfiguration(
  run: Run,
  cluster: Cluster,
  state: ServerState,
  change: ConfigChange,
): Promise<{ restarted: boolean; reloaded: boolean }> {
  const { remote, progress } = run;
  const unit = clusterUnit(cluster);
  const restarted = change.listenChanged;
  const reloaded = !restarted && change.hbaChanged;
  if (restarted) {
    const previous = { text: state.dropin_text, listen: state.listen_addresses };
    await progress.step(
      `systemctl restart ${unit} (listen_addresses)`,
      () => restartOrRollBack(run, cluster, dropInPath(state.config_file), change.listen, previous),
      "restart",
    );
  } else if (reloaded) {
    await progress.step(
      `systemctl reload ${unit} (pg_hba.conf)`,
      () => runLong(remote, `systemctl reload ${unit}`, { label: `systemctl reload ${unit}`, timeoutMs: 120_000 }),
      "reload",
    );
  }
  const settled = restarted || reloaded ? await psqlJson<Settled>(remote, cluster.port, SETTLED_SQL, "psql (checking the running settings)") : state;
  const log = cluster.logFile ?? "the cluster's log";
  if (normalizeListen(settled.listen_addresses) !== change.listen) {
    throw new Error(`after the restart the server listens on '${settled.listen_addresses}', not '${change.listen}': see ${log} and pg_file_settings on the VM`);
  }
  if (settled.pending_restart.length) {
    const names = settled.pending_restart.join(", ");
    if (restarted) throw new Error(`settings still wait for a restart right after one: ${names}; see ${log} on the VM`);
    warn(run, `settings changed by someone else wait for a restart of ${unit}: ${names} (not restarted by this job)`);
  }
  if (run.event.allow_remote && change.listen.split(",").every((a) => a === "localhost" || a === "127.0.0.1" || a === "::1")) {
    warn(
      run,
      `allow_remote is true but listen_addresses '${change.listen}' accepts local connections only: set listen_addresses to "*" (or the VM's address) for remote clients`,
    );
  }
  return { restarted, reloaded };
}
