// How apt-get waits for the dpkg lock and for an install: declared once, beside SSH_RETRY_SETTINGS, and
// read as the event's `apt` key by every handler (handlers/common/apt.ts resolves it).
import { type EventOf, setting } from "./settings";
import { integer } from "./validate";

/** The event's `apt` key: how apt-get waits for the dpkg lock and for an install. Event only. */
export const APT_LOCK_SETTINGS = {
  lockTimeoutSec: setting(integer(0, 3600), {
    event: "lock_timeout_sec",
    eventOnly: true,
    default: 30,
    doc: "How long one apt-get waits for the dpkg lock itself (-o DPkg::Lock::Timeout).",
  }),
  lockAttempts: setting(integer(1, 50), {
    event: "lock_attempts",
    eventOnly: true,
    default: 5,
    doc:
      "apt-get runs in all while the lock stays busy (unless the first boot holds it); " +
      "then the error names its holder.",
  }),
  lockRetryDelaySec: setting(integer(0, 600), {
    event: "lock_retry_delay_sec",
    eventOnly: true,
    default: 15,
    doc: "Seconds between those runs.",
  }),
  installTimeoutSec: setting(integer(10, 7200), {
    event: "install_timeout_sec",
    eventOnly: true,
    default: 600,
    doc: "Limit in seconds for one apt-get install, downloads included.",
  }),
  firstBootWaitSec: setting(integer(0, 86400), {
    event: "first_boot_wait_sec",
    eventOnly: true,
    default: 1800,
    doc:
      "Longest wait, within time_budget_sec, for the VM's first boot: cloud-init to finish, and an apt lock " +
      "held by cloud-init, apt-daily or unattended-upgrades (0: no such wait, those holders get the bounded " +
      "wait above).",
  }),
} as const;

/** The event's `apt` key once checked: every field filled in. */
export type AptEventSettings = EventOf<typeof APT_LOCK_SETTINGS>;
