// Booting the target: an overlay over the shared base rootfs, real systemd as PID 1 under systemd-nspawn,
// all inside `unshare --pid --mount --kill-child` so that killing one recorded pid takes down the whole
// tree (nspawn alone, SIGKILLed, would leave postgres and dockerd running as orphans).
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { quote } from "../../lib/shared/shell-quote";
import { joinOwnCgroups } from "./cgroups";
import { IMAGE_USER } from "./image";
import { type ProcRef, procRef } from "./procfs";
import { childEnv, runOk } from "./run";

export const SSH_PORT = 22;

export interface BootPaths {
  runDir: string;
  upper: string;
  work: string;
  merged: string;
  docker: string;
  privateKey: string;
  publicKey: string;
  hostPub: string;
  knownHosts: string;
  bootScript: string;
  consoleLog: string;
}

export function bootPaths(runDir: string): BootPaths {
  return {
    runDir,
    upper: path.join(runDir, "upper"),
    work: path.join(runDir, "work"),
    merged: path.join(runDir, "merged"),
    docker: path.join(runDir, "docker"),
    privateKey: path.join(runDir, "id_ed25519"),
    publicKey: path.join(runDir, "id_ed25519.pub"),
    hostPub: path.join(runDir, "ssh_host_ed25519_key.pub"),
    knownHosts: path.join(runDir, "known_hosts"),
    bootScript: path.join(runDir, "boot.sh"),
    consoleLog: path.join(runDir, "console.log"),
  };
}

/** The client key for this sandbox only: nothing of the host's own keys is ever authorised inside. */
export async function makeClientKey(p: BootPaths, name: string): Promise<void> {
  await runOk("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", `vm-install-sandbox-${name}`, "-f", p.privateKey], {
    env: childEnv(),
  });
}

/** OpenSSH's "SHA256:..." fingerprint of a public key line ("ssh-ed25519 AAAA... comment"). */
export function sha256Fingerprint(pubLine: string): string {
  const blob = pubLine.trim().split(/\s+/)[1];
  if (!blob) throw new Error(`not an OpenSSH public key line: ${JSON.stringify(pubLine.slice(0, 80))}`);
  return `SHA256:${createHash("sha256").update(Buffer.from(blob, "base64")).digest("base64").replace(/=+$/, "")}`;
}

interface BootScriptInput {
  name: string;
  lowerDir: string;
  netns: string;
  paths: BootPaths;
  /** Login user; the image has "ubuntu" (uid 1000), any other is created at boot like a cloud image's. */
  user?: string;
  /** authorized_keys of that user instead of the sandbox's own client key (a Nubes VM's user_public_key). */
  authorizedKey?: string;
  /** Boot with cloud-init: this NoCloud seed, and neither the image's user nor host keys from the host. */
  cloudInit?: { userData: string; metaData: string };
}

/** Shell lines that create a login user other than the image's, with passwordless sudo as the image's has. */
function extraUser(m: string, user: string): string {
  const q = quote;
  return `chroot ${q(m)} useradd --create-home --groups sudo --shell /bin/bash ${q(user)}
chroot ${q(m)} usermod -p '*' ${q(user)}
printf '%s ALL=(ALL) NOPASSWD:ALL\\n' ${q(user)} > ${q(`${m}/etc/sudoers.d/91-${user}`)}
chmod 0440 ${q(`${m}/etc/sudoers.d/91-${user}`)}
`;
}

/**
 * Without cloud-init: the login user, its key and a fresh host key are put in place from the host. One
 * ed25519 key, the one clients pin: `ssh-keygen -A`'s RSA 3072 key alone took 0.25-1.3 s of CPU per boot,
 * some minutes of a CI run in which every client negotiates ed25519 anyway.
 */
function hostIdentity(p: BootPaths, m: string, user: string, keys: string): string {
  const q = quote;
  const ids = `uid=$(chroot ${q(m)} id -u ${q(user)}); gid=$(chroot ${q(m)} id -g ${q(user)})`;
  return `${user === IMAGE_USER ? "" : extraUser(m, user)}${ids}
install -d -m 700 -o "$uid" -g "$gid" ${q(`${m}/home/${user}/.ssh`)}
install -m 600 -o "$uid" -g "$gid" ${q(keys)} ${q(`${m}/home/${user}/.ssh/authorized_keys`)}
rm -f ${q(m)}/etc/ssh/ssh_host_*
chroot ${q(m)} ssh-keygen -q -t ed25519 -N '' -C '' -f /etc/ssh/ssh_host_ed25519_key
printf 'HostKey /etc/ssh/ssh_host_ed25519_key\n' > ${q(`${m}/etc/ssh/sshd_config.d/40-vm-install-host-key.conf`)}
cp ${q(`${m}/etc/ssh/ssh_host_ed25519_key.pub`)} ${q(`${p.hostPub}.tmp`)}
mv ${q(`${p.hostPub}.tmp`)} ${q(p.hostPub)}
`;
}

/**
 * With cloud-init, as on a cloud: the seed goes in and everything else is cloud-init's. The image's own
 * user goes, so only cloud-init can make the login user, and no host key exists until cloud-init's ssh
 * module writes one (cloud-init.service is ordered before ssh.service, so sshd's first answer has it).
 */
function cloudInitIdentity(p: BootPaths, m: string): string {
  const q = quote;
  const seed = `${m}/var/lib/cloud/seed/nocloud`;
  return `chroot ${q(m)} userdel --remove ${IMAGE_USER}
rm -f ${q(`${m}/etc/sudoers.d/90-${IMAGE_USER}`)} ${q(`${m}/etc/cloud/cloud-init.disabled`)} ${q(m)}/etc/ssh/ssh_host_*
install -d -m 700 ${q(seed)}
install -m 600 ${q(userDataPath(p))} ${q(`${seed}/user-data`)}
install -m 600 ${q(metaDataPath(p))} ${q(`${seed}/meta-data`)}
`;
}

