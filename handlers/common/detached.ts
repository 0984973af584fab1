// Long remote steps (apt-get, dpkg repair, service restarts) run detached on the VM, so a dropped SSH
// link neither kills them mid-unpack nor leaves them orphaned with nobody reading their result:
//
//   /run/vm-install/steps/<id>/   cmd (the step's script), pid, out, err, rc (written when it ends)
//
// The step runs in a transient systemd unit (`systemd-run --collect`, unit vm-install-<id>-<time>), or
// under setsid where there is no systemd. The SSH command that starts it then follows it: it waits for
// `rc` and prints the step's output and exit status as if it had run in the channel itself. After a lost
// connection the handler reconnects and follows again ("follow" mode never starts anything).
//
// Step ids are derived from the job and the command (`<job>-<hash>`), so a job started again while a
// previous run's identical step still runs attaches to it instead of starting a second one; a
// different step still running from an earlier run is waited for before this one starts (one apt at a
// time). /run is cleared at boot, when no step can be running any more.

import { createHash } from "node:crypto";
import { quote } from "../../shared/shell-quote";
import { CommandError } from "./exec";

export const STEPS_DIR = "/run/vm-install/steps";

/** "start": attach to a live step of that id, else start it afresh; "follow": only wait for it. */
export type DetachMode = "start" | "follow";

/** `<job>-<first 12 hex of sha256(command)>`, safe as a file and unit name. */
export function stepId(job: string, command: string): string {
  const prefix =
    job
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, "-")
      .slice(0, 40) || "step";
  return `${prefix}-${createHash("sha256").update(command).digest("hex").slice(0, 12)}`;
}

/**
 * What the step's own shell runs inside the unit: hold `lock` for its whole life (flock, where the VM
 * has it: util-linux, on every Debian and Ubuntu), record the pid, run the step (which does not inherit
 * the lock's descriptor, so nothing it leaves running holds it), record the exit status. A follower
 * blocks on that lock instead of polling while the step runs.
 */
const RUNNER =
  `exec 9> "$1/lock"; command -v flock > /dev/null 2>&1 && flock 9; echo $$ > "$1/pid.tmp" && mv "$1/pid.tmp" "$1/pid"; ` +
  `sh "$1/cmd" 9>&- > "$1/out" 2> "$1/err" < /dev/null; echo $? > "$1/rc.tmp"; mv "$1/rc.tmp" "$1/rc"`;

/** Exit statuses of the follower itself (not of the step): the step died without one, or never started. */
export const STEP_DIED = 250;
export const STEP_NOT_STARTED = 251;

/**
 * The script (run as root) that starts or attaches to step `id` running `script`, then follows it:
 * its stdout/stderr are the step's, its exit status the step's. `script` is a complete shell command
 * (exports included); it is written to a file, never put on a command line of its own.
 */
export function detachedScript(id: string, script: string, mode: DetachMode, dir = STEPS_DIR): string {
  if (!/^[a-z0-9-]+$/.test(id)) throw new Error(`detachedScript: ${JSON.stringify(id)} is not a step id`);
  const start = [
    `rm -rf "$s" && mkdir -m 700 "$s" && printf '%s\\n' ${quote(script)} > "$s/cmd" || exit ${STEP_NOT_STARTED}`,
    `if command -v systemd-run >/dev/null 2>&1 && [ -d /run/systemd/system ]; then`,
    // systemd expands $VAR and turns $$ into $ in a unit's command line: every $ of the runner doubled.
    `  systemd-run --quiet --collect --unit="vm-install-${id}-$(date +%s%N)" --description="vm-install step ${id}" sh -c ${quote(RUNNER.replace(/\$/g, "$$$$"))} vmi "$s" || exit ${STEP_NOT_STARTED}`,
    `else setsid sh -c ${quote(RUNNER)} vmi "$s" < /dev/null > /dev/null 2>&1 & fi`,
  ];
  return [
    `D=${quote(dir)}; s="$D/${id}"; mkdir -p -m 700 "$D" || exit ${STEP_NOT_STARTED}`,
    `alive() { [ -s "$1/pid" ] && [ ! -e "$1/rc" ] && kill -0 "$(cat "$1/pid")" 2>/dev/null; }`,
    ...(mode === "start"
      ? [
          // Another step of an earlier run still going: one apt at a time, so wait for it first.
          `for o in "$D"/*; do [ -d "$o" ] && [ "$o" != "$s" ] || continue; ` +
            `if alive "$o"; then echo "vm-install: waiting for step \${o##*/}, still running from an earlier run" >&2; while alive "$o"; do sleep 0.2; done; fi; ` +
            `[ -e "$o/rc" ] && rm -rf "$o"; done`,
          `if alive "$s"; then echo "vm-install: attached to step ${id}, still running from an earlier run" >&2; else`,
          ...start,
          `fi`,
        ]
      : [`[ -d "$s" ] || { echo "vm-install: step ${id} is not on the VM" >&2; exit ${STEP_NOT_STARTED}; }`]),
    // The pid file appears once the runner holds its lock; from then on, wait on the lock, not a timer.
    `n=0; while [ ! -s "$s/pid" ] && [ ! -e "$s/rc" ] && [ $n -lt 200 ]; do n=$((n+1)); sleep 0.01; done`,
    `[ -s "$s/pid" ] && command -v flock > /dev/null 2>&1 && flock "$s/lock" true`,
    `n=0; while [ ! -e "$s/rc" ]; do`,
    `  if [ -s "$s/pid" ]; then kill -0 "$(cat "$s/pid")" 2>/dev/null || [ -e "$s/rc" ] || { cat "$s/out"; cat "$s/err" >&2; echo "vm-install: step ${id} ended without an exit status (killed?)" >&2; exit ${STEP_DIED}; }`,
    `  else n=$((n+1)); [ $n -gt 400 ] && { echo "vm-install: step ${id} did not start within 20 s" >&2; exit ${STEP_NOT_STARTED}; }; fi`,
    `  sleep 0.05`,
    `done`,
    `cat "$s/out"; cat "$s/err" >&2; exit "$(cat "$s/rc")"`,
  ].join("\n");
}

/** A command that failed because the SSH connection went away (not because of what it ran). */
export function isConnectionLoss(err: unknown): boolean {
  return (
    err instanceof CommandError &&
    err.code === null &&
    /SSH connection (was lost|is gone)|channel closed without an exit status|could not start the command|No response from server|Not connected/.test(
      err.message,
    )
  );
}
