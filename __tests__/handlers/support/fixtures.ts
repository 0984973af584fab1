// Real output of the tools the handlers parse, captured from Ubuntu 22.04 and Debian 12 (and the os-release of Debian 13 and Ubuntu 24.04).
import { LOCK_TABLE_LOOK } from "../../../handlers/common/lock-holders";
import { answerLook } from "./look-answers";

export const UBUNTU_2204 = `PRETTY_NAME="Ubuntu 22.04.4 LTS"
NAME="Ubuntu"
VERSION_ID="22.04"
VERSION="22.04.4 LTS (Jammy Jellyfish)"
VERSION_CODENAME=jammy
ID=ubuntu
ID_LIKE=debian
HOME_URL="https://www.ubuntu.com/"
SUPPORT_URL="https://help.ubuntu.com/"
BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"
PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"
UBUNTU_CODENAME=jammy
`;

/** /etc/os-release of Ubuntu 24.04.1 (noble adds LOGO=). */
export const UBUNTU_2404 = `PRETTY_NAME="Ubuntu 24.04.1 LTS"
NAME="Ubuntu"
VERSION_ID="24.04"
VERSION="24.04.1 LTS (Noble Numbat)"
VERSION_CODENAME=noble
ID=ubuntu
ID_LIKE=debian
HOME_URL="https://www.ubuntu.com/"
SUPPORT_URL="https://help.ubuntu.com/"
BUG_REPORT_URL="https://bugs.launchpad.net/ubuntu/"
PRIVACY_POLICY_URL="https://www.ubuntu.com/legal/terms-and-policies/privacy-policy"
UBUNTU_CODENAME=noble
LOGO=ubuntu-logo
`;

export const DEBIAN_12 = `PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
NAME="Debian GNU/Linux"
VERSION_ID="12"
VERSION="12 (bookworm)"
VERSION_CODENAME=bookworm
ID=debian
HOME_URL="https://www.debian.org/"
SUPPORT_URL="https://www.debian.org/support"
BUG_REPORT_URL="https://bugs.debian.org/"
`;

/** /usr/lib/os-release of the sandbox's Debian 13 image. */
export const DEBIAN_13 = `PRETTY_NAME="Debian GNU/Linux 13 (trixie)"
NAME="Debian GNU/Linux"
VERSION_ID="13"
VERSION="13 (trixie)"
VERSION_CODENAME=trixie
DEBIAN_VERSION_FULL=13.8
ID=debian
HOME_URL="https://www.debian.org/"
SUPPORT_URL="https://www.debian.org/support"
BUG_REPORT_URL="https://bugs.debian.org/"
`;

export const MINT_21 = `NAME="Linux Mint"
VERSION="21.3 (Virginia)"
ID=linuxmint
ID_LIKE="ubuntu debian"
PRETTY_NAME="Linux Mint 21.3"
VERSION_ID="21.3"
VERSION_CODENAME=virginia
UBUNTU_CODENAME=jammy
`;

export const FEDORA_39 = `NAME="Fedora Linux"
VERSION="39 (Container Image)"
ID=fedora
VERSION_ID=39
VERSION_CODENAME=""
PLATFORM_ID="platform:f39"
PRETTY_NAME="Fedora Linux 39 (Container Image)"
`;

/** dpkg-query -W -f='${Package}\t${Status}\t${Version}\n' git curl htop jq (htop, jq missing). */
export function dpkgLine(name: string, version?: string, status = "install ok installed"): string {
  return version ? `${name}\t${status}\t${version}\n` : `${name}\tunknown ok not-installed\t\n`;
}

