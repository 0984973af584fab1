// daemon.json written and applied: a restart (or a reload, for keys dockerd re-reads on SIGHUP) that dockerd
// must survive. A file dockerd refuses is rolled back (the previous text, or none) and dockerd brought
// back on it; the job fails with dockerd's own lines from its journal, as install-postgres does for
// a listen_addresses the server refuses.

import { quote } from "../../lib/shared/shell-quote";
import type { Remote } from "../common/exec";
import { runLong } from "../common/exec";
import type { Change } from "../common/installer-model";
import type { Progress } from "../common/progress";
import { writeRemoteFile } from "../common/remote-file";
import { defineLook, type RootFact, rootFact } from "../common/vm-facts";
import {
  badFileError,
  DAEMON_JSON,
  type DaemonConfigPlan,
  type DaemonFile,
  parseDaemonFile,
  planDaemonConfig,
} from "./daemon-config";
import { type DaemonRecord, NO_RECORD, writeDaemonRecord } from "./daemon-record";
import { dockerdError, notTaken, RUNNING_PROBE, reloadLook, reloadRefusal } from "./daemon-running";
import type { DockerState } from "./docker-state";
import type { DockerEvent } from "./package-work";

import { daemonAnswers } from "./verify";

/**
 * Replaces daemon.json as root (remote-file.ts; /etc/docker is root's, created 0755 when missing), keeping
 * root's mode for it (0644 when new: dockerd runs as root, docker info shows it to the group); null removes it.
 */
export async function writeDaemonJson(remote: Remote, text: string | null): Promise<void> {
  if (text !== null) {
    await writeRemoteFile(remote, { path: DAEMON_JSON, content: text, writer: "root", mode: { keep: "0644" }, dir });
    return;
  }
  const opts = { sudo: true, label: `removing ${DAEMON_JSON}`, timeoutMs: 30_000, mutates: true };
  await remote.run(`rm -f ${quote(DAEMON_JSON)}`, opts);
}

const dir = { mode: "0755" };

/** dockerd's own lines in docker.service's journal (syslog prefixes cut off). */
export function dockerdLines(journal: string): string[] {
  return journal
    .split("\n")
    .filter((l) => /\bdockerd\[[0-9]+\]: /.test(l))
    .map((l) => l.replace(/^.*?\bdockerd\[[0-9]+\]: /, "").trim())
    .filter(Boolean);
}

async function journalSince(remote: Remote, mark: string): Promise<string[]> {
  const after = mark ? ` --after-cursor=${quote(mark)}` : "";
  const r = await remote.run(`journalctl -u docker.service${after} --no-pager -o short 2>/dev/null; true`, {
    sudo: true,
    check: false,
    label: "journalctl -u docker.service",
    timeoutMs: 60_000,
  });
  return dockerdLines(r.stdout);
}

/** systemctl restart (a failed unit and docker.socket reset first: dockerd's unit limits its starts). */
async function restart(remote: Remote, label: string): Promise<number> {
  const cmd =
    "systemctl reset-failed docker.service docker.socket 2>/dev/null; " +
    "systemctl start docker.socket 2>/dev/null; systemctl restart docker.service";
  const r = await runLong(remote, cmd, { label, timeoutMs: 180_000, check: false });
  return r.code ?? 1;
}

const DAEMON_JSON_AS_ROOT = {
  name: "daemon_json.root",
  command: `if [ -e ${quote(DAEMON_JSON)} ]; then cat ${quote(DAEMON_JSON)}; else exit 3; fi`,
  writer: "root",
  use: "daemon.json's exact bytes: merged, or put back if dockerd refuses the new one",
} as const;

/** daemon.json read as root (an admin may have made it 0600): for a file the unprivileged look could not read. */
export const DAEMON_FILE_LOOK = defineLook("the look at daemon.json as root", [DAEMON_JSON_AS_ROOT] as const);

/**
 * Before the write, in one exec: the file's exact bytes (to put back byte for byte), and where
 * docker.service's journal stands, its last entry's cursor ("" when it has none). A time would not do:
 * `--since` counts whole seconds, so an error dockerd logged earlier in the same second (a refused file the
 * run before) read as an answer to this change.
 */
