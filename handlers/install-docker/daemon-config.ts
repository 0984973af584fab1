// /etc/docker/daemon.json as settings: the rules of the pass-through keys, and the pure decision of what
// the file must become (merged with every key the settings do not own) and whether dockerd must be
// restarted or only reloaded for it. The writing, the restart and the rollback are in daemon-config-apply.ts.

import { type JsonSchema, type Validator, withSchema } from "../../lib/shared/validate";
import { type DaemonRecord, NO_RECORD, nextRecord, takenBack } from "./daemon-record";
import { isObject, sameJson } from "./json-value";

export const DAEMON_JSON = "/etc/docker/daemon.json";

/** Keys the typed settings own: the pass-through may not set them. */
export const TYPED_KEYS = ["log-driver", "log-opts", "registry-mirrors"] as const;

/**
 * Keys dockerd applies on SIGHUP (`systemctl reload docker.service`) without a restart. Source: the
 * dockerd reference, "Configuration reload behavior" (docs.docker.com/reference/cli/dockerd), and
 * moby's daemon/reload.go (v24: "These are the settings that Reload changes"). log-driver and log-opts
 * are not among them: they need a restart (and then apply to containers created after it).
 */
const RELOADABLE_KEYS: ReadonlySet<string> = new Set([
  "debug",
  "labels",
  "live-restore",
  "max-concurrent-downloads",
  "max-concurrent-uploads",
  "max-download-attempts",
  "shutdown-timeout",
  "insecure-registries",
  "registry-mirrors",
]);

/**
 * The reloadable keys whose running value `docker info` shows: a reload's outcome is read from them
 * (daemon-running.ts). A change with none of them, or with a key outside RELOADABLE_KEYS, restarts dockerd.
 */
export const OBSERVED_RELOAD_KEYS = ["debug", "labels", "live-restore", "registry-mirrors"] as const;

/**
 * Keys the pass-through refuses, and why. hosts: the API on a TCP socket is root for whoever reaches it,
 * and with Debian's and Docker's units (`-H fd://`) dockerd refuses to start at all. data-root/graph and
 * exec-root/pidfile: moving them hides every image and container (or breaks the unit's socket and pid
 * files) on a restart, and so do userns-remap and storage-driver by other names; authorization-plugins
 * hands the API to a plugin. tlskey: a private key's path is a secret's place, not a setting to pass blindly.
 */
export const REFUSED_KEYS: Readonly<Record<string, string>> = {
  hosts: "exposes the Docker API (root on the VM) and conflicts with the unit's -H fd://",
  "data-root": "moves every image and container out of sight on the next restart",
  graph: "the old name of data-root",
  "exec-root": "the unit and docker.socket expect the default",
  pidfile: "the unit and docker.socket expect the default",
  tlskey: "a private key's place: set it on the VM by hand",
  // The same data by other names: a remap or another driver shows dockerd other images and containers.
  "userns-remap": "remaps dockerd into another data directory: the images and containers go out of sight",
  "storage-driver": "another driver reads another directory: the images and containers go out of sight",
  "authorization-plugins": "hands every API call (root on the VM) to a plugin's judgement",
};

/** dockerd's option names in daemon.json: lower-case words joined by hyphens ("max-concurrent-downloads"). */
const DAEMON_KEY = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
/** A key or value that looks like a credential: never passed through (it would sit in cdktf.json and logs). */
const SECRET_KEY = /(password|passwd|secret|token|credential)/i;
/**
 * A URL's user part, in every form a proxy or mirror value takes: with a scheme (`http://u:p@h`, any user
 * part), or without one (`u:p@h:3128`, `//u:p@h`, as Go's proxy parsing accepts), anywhere in the value
 * (a list, a label). A bare `name@host` without a scheme is a mail address, not refused.
 */
const URL_WITH_USER = /[a-z][a-z0-9+.-]*:\/\/[^/\s@]*@|(^|[\s,;=]|\/\/)[^\s,;=/@:]+:[^\s,;=/@]*@[^\s@]/i;
/** A proxy's value is a URL whatever its form: any user part there (`user@proxy:3128`) is a credential. */
const PROXY_KEY = /proxy$/i;
const PROXY_WITH_USER = /^([a-z][a-z0-9+.-]*:)?(\/\/)?[^\s/@]+@/i;
const MAX_JSON = 16_384;

export type DaemonJson = Record<string, unknown>;

