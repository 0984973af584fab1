// cloud-init's state on the VM, read from its own files rather than `cloud-init status`, whose exit codes
// and words differ by version (22.4, Debian 12's, has no exit 2 and says "error" while stages still run).
import { CommandError, type Remote, tail } from "./exec";
import { type FirstBootClock, pollUntil } from "./first-boot";
import { describeHolders, readLockHolders } from "./lock-holders";
import type { Progress } from "./progress";
import { defineLook, type Fact } from "./vm-facts";

// cloud-init writes /run/cloud-init/status.json as each stage starts and ends (its errors, and from 23.4
// on recoverable_errors, per stage) and result.json once modules:final has ended; /run is per boot. So:
// no result.json yet, or a stage named, means running; result.json with errors means it failed;
// recoverable errors mean done with warnings. A unit that failed, or no unit left running at the end of
// the boot without a result, means it died. A VM without cloud-init answers the first test.
/** cloud-init's units; cloud-init.service is cloud-init-network.service from 24.3 on. */
const UNIT_NAMES = ["cloud-init-local", "cloud-init", "cloud-init-network", "cloud-config", "cloud-final"];
const UNITS = UNIT_NAMES.map((u) => `${u}.service`).join(" ");
const DISABLED = ["/etc/cloud/cloud-init.disabled", "/run/cloud-init/disabled"];
const STAGES = ["init-local", "init", "modules-config", "modules-final"];

/** One unprivileged look, each of cloud-init's files and systemd's view its own probe (all root-written). */
export const CLOUD_INIT_PROBES = [
  {
    name: "cloud_init",
    command:
      "if [ -e /run/cloud-init ] || command -v cloud-init > /dev/null 2>&1; then echo present; else echo none; fi",
    writer: "root",
    use: "whether the VM has cloud-init at all",
  },
  {
    name: "cloud_init.markers",
    command:
      `for f in ${[...DISABLED, "/run/cloud-init/enabled"].join(" ")}; do [ -e "$f" ] && echo "$f"; done; ` +
      "grep -qw 'cloud-init=disabled' /proc/cmdline && echo 'cloud-init=disabled (kernel)'; true",
    writer: "root",
    use: "cloud-init disabled, or enabled for this boot",
  },
  {
    name: "systemd.system",
    command: "systemctl is-system-running",
    writer: "root",
    use: "whether the boot is still starting (cloud-init waited for)",
  },
  {
    name: "cloud_init.units",
    command: `systemctl show -p Id -p LoadState -p ActiveState -p Result ${UNITS}`,
    writer: "root",
    use: "a cloud-init unit failed or still running",
  },
  {
    name: "cloud_init.status",
    command: "cat /run/cloud-init/status.json",
    writer: "root",
    use: "the stage running, each stage's errors",
  },
  {
    name: "cloud_init.result",
    command: "cat /run/cloud-init/result.json",
    writer: "root",
    use: "the first boot ended, and its errors",
  },
] as const;

/** The look while waiting: cloud-init's probes alone (the first one is in the kit's boot look). */
export const CLOUD_INIT_LOOK = defineLook("the look at cloud-init", CLOUD_INIT_PROBES);

/** cloud-init's own warning and error lines of this boot, and the end of its output log (root). */
export const CLOUD_INIT_LOG_LOOK = defineLook("the look at cloud-init's logs", [
  {
    name: "cloud_init.log",
    command:
      "awk '/running .init-local. at/ { n = 0 } /\\[(WARNING|ERROR|CRITICAL)\\]/ { l[++n] = $0 } " +
      "END { for (i = (n > 8 ? n - 7 : 1); i <= n; i++) print l[i] }' /var/log/cloud-init.log",
    writer: "root",
    use: "cloud-init's warnings and errors, in the job's error or warnings",
  },
  {
    name: "cloud_init.output",
    // Its output log ends with what cloud-init prints itself (host keys, fingerprints, ci-info tables): left out.
    command:
      "awk '/^-----BEGIN SSH HOST KEY/ { skip = 1 } " +
      "!skip && !/^(ci-info: |Cloud-init v[.] |#+$|<[0-9]+>)/ { print } /^-----END SSH HOST KEY/ { skip = 0 }' " +
      "/var/log/cloud-init-output.log | tail -n 5",
    writer: "root",
    use: "the end of cloud-init's output log, in the job's error",
  },
] as const);

