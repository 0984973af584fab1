// A VM without apt (Rocky Linux: dnf): each installer refuses it from its os-release, with a message
// that says what it found and what it supports, before any package, apt or system command runs, in a
// real run and in check mode alike.
import { BOOT_LOOK } from "../../handlers/common/boot-look";
import { handler as docker } from "../../handlers/install-docker/handler";
import { handler as packages } from "../../handlers/install-packages/handler";
import { handler as postgres } from "../../handlers/install-postgres/handler";
import { runScripted } from "./support/run-scripted";

/** /etc/os-release in the shape Rocky Linux 9 ships it. */
const ROCKY_9 = `NAME="Rocky Linux"
VERSION="9.4 (Blue Onyx)"
ID="rocky"
ID_LIKE="rhel centos fedora"
VERSION_ID="9.4"
PLATFORM_ID="platform:el9"
PRETTY_NAME="Rocky Linux 9.4 (Blue Onyx)"
ANSI_COLOR="0;32"
LOGO="fedora-logo-icon"
CPE_NAME="cpe:/o:rocky:rocky:9::baseos"
HOME_URL="https://rockylinux.org/"
BUG_REPORT_URL="https://bugs.rockylinux.org/"
REDHAT_SUPPORT_PRODUCT="Rocky Linux"
REDHAT_SUPPORT_PRODUCT_VERSION="9.4"
`;

const installers = [
  ["install-packages", packages, { packages: ["git"] }],
  ["install-docker", docker, { channel: "distro" }],
  ["install-postgres", postgres, { db_name: "myapp", db_user: "app_user", db_password: "a password, long enough" }],
] as const;

describe.each(installers)("%s on Rocky Linux", (name, handler, event) => {
  test.each([false, true])(
    "check %s: refused from os-release with the reason, nothing else ran on the VM",
    async (check) => {
      const { error, remote, result } = await runScripted(handler as never, { ...event, check }, [
        { match: "cat /etc/os-release", sudo: false, facts: { os_release: ROCKY_9 } },
      ]);
      expect(result).toBeUndefined();
      expect(error?.message).toBe(
        `${name} failed while detecting the OS: unsupported OS on the VM: /etc/os-release says ID=rocky ` +
          `ID_LIKE="rhel centos fedora" (Rocky Linux 9.4 (Blue Onyx)); ` +
          "these installers support Ubuntu and Debian (and derivatives with ID_LIKE ubuntu or debian), whose " +
          "packages they install with apt; nothing was changed on the VM",
      );
      // The os-release read was the one command: no apt, dpkg, systemd look or sudo before the refusal.
      expect(remote.calls).toHaveLength(1); // the first look, with install-packages' own dpkg-query
      expect(remote.calls[0].command.startsWith(BOOT_LOOK.script)).toBe(true);
      expect(remote.calls[0].opts.sudo).toBeFalsy();
      expect(remote.implicit).toEqual([]);
      expect(remote.closed).toBe(true);
    },
  );
});
