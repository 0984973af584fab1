// When a setting keeps the server from running: listen_addresses that passed validation but cannot be
// bound (an address the VM does not have) stops the cluster on restart. The restart is checked; a
// cluster that did not come back gets its previous drop-in back and is restarted on its previous
// settings, and the job fails naming the value and the server's own error. A cluster found stopped
// because of our drop-in (left by an older version, or by hand) is started with the wanted value instead,
// so a rerun with a good value needs no manual step.

import { quote } from "../../lib/shared/shell-quote";
import { type Remote, runLong, tail } from "../common/exec";
import {
  defineLook,
  type Facts,
  followedByLook,
  type Look,
  lookAtEnd,
  type Probe,
  readingAs,
} from "../common/vm-facts";
import { type Cluster, clusterUnit, DROPIN_NAME, normalizeListen } from "./pg";
import type { Run } from "./run";
import { clusterServiceCommand, startOrExplain, writeFile } from "./server";

/** What the postmaster logs for an address of listen_addresses it could not listen on (it then goes on without it). */
const BIND_FAILURE = "could not (bind|create listen socket)";

/**
 * Restarts (or starts) the cluster's unit, detached. pg_ctlcluster makes systemctl fail when the
 * postmaster does not come up; one that came up without some address of listen_addresses (it only logs
 * that) does not count as up either: the lines it logged since the restart are the error. `after` is read in
 * the same exec, after the restart (vm-facts.ts followedByLook); its facts come back when the restart held.
 */
async function restartAndCheck<P extends readonly Probe[]>(
  remote: Remote,
  cluster: Cluster,
  verb: "restart" | "start",
  after?: Look<P>,
): Promise<{ ok: boolean; stopped: boolean; error?: string; seen?: Facts<P> }> {
  const unit = clusterUnit(cluster);
  const log = cluster.logFile ? quote(cluster.logFile) : undefined;
  const action = clusterServiceCommand(verb, unit);
  // The log is the postgres user's: read as postgres, so a link planted at its path (between the restart and
  // the read) reaches nothing of root's; a FIFO there cannot hold the job past the timeout.
  const asPostgres = (command: string) => readingAs("postgres", command);
  const cmd = log
    ? `s=$(${asPostgres(`stat -c %s ${log} 2>/dev/null`)}); case "$s" in ''|*[!0-9]*) s=0;; esac; ` +
      `${action} || exit $?; export VMI_FROM=$((s+1)); ` +
      `${asPostgres(`timeout 20 tail -c +"$VMI_FROM" ${log} 2>/dev/null`)} | grep -E '${BIND_FAILURE}'; exit 0`
    : action;
  const label = `systemctl ${verb} ${unit}`;
  const r = await runLong(remote, after ? followedByLook(cmd, after) : cmd, {
    label,
    timeoutMs: 300_000,
    check: false,
  });
  const { before, facts } = after ? lookAtEnd(after, r.stdout) : { before: r.stdout, facts: undefined };
  if (r.code !== 0) return { ok: false, stopped: true, error: tail(r.stderr || before, 3) };
  const unbound = before.split("\n").filter((l) => new RegExp(BIND_FAILURE).test(l));
  return unbound.length
    ? { ok: false, stopped: false, error: unbound.join("; ") }
    : { ok: true, stopped: false, seen: facts };
}

/**
 * The look at a cluster that did not start, one exec as root: the tail of its log and its unit's journal
 * (the server's own words, for the error only), and with `dropIn` our drop-in's text (its listen_addresses
 * decides whether the start is tried again with the wanted value). All the postgres user's to write.
 */
export function failureLook(cluster: Pick<Cluster, "major" | "name" | "logFile">, dropIn?: string) {
  const unit = clusterUnit(cluster);
  const probes: Probe<string, "service">[] = [];
  // Read as postgres: the postgres user can swap either file for a link to a file only root may read.
  const asPostgres = { writer: "service", readAs: "postgres" } as const;
  if (dropIn) probes.push({ name: "dropin", command: `cat ${quote(dropIn)}`, ...asPostgres, use: DROPIN_USE });
  if (cluster.logFile)
    probes.push({ name: "log", command: `tail -n 40 ${quote(cluster.logFile)}`, ...asPostgres, use: WORDS_USE });
  probes.push({
    name: "journal",
    command: `journalctl -u ${quote(unit)} -n 20 --no-pager -o cat`,
    writer: "service",
    use: WORDS_USE,
  });
  return defineLook("the look at a cluster that did not start", probes);
}
const DROPIN_USE = "vm-install's drop-in of a cluster that did not start: its listen_addresses rewritten as postgres";
const WORDS_USE = "the server's words on why it stopped (the error message only)";

async function lookAtFailure(remote: Remote, cluster: Cluster, dropIn?: string) {
  const look = failureLook(cluster, dropIn);
  const r = await remote.run(look.script, {
    sudo: true,
    label: "reading the server's log",
    timeoutMs: 30_000,
  });
  const facts = look.parse(r.stdout);
  const text = (name: string) => (look.probes.some((p) => p.name === name) ? facts.get(name).text : "");
  return { dropIn: text("dropin"), words: serverWords(`${text("log")}\n${text("journal")}`, cluster) };
}