type Json = Record<string, unknown>;

export interface CloudInitProbe {
  present: boolean;
  markers: string[];
  system: string;
  units: { id: string; load: string; active: string; result: string }[];
  status?: Json;
  result?: Json;
}

/** The name of one of cloud-init's probes. */
export type CloudInitFactName = (typeof CLOUD_INIT_PROBES)[number]["name"];

/** cloud-init's state from its probes' answers (from CLOUD_INIT_LOOK or the kit's boot look). */
export function cloudInitFrom(get: (name: CloudInitFactName) => Fact): CloudInitProbe {
  const json = (s: string): Json | undefined => {
    try {
      const v = JSON.parse(s);
      return v && typeof v === "object" ? ((v as Json).v1 as Json) : undefined;
    } catch {
      return undefined;
    }
  };
  const units = get("cloud_init.units")
    .text.split(/\n\s*\n/)
    .map((block) => Object.fromEntries(block.split("\n").map((l) => [l.split("=")[0], l.slice(l.indexOf("=") + 1)])))
    .filter((u) => u.Id && u.LoadState === "loaded")
    .map((u) => ({ id: u.Id, load: u.LoadState, active: u.ActiveState ?? "", result: u.Result ?? "" }));
  return {
    present: get("cloud_init").text.trim() === "present",
    markers: get("cloud_init.markers").text.split("\n").filter(Boolean),
    system: get("systemd.system").text.split("\n")[0].trim(),
    units,
    status: json(get("cloud_init.status").text),
    result: json(get("cloud_init.result").text),
  };
}

/** `logOnly`: a cloud-init before 23.4, which records no recoverable errors: its log has its warnings. */
export type DoneState = { kind: "done"; warnings: string[]; logOnly?: boolean };

export type CloudInitState =
  | { kind: "absent" | "not-run" | "disabled"; words: string }
  | { kind: "running"; words: string }
  | DoneState
  | { kind: "failed"; errors: string[]; warnings: string[]; stage?: string };

const stageWords = (stage: string) => stage.replace(/^modules-/, "modules:");

/** Every stage's errors (the list) and recoverable errors ("LEVEL: message", from 23.4 on). */
function problems(probe: CloudInitProbe): { errors: string[]; warnings: string[] } {
  const errors = new Set<string>();
  const warnings = new Set<string>();
  const stages = [...STAGES.map((s) => probe.status?.[s] as Json | undefined), probe.result];
  for (const stage of stages) {
    for (const e of (stage?.errors as unknown[] | undefined) ?? []) errors.add(String(e));
    for (const [level, list] of Object.entries((stage?.recoverable_errors as Json | undefined) ?? {})) {
      for (const m of Array.isArray(list) ? list : []) warnings.add(`${level}: ${String(m).replace(/\s+/g, " ")}`);
    }
  }
  return { errors: [...errors], warnings: [...warnings] };
}

