// The sandbox's base image: a debootstrapped Debian rootfs packed as a zstd tarball, cached under
// CACHE_DIR keyed by a hash of the exact build script (which embeds the host's mirror and apt options),
// so a machine builds it once (~1 min) and any change to the recipe or the host's mirror rebuilds it.
// Sandboxes boot from one shared unpacked copy of it as the read-only lower layer of their overlays.
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { progressFor } from "../../lib/shared/progress-line";
import { quote } from "../../lib/shared/shell-quote";
import { DebootstrapProgress, describeCounts, stageGroup } from "./debootstrap-progress";
import { imageAptConfig } from "./hostapt";
import { lock } from "./lock";
import { DEFAULT_RELEASE, type Release } from "./release";
import { childEnv, run, tail } from "./run";
import { CACHE_DIR, listRunDirs, readState } from "./state";

/** Bumped by hand only for changes the script text does not show (none so far). */
const RECIPE_VERSION = "1";

/** What a Nubes Ubuntu image has and the installers rely on (sudo, curl, gnupg, lsb-release for
 * repository set-up; python3 as cloud images have it), on top of a bootable systemd + sshd. */
const IMAGE_PACKAGES = [
  "systemd",
  "systemd-sysv",
  "dbus",
  "openssh-server",
  "sudo",
  "ca-certificates",
  "curl",
  "gnupg",
  "lsb-release",
  "iproute2",
  "iputils-ping",
  "procps",
  "less",
  "netbase",
  "tzdata",
  "xz-utils",
  "python3",
  // Dormant unless a sandbox is booted with user-data (see CLOUD_CFG and boot.ts). debootstrap does not
  // resolve virtual packages: python3-cffi-backend provides the api-min/max python3-cryptography needs.
  "cloud-init",
  "python3-cffi-backend",
];

export const IMAGE_USER = "ubuntu";
const IMAGE_UID = 1000;

const b64 = (s: string | Buffer) => Buffer.from(s).toString("base64");

/** Writes a file into the rootfs from base64, so arbitrary content survives shell quoting unchanged. */
function putFile(dest: string, content: string | Buffer, mode = "0644"): string {
  const target = `"$ROOT${dest}"`;
  return `install -D -m ${mode} /dev/null ${target} && printf '%s' ${quote(b64(content))} | base64 -d > ${target}`;
}

const CGROUP_UNIT = `[Unit]
Description=Make cgroup v1 controllers writable (Docker inside systemd-nspawn)
Documentation=file:///etc/systemd/system/vm-install-cgroup-rw.service
# nspawn mounts the host's v1 controllers read-only; dockerd and containerd must create cgroups in them.
ConditionVirtualization=systemd-nspawn
DefaultDependencies=no
After=local-fs.target
Before=containerd.service docker.service multi-user.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh -c 'for d in /sys/fs/cgroup/*/; do \
mountpoint -q "$d" && mount -o remount,rw,bind,nosuid,nodev,noexec "$d" || true; done'

[Install]
WantedBy=multi-user.target
`;

const SSHD_CONF = `# vm-install sandbox: keys only, like a cloud VM.
PasswordAuthentication no
KbdInteractiveAuthentication no
`;

/** NoCloud only: the seed the sandbox writes into /var/lib/cloud/seed/nocloud before boot. */
const CLOUD_CFG = `# vm-install sandbox: user-data comes from the NoCloud seed only, never from a metadata service.
datasource_list: [NoCloud, None]
# The host configures eth0 from outside the sandbox's network namespace; cloud-init must leave it alone.
network: {config: disabled}
# cloud-init's locale module sets en_US.UTF-8 by default, which a minbase image has not generated
# (update-locale then fails the whole config stage); C.UTF-8 is built into libc.
locale: C.UTF-8
`;

/** The whole build as one bash script: its text is the cache key, so nothing may influence the image
 * that is not written here. $ROOT is the (empty) target directory, $OUT the tarball to write. */
