// Whether the VM runs systemd, asked before an installer whose server is a systemd service (Docker,
// PostgreSQL) changes anything. Without systemd (a container, a chroot, WSL without it) every systemctl
// fails with "System has not been booted with systemd", and the job would fail deep inside, after apt
// had installed packages whose services cannot start.

import { type RootFact, rootFact } from "./vm-facts";

/** systemd's own test, sd_booted(3) (/run/systemd/system exists only when systemd is PID 1), as a probe of an
 * installer's first look (exit 0: systemd). */
export const SYSTEMD_LOOK_PROBE = {
  name: "systemd",
  command: "[ -d /run/systemd/system ]",
  writer: "root",
  use: "refuse, before any change, a VM not booted with systemd",
} as const;

/** Throws, naming the service and what to do, when SYSTEMD_LOOK_PROBE says the VM was not booted with systemd. */
export function requireSystemdFrom(fact: RootFact, service: string): void {
  if (rootFact(fact, `the check for systemd before ${service}`).code !== 0) throw noSystemd(service);
}

function noSystemd(service: string): Error {
  return new Error(
    `${service} runs as a systemd service (systemctl enable, start, reload), and this VM was not booted with ` +
      `systemd: ` +
      "/run/systemd/system does not exist (systemd's own test, sd_booted). A container or chroot without systemd as " +
      "PID 1 cannot run it; " +
      "use a VM (or a container started with systemd as init) and run the job again. Nothing was changed.",
  );
}
