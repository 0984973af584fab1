// How a job retries an SSH connection that can heal (refused, unreachable, timed out, reset): declared
// once, read as `vms[].sshRetry` in cdktf.json and as the event's `ssh` key by every handler.
import { type EventOf, setting } from "./settings";
import { integer } from "./validate";

export const SSH_RETRY_SETTINGS = {
  attempts: setting(integer(1, 20), { event: "attempts", default: 3, doc: "Connection attempts in all." }),
  delaySec: setting(integer(0, 300), {
    event: "delay_sec",
    default: 10,
    doc: "Wait before the second attempt, in seconds; each later wait doubles (at most 60 s).",
  }),
  budgetSec: setting(integer(1, 3600), {
    event: "budget_sec",
    default: 120,
    doc: "Total seconds for all attempts and waits; no attempt starts after it.",
  }),
  timeoutSec: setting(integer(1, 300), {
    event: "timeout_sec",
    default: 20,
    doc: "One attempt's limit in seconds (TCP connect, SSH handshake, authentication).",
  }),
} as const;

/** The event's `ssh` key once checked: every field filled in. */
export type SshEventSettings = EventOf<typeof SSH_RETRY_SETTINGS>;
