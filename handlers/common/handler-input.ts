// What a job is given: the event (its installer's keys from the definition, plus the keys every
// installer takes) and the env carrying the connection. Both are checked before anything touches the
// network, and every problem of both is reported at once.

import type { AptEventSettings } from "../../lib/shared/apt-lock-settings";
import { aptProxyUrl } from "../../lib/shared/apt-proxy";
import type { InstallerDefinition } from "../../lib/shared/installer-definition";
import { type EventOf, eventFields, type Settings } from "../../lib/shared/settings";
import type { SshEventSettings } from "../../lib/shared/ssh-retry";
import {
  boolean,
  type FieldsOf,
  integer,
  object,
  optional,
  ValidationError,
  validate,
} from "../../lib/shared/validate";
import { aptEventSettings } from "./apt";
import { type ConnectionEnv, readConnectionEnv } from "./connection-env";
import { sshEventSettings } from "./ssh-retry-policy";

/** The event keys every installer accepts besides its own. */
export interface CommonEvent {
  /** SSH retry policy (lib/shared/ssh-retry.ts). */
  ssh?: SshEventSettings;
  /** How apt-get waits for the dpkg lock and for an install (common/apt.ts). */
  apt?: AptEventSettings;
  /** The VM's apt proxy (vms[].aptProxy): written to apt's configuration by every installer (apt-proxy.ts). */
  apt_proxy?: string;
  /**
   * Seconds the whole job may take (the stack sets it from wait_timeout_sec, less a margin): every inner
   * limit (connect, lock waits, update, install) is cut to what is left of it. Absent: no overall limit.
   */
  time_budget_sec?: number;
  /** Check mode: inspect and report what would change (would_change), change nothing on the VM. @default false */
  check?: boolean;
}

/** The rule for the event's time_budget_sec. */
const TIME_BUDGET_RULE = integer(10, 86400);

/** The event as given: an object, or event_json's string form. */
export function eventObject(event: unknown): unknown {
  if (typeof event !== "string") return event ?? {};
  try {
    return JSON.parse(event);
  } catch (err) {
    throw new ValidationError("event", [`(top level): not valid JSON (${(err as Error).message})`]);
  }
}

/** Both halves of the input, checked before anything else; every problem of both is reported at once. */
export function validateInput<S extends Settings>(
  definition: InstallerDefinition<S>,
  rawEvent: unknown,
  env: NodeJS.ProcessEnv,
): { event: EventOf<S> & CommonEvent; target: ConnectionEnv } {
  type E = EventOf<S> & CommonEvent;
  const validator = object<E>({
    ...eventFields(definition.settings),
    apt: optional(aptEventSettings),
    ssh: optional(sshEventSettings),
    apt_proxy: optional(aptProxyUrl),
    time_budget_sec: optional(TIME_BUDGET_RULE),
    check: optional(boolean()),
  } as FieldsOf<E>);
  const problems: string[] = [];
  const event = collect(problems, "event", () => validate(validator, eventObject(rawEvent), "event"));
  const target = collect(problems, "env", () => readConnectionEnv(env));
  if (problems.length > 0 || !event || !target)
    throw new ValidationError("invalid input, nothing was done on the VM", problems);
  return { event, target };
}

/** `read()`, or undefined with its problems added to `problems`, each prefixed with `where`. */
function collect<T>(problems: string[], where: string, read: () => T): T | undefined {
  try {
    return read();
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    problems.push(...err.problems.map((p) => `${where} ${p}`));
    return undefined;
  }
}