/** What is still running, or why it has stopped without finishing. */
function unfinished(probe: CloudInitProbe): CloudInitState {
  const stage = probe.status?.stage as string | null | undefined;
  const failed = probe.units.find((u) => u.active === "failed");
  const busy = probe.units.some((u) => u.active === "activating" || u.active === "reloading");
  const booting = probe.system === "" || /^(initializing|starting)$/.test(probe.system);
  if (!busy && !booting && probe.units.length > 0) {
    const ended = "no cloud-init unit is left running and the boot has ended";
    const why = failed ? `its unit ${failed.id} failed (${failed.result})` : ended;
    const errors = [`cloud-init stopped before finishing the first boot: ${why}`, ...problems(probe).errors];
    return { kind: "failed", stage: stage ?? undefined, errors, warnings: [] };
  }
  if (stage) return { kind: "running", words: `cloud-init to finish the first boot: stage ${stageWords(stage)}` };
  const done = STAGES.filter((s) => (probe.status?.[s] as Json | undefined)?.finished);
  const where = done.length ? `${stageWords(done[done.length - 1])} done, next stage` : "not started yet";
  return { kind: "running", words: `cloud-init to finish the first boot: ${where}` };
}

export function cloudInitState(probe: CloudInitProbe): CloudInitState {
  if (!probe.present) return { kind: "absent", words: "no cloud-init on the VM" };
  if (!probe.status) {
    const disabled = probe.markers.find((m) => !m.endsWith("/enabled"));
    if (disabled) return { kind: "disabled", words: `cloud-init is disabled on the VM (${disabled})` };
    const booting = /^(initializing|starting)$/.test(probe.system);
    const starting = booting || probe.units.some((u) => u.active === "activating");
    if (starting && probe.markers.some((m) => m.endsWith("/enabled")))
      return { kind: "running", words: "cloud-init to finish the first boot: not started yet" };
    return { kind: "not-run", words: "cloud-init is installed but did not run on this boot" };
  }
  if (!probe.result || probe.status.stage) return unfinished(probe);
  const { errors, warnings } = problems(probe);
  if (errors.length) return { kind: "failed", errors, warnings };
  const logOnly = !STAGES.some((st) => (probe.status?.[st] as Json | undefined)?.recoverable_errors !== undefined);
  return { kind: "done", warnings, ...(logOnly ? { logOnly } : {}) };
}

/** cloud-init ended the first boot in error, or did not end it within the wait. */
class FirstBootError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FirstBootError";
  }
}

/** cloud-init's state (the boot look's answer first, if given); while it runs, with apt's lock holders. */
async function look(remote: Remote, seen?: CloudInitProbe): Promise<CloudInitState> {
  const opts = { env: { LC_ALL: "C" }, label: "looking at cloud-init", timeoutMs: 30_000 };
  const probe =
    seen ?? cloudInitFrom(CLOUD_INIT_LOOK.parse((await remote.run(CLOUD_INIT_LOOK.script, opts)).stdout).get);
  const state = cloudInitState(probe);
  if (state.kind !== "running") return state;
  const holders = await readLockHolders(remote).catch((err) => {
    if (err instanceof CommandError) return [];
    throw err;
  });
  return holders.length ? { ...state, words: `${state.words}; apt lock: ${describeHolders(holders)}` } : state;
}

/** This boot's warning and error lines of /var/log/cloud-init.log (the last 8), and the end of its output log. */
async function readLog(remote: Remote): Promise<{ log: string; output: string }> {
  const opts = { sudo: true, check: false, label: "reading cloud-init's log", timeoutMs: 30_000 };
  const r = await remote.run(CLOUD_INIT_LOG_LOOK.script, opts).catch((err) => {
    if (err instanceof CommandError) return undefined;
    throw err;
  });
  if (!r) return { log: "", output: "" };
  const facts = CLOUD_INIT_LOG_LOOK.parse(r.stdout);
  return { log: facts.get("cloud_init.log").text, output: facts.get("cloud_init.output").text };
}

/** A log line without its timestamp: "util.py[WARNING]: Failed loading yaml blob. ...". */
const logMessage = (line: string) => line.replace(/^\S+ \S+ - /, "").slice(0, 300);

/** cloud-init's own lines about what failed: its log's warnings and errors, its output's last lines. */
async function logLines(remote: Remote): Promise<string> {
  const { log, output } = await readLog(remote);
  const out = output.trim() ? ["cloud-init-output.log ends:", ...tail(output, 5).split("\n")] : [];
  const lines = [...tail(log, 8).split("\n"), ...out];
  return lines
    .filter(Boolean)
    .map((l) => (l.length > 300 ? `${l.slice(0, 297)}...` : l))
    .join("\n");
}