export const DAEMON_WRITE_LOOK = defineLook("the look before daemon.json is written", [
  DAEMON_JSON_AS_ROOT,
  {
    name: "docker.journal_cursor",
    command: "journalctl -u docker.service -n 1 -o export --no-pager | sed -n 's/^__CURSOR=//p'",
    writer: "root",
    use: "dockerd's words on a refused file are what it logs after this",
  },
] as const);

/** Before a reload's write, the same and dockerd's running state, to see the reload take. */
export const DAEMON_RELOAD_WRITE_LOOK = defineLook("the look before daemon.json is written for a reload", [
  ...DAEMON_WRITE_LOOK.probes,
  RUNNING_PROBE,
] as const);

/** The file as root sees it: its bytes, or null when there is none. */
function daemonBytes(fact: RootFact): string | null {
  const f = rootFact(fact, `the rewrite of ${DAEMON_JSON}`);
  if (f.code === 3) return null;
  if (f.code !== 0) throw new Error(`cannot read ${DAEMON_JSON} on the VM as root (exit ${f.code})`);
  return f.text;
}

/** The look before the write: the file's bytes, the journal's cursor, and (a reload) dockerd's running state. */
function beforeWrite(stdout: string, reload: boolean): { previous: string | null; mark: string; running: string } {
  if (reload) {
    const f = DAEMON_RELOAD_WRITE_LOOK.parse(stdout);
    // As the poll's $(docker info ...) will read it: without the line break docker info ends with.
    const running = f.get("docker.running").text.replace(/\n+$/, "");
    return {
      previous: daemonBytes(f.get("daemon_json.root")),
      mark: f.get("docker.journal_cursor").text.trim(),
      running,
    };
  }
  const f = DAEMON_WRITE_LOOK.parse(stdout);
  return {
    previous: daemonBytes(f.get("daemon_json.root")),
    mark: f.get("docker.journal_cursor").text.trim(),
    running: "",
  };
}

/** Writes the file and restarts or reloads; on dockerd's refusal, rolls back and fails with its words. */
async function applyDaemonConfig(remote: Remote, plan: DaemonConfigPlan, progress: Progress): Promise<void> {
  const opts = { sudo: true, label: `reading ${DAEMON_JSON} and docker.service's journal cursor`, timeoutMs: 60_000 };
  const script = plan.restart ? DAEMON_WRITE_LOOK.script : DAEMON_RELOAD_WRITE_LOOK.script;
  const { previous, mark, running } = beforeWrite((await remote.run(script, opts)).stdout, !plan.restart);
  await progress.step(
    `writing ${DAEMON_JSON} (${plan.changed.join(", ")})`,
    () => writeDaemonJson(remote, plan.next),
    "daemon.json",
  );
  const refused = plan.restart
    ? await restartRefused(remote, mark, progress)
    : await reloadRefused(remote, plan, { mark, running }, progress);
  if (refused === undefined) return writeDaemonRecord(remote, plan.recordAfter, progress);
  progress.info(`dockerd refused the new ${DAEMON_JSON} (${refused.split("\n")[0]}); rolling it back`);
  await writeDaemonJson(remote, previous);
  // A refused reload leaves dockerd running on what it had: the file put back is all. A refused start needs one.
  const back = plan.restart ? await restart(remote, "systemctl restart docker.service (rolled back)") : 0;
  const answers =
    back === 0 &&
    (await daemonAnswers(remote).then(
      () => true,
      () => false,
    ));
  const how = plan.restart ? "docker.service restarted on it" : "dockerd kept running on it (not restarted)";
  throw new Error(
    `dockerd did not accept ${DAEMON_JSON} with ${plan.changed.join(", ")} set as asked; dockerd said:\n${refused}\n` +
      (answers
        ? `Rolled back: ${DAEMON_JSON} ${previous === null ? "removed" : "put back as it was"} and ${how}, serving. `
        : `Rolled back ${DAEMON_JSON}, but docker.service still does not come back: ` +
          "see journalctl -u docker.service. ") +
      "Fix the value in daemonConfig (or the registry mirrors / log settings) and run the job again.",
  );
}