/** Problems of one pass-through value (a JSON value: no functions, no NaN, strings without control bytes). */
function valueProblems(v: unknown, path: string, out: string[]): void {
  if (v === null || typeof v === "boolean") return;
  if (typeof v === "number") {
    if (!Number.isFinite(v)) out.push(`${path}: not a finite number`);
    return;
  }
  if (typeof v === "string") {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused.
    if (/[\u0000-\u001f\u007f]/.test(v)) out.push(`${path}: control characters are not allowed`);
    const proxy = PROXY_KEY.test(path) && PROXY_WITH_USER.test(v.trim());
    if (proxy || URL_WITH_USER.test(v))
      out.push(`${path}: a URL with credentials is not allowed (a secret in cdktf.json)`);
    return;
  }
  if (Array.isArray(v)) {
    for (const [i, x] of v.entries()) valueProblems(x, `${path}[${i}]`, out);
    return;
  }
  if (isObject(v)) {
    for (const [k, x] of Object.entries(v)) {
      if (SECRET_KEY.test(k)) out.push(`${path}.${k}: looks like a credential; set it on the VM by hand`);
      valueProblems(x, `${path}.${k}`, out);
    }
    return;
  }
  out.push(`${path}: expected a JSON value, got ${typeof v}`);
}

const PASS_THROUGH_SCHEMA: JsonSchema = {
  type: "object",
  propertyNames: { pattern: DAEMON_KEY.source },
  description:
    `Other ${DAEMON_JSON} keys, as dockerd names them; not ${TYPED_KEYS.join(", ")} ` +
    `(typed settings) nor ${Object.keys(REFUSED_KEYS).join(", ")}`,
};

/** The pass-through: dockerd-shaped keys, JSON values, none a typed setting owns, none refused, no secrets. */
export const daemonConfigRule: Validator<DaemonJson> = withSchema((value, path, problems) => {
  if (!isObject(value)) {
    problems.push(
      `${path}: expected an object of ${DAEMON_JSON} keys, got ${Array.isArray(value) ? "a list" : typeof value}`,
    );
    return {};
  }
  for (const [key, v] of Object.entries(value)) {
    const at = `${path}.${key}`;
    if (!DAEMON_KEY.test(key))
      problems.push(`${at}: not a dockerd option name (lower-case words joined by hyphens, e.g. "live-restore")`);
    else if ((TYPED_KEYS as readonly string[]).includes(key))
      problems.push(`${at}: set by a typed setting (logRotation, logMaxSize, logMaxFile, registryMirrors), not here`);
    else if (REFUSED_KEYS[key]) problems.push(`${at}: refused: ${REFUSED_KEYS[key]}`);
    else if (SECRET_KEY.test(key)) problems.push(`${at}: looks like a credential; set it on the VM by hand`);
    valueProblems(v, at, problems);
  }
  const size = JSON.stringify(value)?.length ?? 0;
  if (size > MAX_JSON) problems.push(`${path}: ${size} bytes of JSON; at most ${MAX_JSON}`);
  return value;
}, PASS_THROUGH_SCHEMA);

/** A registry mirror as dockerd accepts one: http(s), a host, a port, no path, no credentials. */
export const MIRROR_URL = /^https?:\/\/[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?\/?$/;

/** What the settings ask of daemon.json. */
export interface DaemonSettings {
  log_rotation: boolean;
  log_max_size: string;
  log_max_file: number;
  registry_mirrors: string[];
  daemon_config: DaemonJson;
}

/** The keys and values the settings own, as dockerd reads them. `current` gives the log-opts kept beside ours. */
function ownedValues(s: DaemonSettings, current: DaemonJson): DaemonJson {
  const owned: DaemonJson = {};
  if (s.log_rotation) {
    const opts = isObject(current["log-opts"]) && current["log-driver"] === "json-file" ? current["log-opts"] : {};
    owned["log-driver"] = "json-file";
    // dockerd wants every log-opts value as a string ("3", not 3).
    owned["log-opts"] = { ...opts, "max-size": s.log_max_size, "max-file": String(s.log_max_file) };
  }
  if (s.registry_mirrors.length) owned["registry-mirrors"] = [...s.registry_mirrors];
  return { ...owned, ...s.daemon_config };
}

/** daemon.json as found: absent, a JSON object, or something dockerd cannot read (the job stops there). */
export type DaemonFile =
  | { kind: "absent" }
  | { kind: "json"; text: string; value: DaemonJson }
  | { kind: "bad"; text: string; problem: string };

export function parseDaemonFile(present: boolean, text: string): DaemonFile {
  if (!present) return { kind: "absent" };
  if (text.trim() === "") return { kind: "json", text, value: {} };
  try {
    const value: unknown = JSON.parse(text);
    if (isObject(value)) return { kind: "json", text, value };
    return { kind: "bad", text, problem: "it is JSON but not an object" };
  } catch (err) {
    return { kind: "bad", text, problem: (err as Error).message };
  }
}

/** The change daemon.json needs: the file's new text, each key's old -> new, and restart or reload. */
export interface DaemonConfigPlan {
  next: string;
  changed: string[];
  lines: string[];
  /** A key that dockerd reads only when it starts changed or was removed (or dockerd is not running): restart. */
  restart: boolean;
  /** What the inventory records (written, and replaced, by vm-install) once the file is applied. */
  recordAfter: (recorded: DaemonRecord) => DaemonRecord;
}

const shown = (v: unknown) => (v === undefined ? "(unset)" : JSON.stringify(v));

/**
 * Keys vm-install recorded that the settings no longer ask for, and what each becomes (undefined:
 * removed; the value vm-install replaced: put back). A key whose value is not what vm-install wrote is
 * left as it is (not listed).
 */
function unasked(current: DaemonJson, owned: DaemonJson, recorded: DaemonRecord): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const key of Object.keys(recorded.written)) {
    if (key in owned || !(key in current)) continue;
    const left = takenBack(key, current[key], recorded.written[key], recorded.replaced[key]);
    if (!sameJson(left, current[key])) out.set(key, left);
  }
  return out;
}