/** One package's block of `apt-cache policy` output. */
export function policyBlock(
  name: string,
  candidate: string | undefined,
  versions: string[] = candidate ? [candidate] : [],
  installed?: string,
): string {
  const lines = [
    `${name}:`,
    `  Installed: ${installed ?? "(none)"}`,
    `  Candidate: ${candidate ?? "(none)"}`,
    "  Version table:",
  ];
  for (const v of versions) {
    lines.push(`${v === installed ? " *** " : "     "}${v} 500`);
    lines.push("        500 http://deb.debian.org/debian bookworm/main amd64 Packages");
    if (v === installed) lines.push("        100 /var/lib/dpkg/status");
  }
  return `${lines.join("\n")}\n`;
}

export const LOCK_STDERR =
  "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 (unattended-upgr)\n" +
  "N: Be aware that removing the lock file is not a solution and may break your system.\n" +
  "E: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), is another process using it?\n";

export const LOCK_STAT =
  "/var/lib/dpkg/lock-frontend 131090\n/var/lib/dpkg/lock 131091\n/var/lib/apt/lists/lock " +
  "262201\n/var/cache/apt/archives/lock 393300\n";
export const PROC_LOCKS =
  "1: POSIX  ADVISORY  WRITE 4242 00:2d:131090 0 EOF\n" +
  "1: -> POSIX  ADVISORY  WRITE 5151 00:2d:131090 0 EOF\n" +
  "2: POSIX  ADVISORY  WRITE 4242 00:2d:131091 0 EOF\n" +
  "3: FLOCK  ADVISORY  WRITE 777 00:19:999 0 EOF\n";

/** The lock table look's answer (lock-holders.ts LOCK_TABLE_LOOK): pid 4242 holds the dpkg locks. */
export const LOCK_TABLE = answerLook(LOCK_TABLE_LOOK, { "locks.files": LOCK_STAT, "locks.proc": PROC_LOCKS });
/** The same look with nobody holding a lock. */
export const LOCK_TABLE_FREE = answerLook(LOCK_TABLE_LOOK, {
  "locks.files": LOCK_STAT,
  "locks.proc": "3: FLOCK  ADVISORY  WRITE 777 00:19:999 0 EOF\n",
});

/** holderDetailsProbe's lines for `holder`: [pid, ppid, cgroup, command] of it and its ancestors. */
export function holderChain(holder: number, chain: [number, number, string, string][]): string {
  return chain.map(([pid, ppid, cgroup, command]) => `${holder}\t${pid}\t${ppid}\t${cgroup}\t${command} \n`).join("");
}

/** unattended-upgrade as apt-daily-upgrade.service runs it (Debian 12). */
export const UNATTENDED_UPGRADE = holderChain(4242, [
  [4242, 4200, "/system.slice/apt-daily-upgrade.service", "/usr/bin/python3 /usr/bin/unattended-upgrade"],
  [4200, 1, "/system.slice/apt-daily-upgrade.service", "/bin/sh /usr/lib/apt/apt.systemd.daily install"],
]);
/** cloud-init's package_upgrade: apt-get started by cloud-init's modules:final. */
export const CLOUD_FINAL_APT = holderChain(4242, [
  [
    4242,
    4100,
    "/system.slice/cloud-final.service",
    "apt-get --option=Dpkg::Options::=--force-confold --assume-yes --quiet dist-upgrade",
  ],
  [4100, 1, "/system.slice/cloud-final.service", "/usr/bin/python3 /usr/bin/cloud-init modules --mode=final"],
]);
/** Somebody's own apt-get in an SSH session. */
export const SESSION_APT = holderChain(4242, [
  [4242, 4100, "/user.slice/user-1000.slice/session-3.scope", "apt-get install -y nginx"],
  [4100, 1, "/user.slice/user-1000.slice/session-3.scope", "-bash"],
]);
/** A user's process that calls itself unattended-upgrade, in a unit that is no first-boot one. */
export const FAKED_UNATTENDED = holderChain(4242, [
  [4242, 4100, "/system.slice/ssh.service", "/usr/bin/python3 /usr/bin/unattended-upgrade"],
  [4100, 1, "/system.slice/ssh.service", "/usr/bin/python3 /usr/bin/cloud-init modules --mode=final"],
]);