/** The restart: undefined when dockerd started and answers, else dockerd's error. */
async function restartRefused(remote: Remote, mark: string, progress: Progress): Promise<string | undefined> {
  const code = await progress.step(
    "systemctl restart docker.service (daemon.json)",
    () => restart(remote, "systemctl restart docker.service"),
    "restart",
  );
  if (code === 0) {
    try {
      await daemonAnswers(remote);
      return undefined;
    } catch (err) {
      return (err as Error).message.split("\n")[0];
    }
  }
  return dockerdError(await journalSince(remote, mark));
}

/**
 * The reload: dockerd's running state read until it moves (daemon-running.ts); undefined when it shows the
 * file's values for the changed keys, else the refusal's words (dockerd's error lines, or what did not take).
 */
async function reloadRefused(
  remote: Remote,
  plan: DaemonConfigPlan,
  before: { mark: string; running: string },
  progress: Progress,
): Promise<string | undefined> {
  await progress.step(
    "systemctl reload docker.service (daemon.json)",
    () =>
      runLong(remote, "systemctl reload docker.service", {
        label: "systemctl reload docker.service",
        timeoutMs: 120_000,
      }),
    "reload",
  );
  const look = reloadLook(before.running, before.mark);
  const opts = { sudo: true, label: "docker info after the reload", timeoutMs: 60_000 };
  const after = look.parse((await remote.run(look.script, opts)).stdout);
  const missed = notTaken(after.get("docker.running").text, JSON.parse(plan.next), plan.changed);
  if (missed?.length === 0) return undefined;
  return reloadRefusal(missed, dockerdLines(after.get("docker.journal").text));
}

/** daemon.json as the VM has it; a file dockerd cannot read stops the job here. */
async function readDaemonFile(remote: Remote): Promise<DaemonFile> {
  const file = await readDaemonFileAsIs(remote);
  if (file.kind === "bad") throw badFileError(file.problem);
  return file;
}

/** daemon.json as the VM has it, even one dockerd cannot read (read as root: an admin may have made it 0600). */
export async function readDaemonFileAsIs(remote: Remote): Promise<DaemonFile> {
  const r = await remote.run(DAEMON_FILE_LOOK.script, {
    sudo: true,
    label: `reading ${DAEMON_JSON}`,
    timeoutMs: 30_000,
  });
  const bytes = daemonBytes(DAEMON_FILE_LOOK.parse(r.stdout).get("daemon_json.root"));
  return parseDaemonFile(bytes !== null, bytes ?? "");
}

/** daemon.json from the look, or read as root when the look could not; a file dockerd cannot read stops here. */
export async function daemonFileOf(remote: Remote, docker: DockerState, progress: Progress): Promise<DaemonFile> {
  const seen = docker.daemonJson;
  if (seen.kind === "unreadable") return progress.step(`reading ${DAEMON_JSON}`, () => readDaemonFile(remote), "check");
  const file = parseDaemonFile(seen.kind === "text", seen.kind === "text" ? seen.text : "");
  if (file.kind === "bad") throw badFileError(file.problem);
  return file;
}

/**
 * daemon.json merged with the settings, as a planned change; dockerd restarted or reloaded for it. `restarts`:
 * the restart starts a stopped docker.service too, so what is planned after it plans on a running unit.
 */
export function daemonConfigChange(
  file: DaemonFile,
  daemonActive: boolean,
  event: DockerEvent,
  recorded: DaemonRecord = NO_RECORD,
): (Change<DockerEvent> & { readonly restarts: boolean }) | undefined {
  const plan = planDaemonConfig(file, event, daemonActive, recorded);
  if (!plan) return undefined;
  return {
    restarts: plan.restart,
    kind: "daemon-config",
    what: plan.lines,
    why: `${plan.changed.join(", ")} in ${DAEMON_JSON} differ from the settings`,
    replan: true,
    async apply({ remote, progress }) {
      await applyDaemonConfig(remote, plan, progress);
      return undefined;
    },
  };
}
