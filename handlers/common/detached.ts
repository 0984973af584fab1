// Long remote steps (apt-get, dpkg repair, service restarts) run detached on the VM, so a dropped SSH
// link neither kills them mid-unpack nor leaves them orphaned with nobody reading their result; the
// command that starts a step follows it, and after a lost connection the handler follows it again.

import { createHash } from "node:crypto";
import { quote } from "../../lib/shared/shell-quote";
import { CommandError } from "./exec";

// Each step's files on the VM:
//
//   /run/vm-install/steps/<id>/   cmd (the step's script), pid and start (its runner's pid and start
//                                 time), proxy (the proxies it was given), out, err, rc (when it ends)
//
// The step runs in a transient systemd unit (`systemd-run --collect`, unit vm-install-<id>-<time>), or
// under setsid where there is no systemd. The SSH command that starts it then follows it: it waits for
// `rc` and prints the step's output and exit status as if it had run in the channel itself. After a lost
// connection the handler reconnects and follows again ("follow" mode never starts anything).
//
// Step ids are derived from the job and the command (`<job>-<hash>`), so a job started again while a
// previous run's identical step still runs attaches to it instead of starting a second one; a
// different step still running from an earlier run is waited for before this one starts (one apt at a
// time). A step is running while its runner is: the pid file's process with the start time recorded
// beside it (/proc/<pid>/stat field 22), never merely a live pid, which the kernel hands out again. /run
// is cleared at boot; finished and dead steps older than STALE_AFTER_MIN go at the next step's start.
//
// A unit does not inherit the login session's environment, so a proxy the VM's users get from
// /etc/environment (pam_env) or their login would not reach apt in it: the starter passes
// http_proxy, https_proxy, ftp_proxy, all_proxy and no_proxy (either case) into the unit (or the setsid
// runner), and a step whose fetches failed says which proxy it used. apt's own Acquire::*::Proxy
// (apt.conf) needs nothing: apt reads it in the unit too.
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
 * has it: util-linux, on every Debian and Ubuntu), record its start time then its pid, run the step
 * (which does not inherit the lock's descriptor, so nothing it leaves running holds it), record the exit
 * status. A follower blocks on that lock instead of polling while the step runs.
 */
const RUNNER =
  `d=$1; exec 9> "$d/lock"; command -v flock > /dev/null 2>&1 && flock 9; ` +
  `x=$(cat /proc/$$/stat); x=\${x##*) }; set -- $x; echo "\${20}" > "$d/start"; echo $$ > "$d/pid.tmp" && mv ` +
  `"$d/pid.tmp" "$d/pid"; ` +
  `sh "$d/cmd" 9>&- > "$d/out" 2> "$d/err" < /dev/null; echo $? > "$d/rc.tmp"; mv "$d/rc.tmp" "$d/rc"`;

/** Finished and dead steps are kept this long (a follower that lost its link reads the result there), then removed. */
export const STALE_AFTER_MIN = 60;

/** The proxy variables a step is given, as curl, wget and apt read them (both cases are in use). */
const PROXY_VARIABLES = ["http_proxy", "https_proxy", "ftp_proxy", "all_proxy", "no_proxy"].flatMap((n) => [
  n,
  n.toUpperCase(),
]);

/**
 * What a failed step printed when a fetch could not reach its server: apt's "Failed to fetch", "Could
 * not connect", curl's "Could not resolve host", and the socket errors under them.
 */
const FETCH_FAILED =
  "Failed to fetch|Could not (connect|resolve)|Unable to connect|Temporary failure resolving|Connection " +
  "(refused|timed out)|Network is unreachable|No route to host|proxy";

/**
 * The shell functions every mode uses. `started PID`: field 22 of /proc/PID/stat (the start time in
 * clock ticks since boot; the command name before it may hold spaces and parentheses, hence from the last
 * ")"). `alive DIR`: the step in DIR has no exit status and its runner is still that very process:
 * the recorded start time matches, or, for a step recorded without one (an older vm-install), the
 * process is a runner of DIR.
 */
const FUNCTIONS = [
  `started() { x=$(cat "/proc/$1/stat" 2>/dev/null) || return 1; x=\${x##*) }; set -- $x; echo "\${20}"; }`,
  `alive() { [ -s "$1/pid" ] && [ ! -e "$1/rc" ] || return 1; p=$(cat "$1/pid"); ` +
    `if [ -s "$1/start" ]; then [ "$(started "$p")" = "$(cat "$1/start")" ]; ` +
    `else tr '\\000' '\\n' < "/proc/$p/cmdline" 2>/dev/null | grep -qxF "$1"; fi; }`,
];

/**
 * Exports the proxy settings the step is given (the setsid runner inherits them), names them in "$@"
 * as --setenv= arguments for systemd-run, and describes them in "$s/proxy". Per variable, the first
 * that has it: this shell's own environment (what sudo kept), the login session's (the environment sudo
 * itself was started with, /proc/$PPID/environ: pam_env gives it /etc/environment, sudo's own PAM stack on
 * Debian does not), then /etc/environment itself. A value with anything but URL and host-list characters is
 * left out, and said.
 */
const PROXIES = [
  `set --; said=""`,
  `for n in ${PROXY_VARIABLES.join(" ")}; do`,
  `  eval "v=\\\${$n-}"; from="this shell's environment"`,
  `  [ -n "$v" ] || { v=$(sed -z -n "s/^$n=//p" "/proc/$PPID/environ" 2>/dev/null | head -z -n 1 | tr -d '\\000'); ` +
    `from="the login environment"; }`,
  `  [ -n "$v" ] || { v=$(sed -n "s/^[[:space:]]*\\(export[[:space:]]\\{1,\\}\\)\\{0,1\\}$n=//p" /etc/environment ` +
    `2>/dev/null | tail -n 1); ` +
    `v=\${v%\\"}; v=\${v#\\"}; v=\${v%\\'}; v=\${v#\\'}; from="/etc/environment"; }`,
  `  [ -n "$v" ] || continue`,
  `  case "$v" in *[!]A-Za-z0-9._~:/?#@%+=,*[-]*) echo "vm-install: $n from $from left out of step \${s##*/}: not a ` +
    `URL or host list" >&2; continue;; esac`,
  // --setenv=NAME takes the value from systemd-run's own environment: a proxy's credentials stay off its command line.
  // The description goes into job messages: a proxy's user and password stay out of it.
  `  export "$n=$v"; set -- "$@" "--setenv=$n"; w=$(printf '%s' "$v" | sed 's#//[^/@]*@#//[credentials]@#g'); ` +
    `said="\${said:+$said, }$n=$w (from $from)"`,
  `done`,
  `a=$(apt-config dump 2>/dev/null | grep -i '^Acquire::[a-z]*::Proxy ' | tr '\\n' ' ')`,
  `{ if [ -n "$said" ]; then printf 'with %s' "$said"; else printf 'without a proxy in its environment'; fi; [ -n ` +
    `"$a" ] && printf '; apt.conf: %s' "$a"; echo; } > "$s/proxy"`,
];

/** The step failed, or (apt-get update, exit 0) only warned that fetches failed. */
const FAILED_OR_WARNED = `{ [ "$rc" != 0 ] || grep -q '^W: Failed to fetch' "$s/out" "$s/err"; }`;

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
    ...PROXIES,
    `if command -v systemd-run >/dev/null 2>&1 && [ -d /run/systemd/system ]; then`,
    // systemd expands $VAR and turns $$ into $ in a unit's command line: every $ of the runner doubled.
    // --setenv values are not expanded (they are the unit's Environment=, not its command line).
    `  systemd-run --quiet --collect --unit="vm-install-${id}-$(date +%s%N)" --description="vm-install step ${id}" ` +
      `"$@" sh -c ${quote(RUNNER.replace(/\$/g, "$$$$"))} vmi "$s" || exit ${STEP_NOT_STARTED}`,
    `else setsid sh -c ${quote(RUNNER)} vmi "$s" < /dev/null > /dev/null 2>&1 & fi`,
  ];
  return [
    `D=${quote(dir)}; s="$D/${id}"; mkdir -p -m 700 "$D" || exit ${STEP_NOT_STARTED}`,
    ...FUNCTIONS,
    ...(mode === "start"
      ? [
          // Another step of an earlier run still going: one apt at a time, so wait for it first.
          `for o in "$D"/*; do [ -d "$o" ] && [ "$o" != "$s" ] || continue; ` +
            `if alive "$o"; then echo "vm-install: waiting for step \${o##*/}, still running from an earlier run" ` +
            `>&2; while alive "$o"; do sleep 0.2; done; fi; done`,
          `find "$D" -mindepth 1 -maxdepth 1 -type d -mmin +${STALE_AFTER_MIN} | while read -r o; do alive "$o" || ` +
            `rm -rf "$o"; done`,
          `if alive "$s"; then echo "vm-install: attached to step ${id}, still running from an earlier run" >&2; else`,
          ...start,
          `fi`,
        ]
      : [`[ -d "$s" ] || { echo "vm-install: step ${id} is not on the VM" >&2; exit ${STEP_NOT_STARTED}; }`]),
    // The pid file appears once the runner holds its lock; from then on, wait on the lock, not a timer.
    `n=0; while [ ! -s "$s/pid" ] && [ ! -e "$s/rc" ] && [ $n -lt 200 ]; do n=$((n+1)); sleep 0.01; done`,
    `[ -s "$s/pid" ] && command -v flock > /dev/null 2>&1 && flock "$s/lock" true`,
    `n=0; while [ ! -e "$s/rc" ]; do`,
    `  if [ -s "$s/pid" ]; then alive "$s" || [ -e "$s/rc" ] || { cat "$s/out"; cat "$s/err" >&2; echo "vm-install: ` +
      `step ${id} ended without an exit status (killed?)" >&2; exit ${STEP_DIED}; }`,
    `  else n=$((n+1)); [ $n -gt 400 ] && { echo "vm-install: step ${id} did not start within 20 s" >&2; exit ` +
      `${STEP_NOT_STARTED}; }; fi`,
    `  sleep 0.05`,
    `done`,
    `rc=$(cat "$s/rc"); cat "$s/out"; cat "$s/err" >&2`,
    // Which proxy a failed fetch went through (or that it went direct) is what an "unreachable" needs.
    // Also after apt-get update's warnings (exit 0): it only warns when it reaches no server; apt.ts reads it.
    `${FAILED_OR_WARNED} && [ -s "$s/proxy" ] && grep -qiE ${quote(FETCH_FAILED)} "$s/out" "$s/err" && ` +
      `echo "vm-install: step ${id} ran $(cat "$s/proxy")" >&2`,
    `exit "$rc"`,
  ].join("\n");
}

/** A command that failed because the SSH connection went away (not because of what it ran). */
const CONNECTION_LOSS = new RegExp(
  "SSH connection (was lost|is gone)|channel closed without an exit status|could not start the command|" +
    "No response from server|Not connected",
);

export function isConnectionLoss(err: unknown): boolean {
  return err instanceof CommandError && err.code === null && CONNECTION_LOSS.test(err.message);
}
