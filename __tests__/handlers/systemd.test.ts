// install-docker and install-postgres run their servers as systemd services (systemctl enable, start,
// is-active, reload). On a VM booted without systemd (a container, a chroot, WSL without it) every
// systemctl fails with "System has not been booted with systemd", and the job would fail deep inside,
// after apt had installed packages whose services cannot start. Both look first, the way sd_booted(3)
// does (/run/systemd/system exists), and fail at once, before any change, in a real run and in a check.
import { handler as docker } from "../../handlers/install-docker/handler";
import { handler as postgres } from "../../handlers/install-postgres/handler";
import { DEBIAN_12 } from "./support/fixtures";
import { runScripted } from "./support/run-scripted";

const os = { match: "os-release", facts: { os_release: DEBIAN_12 } };
/**
 * Docker asks in its first look of its own (one exec after the kit's); PostgreSQL in the look at packages
 * and clusters, which rides in the kit's first look (one exec in all).
 */
const noSystemd = {
  docker: [os, { match: /^printf '%s ' docker; /, facts: { systemd: { code: 1 } } }],
  postgres: [{ match: "os-release", facts: { os_release: DEBIAN_12, systemd: { code: 1 } } }],
};
const PG = { db_name: "myapp", db_user: "app_user", db_password: "correct-horse-battery-staple" };

describe.each([
  ["install-docker", docker, {}, "Docker", noSystemd.docker],
  ["install-postgres", postgres, PG, "PostgreSQL", noSystemd.postgres],
] as const)("%s on a VM without systemd", (name, handler, event, what, steps) => {
  it.each([
    ["a run", event],
    ["a check", { ...event, check: true }],
  ])("%s fails right after the OS is known, nothing else is run, and says why and what to do", async (_, ev) => {
    const { error, remote } = await runScripted(handler as never, ev, [...steps]);
    expect(error).toBeDefined();
    expect(error!.message).toContain(`${name} failed while`);
    expect(error!.message).toContain(`${what} runs as a systemd service`);
    expect(error!.message).toContain("/run/systemd/system");
    expect(error!.message).toContain("Nothing was changed");
    // The scripted commands were all that ran: no apt, no systemctl, no dpkg look.
    expect(remote.calls).toHaveLength(steps.length);
    expect(remote.calls[0].command).toContain("os-release");
    expect(remote.implicit).toEqual([]);
    expect(remote.done).toBe(true);
  });
});

describe("the probe", () => {
  it("is systemd's own test (sd_booted: /run/systemd/system is a directory), unprivileged and read-only", async () => {
    const { remote } = await runScripted(docker as never, {}, [
      os,
      { ...noSystemd.docker[1], sudo: false, check: (_, o) => expect(o.mutates).toBeFalsy() },
    ]);
    expect(remote.calls[1].command).toMatch(/\[ -d \/run\/systemd\/system \]/);
  });
});
