// Whether dockerd took a reloaded daemon.json, read from what it reports of its running configuration
// (`docker info`), never from its log: dockerd's "Reloaded configuration: {...}" line quotes every value, so
// a label `note=level=error` once read as a refusal. The journal gives only the words of an error, reduced
// (printable, each line capped, no configuration dump). The poll waits for the state to move, bounded.

import { printableLine } from "../../lib/shared/printable-text";
import { quote } from "../../lib/shared/shell-quote";
import { tail } from "../common/exec";
import { defineLook } from "../common/vm-facts";
import { DAEMON_JSON, type OBSERVED_RELOAD_KEYS } from "./daemon-config";
import { isObject, sameJson } from "./json-value";

/** Each of OBSERVED_RELOAD_KEYS with its value when unset (dockerd's default). */
const UNSET: Readonly<Record<(typeof OBSERVED_RELOAD_KEYS)[number], unknown>> = {
  debug: false,
  labels: [],
  "live-restore": false,
  "registry-mirrors": [],
};
const observed = (k: string): k is keyof typeof UNSET => k in UNSET;

/** docker info's template: the observed keys as one JSON object, keyed by their daemon.json names. */
const TEMPLATE =
  '{"debug":{{json .Debug}},"labels":{{json .Labels}},"live-restore":{{json .LiveRestoreEnabled}},' +
  '"registry-mirrors":{{json .RegistryConfig.Mirrors}}}';
const INFO = `docker info --format ${quote(TEMPLATE)}`;

/** Before a reload's write: dockerd's running state (only asked while docker.service runs). */
export const RUNNING_PROBE = {
  name: "docker.running",
  command: INFO,
  writer: "root",
  use: "dockerd's running configuration before a reload, to see the reload take",
} as const;

/** A value as dockerd reports it: mirrors with one trailing slash, no labels as [], labels in any order. */
function normal(key: string, v: unknown): unknown {
  const value = v === null || v === undefined ? (observed(key) ? UNSET[key] : v) : v;
  if (key === "registry-mirrors" && Array.isArray(value))
    return value.map((m) => (typeof m === "string" ? `${m.replace(/\/+$/, "")}/` : m));
  if (key === "labels" && Array.isArray(value)) return [...value].map(String).sort();
  return value;
}

/** Pure. The observed keys among `keys` whose running value is not the file's; undefined: state unreadable. */
export function notTaken(running: string, file: Record<string, unknown>, keys: string[]): string[] | undefined {
  let state: unknown;
  try {
    state = JSON.parse(running);
  } catch {
    return undefined;
  }
  if (!isObject(state)) return undefined;
  return keys.filter((k) => observed(k) && !sameJson(normal(k, state[k]), normal(k, file[k])));
}

/**
 * After `systemctl reload` (SIGHUP, answered by dockerd after systemctl returns): dockerd's state polled until
 * it moves from `before`, or dockerd logs an error (its own level field, not a quoted value), or 20 s; then
 * the state and the journal since `mark` in one exec.
 */
export function reloadLook(before: string, mark: string) {
  const after = mark ? ` --after-cursor=${quote(mark)}` : "";
  const journal = `journalctl -u docker.service${after} --no-pager`;
  const poll =
    `before=${quote(before)}; i=0; while :; do now=$(${INFO} 2>/dev/null); [ "$now" != "$before" ] && break; ` +
    `${journal} -o cat 2>/dev/null | grep -Eq '^time="[^"]*" level=(error|fatal) ' && break; ` +
    `i=$((i+1)); [ "$i" -ge 40 ] && break; sleep 0.5; done; printf '%s' "$now"`;
  return defineLook("the look at dockerd after a reload", [
    { name: "docker.running", command: poll, writer: "root", use: "whether dockerd took the reloaded file" },
    { name: "docker.journal", command: `${journal} -o short`, writer: "root", use: "dockerd's words on a refusal" },
  ] as const);
}

/** A logfmt line of dockerd's (`time="..." level=error msg=...`), or plain text (a start's fatal words). */
const LOGFMT = /^time="[^"]*" level=([a-z]+) /;

/** dockerd's error lines: by its own level field (error, fatal), or plain lines naming a configuration failure. */
function errorLines(lines: string[]): string[] {
  return lines.filter((l) => {
    const level = LOGFMT.exec(l)?.[1];
    return level ? level === "error" || level === "fatal" : /unable to configure|failed to start daemon/i.test(l);
  });
}

/** Lines as the words of a message: printable, each capped, at most the last 5. */
function words(lines: string[]): string {
  return tail(
    lines
      .map((l) => printableLine(l))
      .map((l) => (l.length > 300 ? `${l.slice(0, 300)}…` : l))
      .join("\n"),
    5,
  );
}

/**
 * What dockerd said against the file: its error lines, else its last lines without a configuration dump
 * ("Reloaded configuration: {...}"); each printable and capped.
 */
export function dockerdError(lines: string[]): string {
  const errors = errorLines(lines);
  const said = errors.length ? errors : lines.filter((l) => !/msg="Reloaded configuration/.test(l));
  return words(said) || "(dockerd wrote nothing to the journal)";
}

/** The refusal's words when the state did not move: dockerd's error lines, or what did not take. */
export function reloadRefusal(missed: string[] | undefined, lines: string[]): string {
  const errors = errorLines(lines);
  if (errors.length) return words(errors);
  return missed === undefined
    ? "`docker info` did not answer after the reload"
    : `dockerd's running configuration did not take ${missed.join(", ")} from ${DAEMON_JSON} within 20 s of the reload`;
}
