// How connect retries, resolved from the event's `ssh` key (declared once in lib/shared/ssh-retry.ts):
// what can heal is tried again with doubling waits, inside a total time budget.

import { eventFields } from "../../lib/shared/settings";
import { SSH_RETRY_SETTINGS, type SshEventSettings } from "../../lib/shared/ssh-retry";
import { object, type Validator } from "../../lib/shared/validate";

/** The resolved form used by `connect`. */
export interface SshRetry {
  attempts: number;
  delaySec: number;
  budgetSec: number;
  timeoutSec: number;
}

/** 3 attempts 10 s apart ride out a VM that is still booting sshd; the budget bounds the whole. */
export const DEFAULT_SSH_RETRY: SshRetry = {
  attempts: SSH_RETRY_SETTINGS.attempts.default,
  delaySec: SSH_RETRY_SETTINGS.delaySec.default,
  budgetSec: SSH_RETRY_SETTINGS.budgetSec.default,
  timeoutSec: SSH_RETRY_SETTINGS.timeoutSec.default,
};
/** A single wait never exceeds this, however many attempts are asked for. */
const MAX_RETRY_WAIT_SEC = 60;

/** Validator for the event's `ssh` key (lib/shared/ssh-retry.ts declares it); defaults filled in. */
export const sshEventSettings: Validator<SshEventSettings> = object(eventFields(SSH_RETRY_SETTINGS));

/** The event's `ssh` key as `connect` takes it; what it leaves out gets the declared default. */
export function resolveSshRetry(settings: Partial<SshEventSettings> = {}): SshRetry {
  return {
    attempts: settings.attempts ?? DEFAULT_SSH_RETRY.attempts,
    delaySec: settings.delay_sec ?? DEFAULT_SSH_RETRY.delaySec,
    budgetSec: settings.budget_sec ?? DEFAULT_SSH_RETRY.budgetSec,
    timeoutSec: settings.timeout_sec ?? DEFAULT_SSH_RETRY.timeoutSec,
  };
}

/** The wait before attempt `next` (2-based): delay, 2 x delay, 4 x delay, ... capped. In ms. */
export function retryWaitMs(retry: SshRetry, next: number): number {
  return Math.min(retry.delaySec * 2 ** (next - 2), MAX_RETRY_WAIT_SEC) * 1000;
}