/** The server's own words on why it stopped: FATAL/could-not lines of its log, else the unit's journal. */
async function serverError(remote: Remote, cluster: Cluster): Promise<string> {
  return (await lookAtFailure(remote, cluster)).words;
}

function serverWords(output: string, cluster: Cluster): string {
  // Start-up checks across settings are written without a level ("... must be less than max_connections").
  const lines = output
    .split("\n")
    .filter((l) =>
      /FATAL|could not (bind|create)|PANIC|invalid value|must be (less|at least)|outside the valid/.test(l),
    );
  const picked = [
    ...new Set(lines.map((l) => l.replace(/^.*?(LOG|FATAL|WARNING|PANIC|ERROR):\s+/, "$1: ").trim())),
  ].slice(-4);
  return picked.length ? picked.join("; ") : `no FATAL line in its log (see journalctl -u ${clusterUnit(cluster)})`;
}

/** Our drop-in under the cluster's Debian config directory, without asking the (stopped) server. */
export function clusterDropIn(cluster: Pick<Cluster, "major" | "name">): string {
  clusterUnit(cluster); // refuses a version or name postgresql-common would not create
  return `/etc/postgresql/${cluster.major}/${cluster.name}/conf.d/${DROPIN_NAME}`;
}

/**
 * Restarts the cluster for a new listen_addresses (or `parameters`: `subject` names what changed); when it
 * does not come back, puts `previous` back (the drop-in's text before, or null: there was none), restarts
 * it on that, and throws naming the value and the server's error. Returns `after`'s facts, read in the
 * restart's exec, when that look was given and its answer came back whole.
 */
export async function restartOrRollBack<P extends readonly Probe[]>(
  run: Run,
  cluster: Cluster,
  dropIn: string,
  listen: string,
  previous: { text: string | null; listen: string },
  subject = `listen_addresses '${listen}'`,
  after?: Look<P>,
): Promise<Facts<P> | undefined> {
  const { remote, progress } = run;
  const unit = clusterUnit(cluster);
  const first = await restartAndCheck(remote, cluster, "restart", after);
  if (first.ok) return first.seen;
  const why = first.stopped ? await serverError(remote, cluster) : (first.error ?? "");
  progress.info(`${unit} did not come back as asked with ${subject} (${why}); rolling back ${dropIn}`);
  if (previous.text === null)
    await remote.run(`rm -f ${quote(dropIn)}`, {
      user: "postgres",
      label: `removing ${dropIn}`,
      timeoutMs: 30_000,
      mutates: true,
    });
  else await writeFile(remote, dropIn, previous.text, "0644");
  const back = await restartAndCheck(remote, cluster, first.stopped ? "start" : "restart");
  const where = `PostgreSQL ${cluster.major}/${cluster.name}`;
  const onlyListen = subject.startsWith("listen_addresses");
  throw new Error(
    `${subject} ` +
      (first.stopped ? `stopped ${where}` : `could not be bound by ${where} (it started without those addresses)`) +
      ": " +
      `the server said: ${why}. ` +
      (back.ok
        ? `Rolled back: ${dropIn} ${previous.text === null ? "removed" : "put back as it was"} and the cluster ` +
          `restarted on its previous settings (listen_addresses '${previous.listen}'), serving again. `
        : `Rolled back ${dropIn}, but the cluster still does not start: ${back.error ?? ""}; ` +
          `see journalctl -u ${unit}. `) +
      (onlyListen
        ? 'Set listen_addresses to addresses the VM has (or "*" / "localhost") and run the job again.'
        : "Correct those settings and run the job again."),
  );
}

/**
 * Starts a stopped cluster. When it does not start and our drop-in holds another listen_addresses than
 * the one wanted, that value is the likely cause: it is rewritten with the wanted one and the start
 * tried again (the line returned says so, for changes). Otherwise the start's own error stands.
 */
export async function startFixingDropIn(run: Run, cluster: Cluster): Promise<string | undefined> {
  const { remote, event } = run;
  const unit = clusterUnit(cluster);
  try {
    await startOrExplain(remote, unit, cluster);
    return undefined;
  } catch (err) {
    const dropIn = clusterDropIn(cluster);
    const found = await lookAtFailure(remote, cluster, dropIn);
    const m = /^\s*listen_addresses\s*=\s*'([^']*)'/m.exec(found.dropIn);
    const wanted = normalizeListen(event.listen_addresses);
    if (!m || normalizeListen(m[1]) === wanted) throw err;
    const why = found.words;
    // Only the listen_addresses line: the drop-in's other settings (parameters) stay as they are.
    await writeFile(remote, dropIn, found.dropIn.replace(m[0], `listen_addresses = '${wanted}'`), "0644");
    await startOrExplain(remote, unit, cluster);
    return (
      `${unit} would not start with listen_addresses '${m[1]}' in ${dropIn} (${why}): ` +
      `rewritten to '${wanted}', started`
    );
  }
}