function buildScript(release: Release = DEFAULT_RELEASE): string {
  const apt = imageAptConfig(undefined, release);
  const keyringSteps = apt.keyrings.map(
    (k) =>
      `[ -e "$ROOT${k}" ] || { ${putFile(k, fs.readFileSync(k))}; }  ` +
      `# sha256 ${createHash("sha256").update(fs.readFileSync(k)).digest("hex")}`,
  );
  const steps = [
    `# vm-install sandbox base image, recipe ${RECIPE_VERSION}`,
    "set -euo pipefail",
    `debootstrap --variant=minbase --components=main ${apt.keyring ? `--keyring=${quote(apt.keyring)} ` : ""}` +
      `--include=${IMAGE_PACKAGES.join(",")} ${release} "$ROOT" ${quote(apt.mirror)}`,
    "# apt: the host's mirror and the fetch options it needs",
    `rm -f "$ROOT/etc/apt/sources.list"`,
    putFile("/etc/apt/sources.list.d/debian.sources", apt.sourcesFile),
    ...keyringSteps,
    ...apt.confFiles.map(([name, text]) => putFile(`/etc/apt/apt.conf.d/${name}`, text)),
    "# the login user of a cloud image: passwordless sudo, key-only login",
    `chroot "$ROOT" useradd --create-home --uid ${IMAGE_UID} --user-group --groups sudo --shell /bin/bash ` +
      IMAGE_USER,
    // '*' rather than useradd's locked '!': no password can match, and nothing treats the account as disabled.
    `chroot "$ROOT" usermod -p '*' ${IMAGE_USER}`,
    putFile(`/etc/sudoers.d/90-${IMAGE_USER}`, `${IMAGE_USER} ALL=(ALL) NOPASSWD:ALL\n`, "0440"),
    putFile("/etc/ssh/sshd_config.d/50-vm-install.conf", SSHD_CONF),
    "# cloud-init: NoCloud only, and disabled (cloud-init-generator reads this file) unless the sandbox's",
    "# overlay removes the marker because it was booted with user-data",
    putFile("/etc/cloud/cloud.cfg.d/90-vm-install-sandbox.cfg", CLOUD_CFG),
    putFile("/etc/cloud/cloud-init.disabled", "vm-install sandbox: enabled per sandbox by dev/sandbox/boot.ts\n"),
    "# Docker inside nspawn",
    putFile("/etc/systemd/system/vm-install-cgroup-rw.service", CGROUP_UNIT),
    "ln -sf /etc/systemd/system/vm-install-cgroup-rw.service " +
      '"$ROOT/etc/systemd/system/multi-user.target.wants/vm-install-cgroup-rw.service"',
    "# per-boot identity: machine-id and host keys are made fresh for every sandbox",
    `: > "$ROOT/etc/machine-id"`,
    // debootstrap leaves a fixed D-Bus id: point it at the per-boot one, as a systemd install does.
    `ln -sf /etc/machine-id "$ROOT/var/lib/dbus/machine-id"`,
    `rm -f "$ROOT"/etc/ssh/ssh_host_*`,
    `chroot "$ROOT" apt-get clean`,
    `rm -rf "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/cache/apt/*.bin "$ROOT"/var/log/*.log "$ROOT"/var/log/apt/*`,
    "# pack",
    `tar --numeric-owner --xattrs --xattrs-include='*' -C "$ROOT" -cf - . | zstd -q -3 -T0 -o "$OUT"`,
  ];
  return `${steps.join("\n")}\n`;
}

export interface BaseImage {
  release: Release;
  hash: string;
  tarball: string;
  /** Unpacked tarball, read-only lower layer of every sandbox of this hash. */
  rootfs: string;
}

function imageHash(script: string): string {
  return createHash("sha256").update(script).digest("hex").slice(0, 16);
}

/** One image per release, named by it: a build of one release never prunes another's. */
export function imagePaths(hash: string, release: Release = DEFAULT_RELEASE): BaseImage {
  return {
    release,
    hash,
    tarball: path.join(CACHE_DIR, `sandbox-base-${release}-${hash}.tar.zst`),
    rootfs: path.join(CACHE_DIR, `sandbox-rootfs-${release}-${hash}`),
  };
}

/** The build's full output (debootstrap's and the script's), kept beside the tarball: the build shows a
 * progress line only. */
export function buildLogPath(tarball: string): string {
  return tarball.replace(/\.tar\.zst$/, ".build.log");
}

/** The last `n` lines of `text`, indented, for an error message that stays readable. */
function lastLines(text: string, n: number): string {
  return text
    .trimEnd()
    .split("\n")
    .slice(-n)
    .map((l) => `  ${l}`)
    .join("\n");
}

/** The error for a failed build: the last lines of its log and of debootstrap's own log (copied into it,
 * as the build directory goes). */
function buildFailure(code: number, root: string, logFile: string, logFd: number): Error {
  const output = fs.readFileSync(logFile, "utf8");
  const debootLog = path.join(root, "debootstrap", "debootstrap.log");
  let extra = "";
  if (fs.existsSync(debootLog)) {
    const text = fs.readFileSync(debootLog, "utf8");
    fs.writeSync(logFd, `---- debootstrap's own log, ${debootLog} (removed with the build directory) ----\n${text}`);
    extra = `\nthe last lines of debootstrap's own log (copied to the end of ${logFile}):\n${lastLines(text, 8)}`;
  }
  return new Error(
    `sandbox base image build failed (exit ${code}); the last lines of its log ${logFile}:\n` +
      `${output.trim() ? lastLines(output, 20) : "  (no output)"}${extra}\n` +
      `Check that the host's apt mirror answers (apt-get update on the host), then rerun \`npm run sandbox image\``,
  );
}