const userDataPath = (p: BootPaths) => path.join(p.runDir, "user-data");
const metaDataPath = (p: BootPaths) => path.join(p.runDir, "meta-data");

/** Runs as PID 1's parent inside the new mount + pid namespaces; everything it mounts dies with them. */
function bootScript(i: BootScriptInput): string {
  const p = i.paths;
  const q = quote;
  const m = p.merged;
  const user = i.user ?? IMAGE_USER;
  const keys = i.authorizedKey ? path.join(p.runDir, "authorized_keys") : p.publicKey;
  const hosts =
    `127.0.0.1\tlocalhost\n127.0.1.1\t${i.name}\n::1\t\tlocalhost ip6-localhost ip6-loopback\n` +
    "ff02::1\t\tip6-allnodes\nff02::2\t\tip6-allrouters\n";
  const identity = i.cloudInit ? cloudInitIdentity(p, m) : hostIdentity(p, m, user, keys);
  return `#!/bin/sh
# vm-install sandbox ${i.name}: run by unshare in private mount + pid namespaces (see dev/sandbox/boot.ts).
set -eu
# The files written into the VM below get a machine's usual modes, whatever umask started the sandbox.
umask 022
# redirect_dir: a directory of a lower layer (the base image, a snapshot) renames as on a disk, where
# overlayfs' default refuses with EXDEV and only tools that fall back to copying (mv) would cope.
mount -t overlay overlay -o ${q(`lowerdir=${i.lowerDir},upperdir=${p.upper},workdir=${p.work},redirect_dir=on`)} ${q(m)}
# This namespace inherited the host's mounts of other sandboxes' network namespaces; holding them would
# keep those namespaces alive after their own teardown.
for ns in /run/netns/*; do
  [ "$ns" = ${q(`/run/netns/${i.netns}`)} ] || umount -l "$ns" 2>/dev/null || true
done
${identity}printf '%s\\n' ${q(i.name)} > ${q(`${m}/etc/hostname`)}
printf '%s' ${q(hosts)} > ${q(`${m}/etc/hosts`)}
# The host's cgroup v1 hides from the sandbox's systemd when a unit's last process has gone; a user manager
# stopped 10 s after a login then hung in "deactivating", and every new login (pam_systemd) waited on it for
# minutes (seen in CI after Docker's install brought libpam-systemd). A VM's kernel has no such gap: here the
# user manager stays up instead of stopping.
mkdir -p ${q(`${m}/etc/systemd/logind.conf.d`)}
printf '[Login]\nUserStopDelaySec=infinity\n' > ${q(`${m}/etc/systemd/logind.conf.d/90-vm-install-sandbox.conf`)}
${joinOwnCgroups(i.name)}echo "vm-install sandbox: booting ${i.name}"
# --register=no --keep-unit: the host may have no systemd to register with. --capability=all and the bpf
# and keyring syscalls: dockerd (iptables, cgroups) and containerd inside. The docker bind: overlay2
# cannot sit on the overlayfs root.
SYSTEMD_NSPAWN_API_VFS_WRITABLE=1 exec systemd-nspawn --quiet --register=no --keep-unit --boot \\
  --directory=${q(m)} --machine=${q(i.name)} --hostname=${q(i.name)} \\
  --network-namespace-path=${q(`/run/netns/${i.netns}`)} --resolv-conf=copy-host \\
  --capability=all --system-call-filter='@keyring bpf' \\
  --bind=${q(`${p.docker}:/var/lib/docker`)} --console=pipe
`;
}

export function prepareRunDir(p: BootPaths): void {
  // Whatever the caller's umask (bin/cdktf runs Terraform, and so the twin, under 077): the upper layer's
  // root is the VM's /, which every user must traverse.
  for (const d of [p.upper, p.work, p.merged, p.docker]) {
    fs.mkdirSync(d, { recursive: true });
    fs.chmodSync(d, 0o755);
  }
  // The run dir holds the private key: only root reads it (the key file itself is 0600 too).
  fs.chmodSync(p.runDir, 0o700);
}

/** Starts the detached namespace tree and returns its top process (unshare) as soon as it exists. */
export function spawnTree(i: BootScriptInput): ProcRef {
  if (i.authorizedKey)
    fs.writeFileSync(path.join(i.paths.runDir, "authorized_keys"), `${i.authorizedKey.trim()}\n`, { mode: 0o600 });
  if (i.cloudInit) {
    fs.writeFileSync(userDataPath(i.paths), i.cloudInit.userData, { mode: 0o600 });
    fs.writeFileSync(metaDataPath(i.paths), i.cloudInit.metaData, { mode: 0o600 });
  }
  fs.writeFileSync(i.paths.bootScript, bootScript(i), { mode: 0o755 });
  const logFd = fs.openSync(i.paths.consoleLog, "a");
  try {
    const child = spawn(
      "unshare",
      [
        "--mount",
        "--propagation",
        "private",
        "--pid",
        "--fork",
        "--kill-child=SIGKILL",
        "--mount-proc",
        "/bin/sh",
        i.paths.bootScript,
      ],
      // Its own session: the tree survives the CLI that started it, and a terminal's ^C does not reach it.
      { detached: true, stdio: ["ignore", logFd, logFd], env: childEnv() },
    );
    child.on("error", () => undefined); // reported below through the missing pid
    child.unref();
    const ref = child.pid ? procRef(child.pid) : undefined;
    if (!ref) throw new Error(`could not start unshare for sandbox ${i.name}: see ${i.paths.consoleLog}`);
    return ref;
  } finally {
    fs.closeSync(logFd);
  }
}