function removalLine(key: string, was: unknown, left: unknown, restored: boolean): string {
  const change = `${key} ${shown(was)} -> ${shown(left)}`;
  if (restored)
    return `${DAEMON_JSON}: restored ${change} (the admin's value vm-install replaced; no longer asked for)`;
  return left === undefined
    ? `${DAEMON_JSON}: removed ${key} ${shown(was)} (written by vm-install, no longer asked for)`
    : `${DAEMON_JSON}: ${key} ${shown(was)} -> ${shown(left)} (vm-install's options removed, no longer asked for)`;
}

/**
 * Pure. The file merged: keys the settings do not own kept as they are, in their order; owned keys set;
 * keys vm-install wrote (`recorded`) and the settings no longer ask for removed while the file holds
 * what vm-install wrote, or set back to the admin's value vm-install replaced there. Undefined when nothing
 * differs (the file is then not written, dockerd not touched).
 */
export function planDaemonConfig(
  file: DaemonFile,
  s: DaemonSettings,
  daemonActive: boolean,
  recorded: DaemonRecord = NO_RECORD,
): DaemonConfigPlan | undefined {
  if (file.kind === "bad") throw badFileError(file.problem);
  const current = file.kind === "json" ? file.value : {};
  const owned = ownedValues(s, current);
  const set = Object.keys(owned).filter((k) => !sameJson(current[k], owned[k]));
  const dropped = unasked(current, owned, recorded);
  const changed = [...set, ...dropped.keys()];
  if (changed.length === 0) return undefined;
  const merged: DaemonJson = { ...current, ...owned };
  for (const [k, left] of dropped) {
    if (left === undefined) delete merged[k];
    else merged[k] = left;
  }
  // dockerd's reload leaves a setting as it was when its key is gone from the file: a removal needs a restart.
  const needsRestart = [...set.filter((k) => !RELOADABLE_KEYS.has(k)), ...dropped.keys()];
  // dockerd applies a reload whole or not at all: one key docker info shows tells which.
  const seen = changed.some((k) => (OBSERVED_RELOAD_KEYS as readonly string[]).includes(k));
  const restart = !daemonActive || needsRestart.length > 0 || !seen;
  const why = needsRestart.join(", ") || (daemonActive ? `${changed.join(", ")}: docker info shows none` : "");
  const how = restart
    ? `restarted docker.service (${why || "it was not running"})`
    : `reloaded docker.service (${changed.join(", ")}: applied without a restart)`;
  return {
    next: `${JSON.stringify(merged, null, 2)}\n`,
    changed,
    lines: [
      ...set.map((k) => `${DAEMON_JSON}: ${k} ${shown(current[k])} -> ${shown(owned[k])}`),
      ...[...dropped].map(([k, left]) => removalLine(k, current[k], left, k in recorded.replaced)),
      how,
    ],
    restart,
    recordAfter: (now) => nextRecord(current, owned, now),
  };
}

export function badFileError(problem: string): Error {
  return new Error(
    `${DAEMON_JSON} on the VM is not a JSON object dockerd can read (${problem}), so its keys cannot be merged ` +
      "with the settings: fix or remove it on the VM and run the job again. Nothing was changed.",
  );
}