/** Runs the build script into `tarball` (in CACHE_DIR; exported for its tests, which build elsewhere). */
export async function buildTarball(
  script: string,
  tarball: string,
  log: (l: string) => void,
  release: Release = DEFAULT_RELEASE,
): Promise<void> {
  const work = fs.mkdtempSync(path.join(path.dirname(tarball), "build-"));
  const root = path.join(work, "rootfs");
  const out = `${tarball}.tmp-${process.pid}`;
  const logFile = buildLogPath(tarball);
  fs.mkdirSync(root);
  fs.writeFileSync(path.join(work, "build.sh"), script);
  // Owner only: the output names the host's mirror, whose URL may hold a proxy's credentials.
  fs.rmSync(logFile, { force: true });
  const logFd = fs.openSync(logFile, "w", 0o600);
  const started = Date.now();
  log(`building the sandbox base image (debootstrap ${release}, about a minute); full log: ${logFile}`);
  const progress = progressFor(log);
  const counts = new DebootstrapProgress();
  const show = () =>
    progress.update(
      `building the sandbox image: ${describeCounts(counts.counts())}`,
      stageGroup(counts.counts().stage),
    );
  try {
    // A private mount namespace: debootstrap mounts /proc and /sys in the target and, if it fails
    // half-way, leaves them mounted; here they vanish with the namespace.
    const r = await run("unshare", ["--mount", "--propagation", "private", "bash", path.join(work, "build.sh")], {
      env: childEnv({ ROOT: root, OUT: out, DEBIAN_FRONTEND: "noninteractive" }),
      onLine: (l) => {
        fs.writeSync(logFd, `${l}\n`);
        if (counts.read(l)) show();
      },
      echoStdout: true,
    });
    progress.end();
    if (r.code !== 0) throw buildFailure(r.code, root, logFile, logFd);
    fs.renameSync(out, tarball);
    const mb = (fs.statSync(tarball).size / 1e6).toFixed(0);
    log(`base image built in ${((Date.now() - started) / 1000).toFixed(1)} s: ${tarball} (${mb} MB)`);
  } finally {
    progress.end();
    fs.closeSync(logFd);
    fs.rmSync(out, { force: true });
    fs.rmSync(work, { recursive: true, force: true });
  }
}

async function unpack(img: BaseImage, log: (l: string) => void): Promise<void> {
  const tmp = `${img.rootfs}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { mode: 0o755 });
  const r = await run(
    "bash",
    [
      "-c",
      `set -o pipefail; zstd -q -dc "$1" | tar --numeric-owner --xattrs --xattrs-include='*' -C "$2" -xpf -`,
      "unpack",
      img.tarball,
      tmp,
    ],
    { env: childEnv() },
  );
  if (r.code !== 0) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw new Error(
      `unpacking the sandbox base image ${img.tarball} failed: ${tail(r.stderr)}; ` +
        "delete it and rerun `npm run sandbox image`",
    );
  }
  // The rename is what makes the rootfs visible: a half-unpacked tree is never used as a lower layer.
  fs.renameSync(tmp, img.rootfs);
  log(`base image unpacked to ${img.rootfs}`);
}

/** Drops images of other recipes of the same release (and unnamed ones of earlier versions, with bookworm),
 * except rootfs trees that a live sandbox still uses as its lower layer. */
function pruneOld(keep: string, release: Release, log: (l: string) => void): void {
  const inUse = new Set(
    listRunDirs()
      .map((n) => readState(n)?.lowerDir)
      .filter(Boolean),
  );
  for (const n of fs.readdirSync(CACHE_DIR)) {
    const m = /^sandbox-(base|rootfs)-(?:([a-z]+)-)?([0-9a-f]{16})(\.tar\.zst|\.build\.log)?$/.exec(n);
    if (!m || m[3] === keep || (m[2] ?? DEFAULT_RELEASE) !== release) continue;
    const p = path.join(CACHE_DIR, n);
    if (inUse.has(p)) continue;
    fs.rmSync(p, { recursive: true, force: true });
    log(`removed outdated ${p}`);
  }
}

/** Builds (once per recipe hash, one builder at a time across processes) and unpacks the base image. */
export async function ensureBaseRootfs(
  log: (l: string) => void = () => undefined,
  opts: { rebuild?: boolean; release?: Release } = {},
): Promise<BaseImage> {
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  const release = opts.release ?? DEFAULT_RELEASE;
  const script = buildScript(release);
  const img = imagePaths(imageHash(script), release);
  if (!opts.rebuild && fs.existsSync(img.tarball) && fs.existsSync(img.rootfs)) return img;
  const l = await lock(
    path.join(CACHE_DIR, `.lock-${img.hash}`),
    "another process building the sandbox base image",
    15 * 60_000,
    log,
  );
  try {
    if (opts.rebuild && fs.existsSync(img.tarball)) {
      fs.rmSync(img.tarball, { force: true });
      // A rootfs in use by a running sandbox must stay; otherwise it is rebuilt from the new tarball.
      const inUse = listRunDirs().some((n) => readState(n)?.lowerDir === img.rootfs);
      if (!inUse) fs.rmSync(img.rootfs, { recursive: true, force: true });
    }
    if (!fs.existsSync(img.tarball)) {
      await buildTarball(script, img.tarball, log, release);
      pruneOld(img.hash, release, log);
    }
    if (!fs.existsSync(img.rootfs)) await unpack(img, log);
  } finally {
    l.release();
  }
  return img;
}

/** Path of the cached base image tarball, building it first if this recipe has none yet. */
export async function ensureBaseImage(log?: (line: string) => void, release?: Release): Promise<string> {
  return (await ensureBaseRootfs(log, { release })).tarball;
}