/** At most `n` of `items`, and how many more there are. */
function capped(items: string[], n: number): string[] {
  if (items.length <= n) return items;
  return [...items.slice(0, n), `(${items.length - n} more: sudo cloud-init status --long)`];
}

/** The job's error when cloud-init ended the first boot in error: its errors, its lines, what to do. */
function failureWords(end: { errors: string[]; stage?: string }, own: string): string {
  const where = end.stage ? ` (in stage ${stageWords(end.stage)})` : "";
  const errs = capped(end.errors, 5).join("; ");
  return [
    `cloud-init reported errors on the VM's first boot${where}, so nothing was installed on a half set-up VM: ${errs}`,
    ...(own ? ["cloud-init's own lines:", own] : []),
    "Read /var/log/cloud-init.log and /var/log/cloud-init-output.log on the VM (`sudo cloud-init status --long`); " +
      "fix the VM's user-data (cloud_init) and replace the VM, or mend what failed by hand and reboot it " +
      "(cloud-init then reports that boot), then run the job again; apt.first_boot_wait_sec 0 skips this look.",
  ].join("\n");
}

/** The result's warning for a first boot done with recoverable errors (23.4+), or WARNING lines (22.x). */
async function doneWarnings(remote: Remote, end: DoneState, progress?: Progress): Promise<string[]> {
  // Before 23.4 a part that did not parse, or failed its schema, leaves only a WARNING in the log.
  const logged = end.logOnly ? (await readLog(remote)).log.split("\n").filter((l) => /\[WARNING\]/.test(l)) : [];
  const warnings = [...end.warnings, ...logged.map(logMessage)];
  const count = warnings.length ? ` with ${warnings.length} recoverable error(s)` : "";
  progress?.info(`cloud-init has finished the first boot${count}`);
  if (warnings.length === 0) return [];
  const kind = end.logOnly ? "warnings in its log (/var/log/cloud-init.log)" : "recoverable errors";
  return [`cloud-init finished the VM's first boot with ${kind}: ${capped(warnings, 5).join("; ")}`];
}

/**
 * Waits for cloud-init to finish the VM's first boot (when it has cloud-init at all). Returns the
 * warnings for the result (recoverable errors); throws FirstBootError when it failed or did not finish.
 */
export async function waitForCloudInit(
  remote: Remote,
  clock: FirstBootClock,
  progress?: Progress,
  first?: CloudInitProbe,
): Promise<string[]> {
  if (!clock.enabled) return [];
  let seen = first;
  let last = { kind: "absent", words: "" } as CloudInitState;
  const started = clock.now();
  const end = await pollUntil(
    clock,
    async () => {
      const given = seen;
      seen = undefined;
      last = await look(remote, given);
      return last.kind === "running" ? { waiting: last.words } : { done: last };
    },
    progress,
  );
  if (progress && clock.now() > started + 1000) progress.timings.first_boot = clock.now() - started;
  if (!end) {
    const still = last.kind === "running" ? last.words.replace(/^cloud-init to finish the first boot: /, "") : "it";
    const after = Math.round((clock.now() - started) / 1000);
    throw new FirstBootError(
      `cloud-init had not finished the VM's first boot after ${after} s (still waiting for ${still}): ` +
        `${clock.limitWords()}. ` +
        "The VM goes on booting; run the job again (raise run_id) once `cloud-init status` on it says done.",
    );
  }
  if (end.kind === "failed") throw new FirstBootError(failureWords(end, await logLines(remote)));
  if (end.kind === "done") return doneWarnings(remote, end, progress);
  // No cloud-init, or one that does not run on this boot: nothing to wait for, nothing to say.
  return [];
}
