// Fault injection for the end-to-end suites: the things that go wrong on a real VM (sshd not up yet, a
// second apt holding the dpkg lock, the wrong key or host key) made to happen on a sandbox on purpose,
// plus the probes that tell whether the handler touched the target at all.
//
// Everything here acts from outside the SSH path the handler uses (nft in the target's netns, nsenter
// via rootExec/rootSpawn, ssh-keygen on the host), so a fault never depends on the thing it breaks.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Sandbox } from "../../../dev/sandbox/index";

function run(cmd: string, args: string[], input?: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(cmd, args, { encoding: "utf8", timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({
        code: err
          ? typeof (err as { code?: unknown }).code === "number"
            ? Number((err as { code?: number }).code)
            : 1
          : 0,
        stdout,
        stderr,
      }),
    );
    // A command that never reads stdin (ssh-keygen) may exit before the write: EPIPE then, not a failure.
    child.stdin?.on("error", () => undefined);
    child.stdin?.end(input ?? "");
  });
}

async function mustRun(cmd: string, args: string[], input?: string): Promise<string> {
  const r = await run(cmd, args, input);
  if (r.code !== 0)
    throw new Error(`${cmd} ${args.join(" ")} failed (exit ${r.code}): ${r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout;
}

async function mustRoot(sb: Sandbox, command: string, input?: string): Promise<string> {
  const r = await sb.rootExec(command, { timeoutMs: 30_000, input });
  if (r.code !== 0)
    throw new Error(
      `in sandbox ${sb.name}: \`${command}\` failed (exit ${r.code}): ${r.stderr.trim() || r.stdout.trim()}`,
    );
  return r.stdout;
}

// ---------------------------------------------------------------------------------------------------
// sshd unreachable.

export interface SshBlock {
  /** Date.now() when the block took effect. */
  readonly blockedAt: number;
  /** Removes the block (idempotent); resolves with Date.now() once packets flow again. */
  restore(): Promise<number>;
}

/**
 * Makes the target's SSH port refuse connections: an nft table of our own in the target's network
 * namespace rejects TCP to the port with a reset, so a client sees ECONNREFUSED exactly as while a VM
 * is still booting and sshd is not listening yet. sshd itself keeps running, so restoring is instant
 * and leaves no doubt about whether sshd came back.
 */
export async function blockSsh(sb: Sandbox): Promise<SshBlock> {
  const table = `vmi_fault_${randomBytes(3).toString("hex")}`;
  const rules = [
    `table inet ${table} {`,
    `  chain input {`,
    `    type filter hook input priority -10; policy accept;`,
    `    tcp dport ${sb.port} reject with tcp reset`,
    `  }`,
    `}`,
  ].join("\n");
  await mustRun("ip", ["netns", "exec", sb.netns, "nft", "-f", "-"], `${rules}\n`);
  const blockedAt = Date.now();
  let restored: Promise<number> | undefined;
  return {
    blockedAt,
    restore: () =>
      (restored ??= mustRun("ip", ["netns", "exec", sb.netns, "nft", "delete", "table", "inet", table]).then(() =>
        Date.now(),
      )),
  };
}

/** blockSsh, restored by a timer after `ms`; `restored` settles when the timer has run. */
export async function blockSshFor(sb: Sandbox, ms: number): Promise<SshBlock & { restored: Promise<number> }> {
  const block = await blockSsh(sb);
  const restored = new Promise<number>((resolve, reject) => {
    setTimeout(() => block.restore().then(resolve, reject), Math.max(0, block.blockedAt + ms - Date.now()));
  });
  return { ...block, restored };
}

// ---------------------------------------------------------------------------------------------------
// The dpkg lock.

/** What apt itself would hold while it works. apt uses fcntl (POSIX) locks: flock(1) would not conflict. */
const DPKG_LOCKS = ["/var/lib/dpkg/lock-frontend", "/var/lib/dpkg/lock"];
const HOLDER_SCRIPT = "/root/hold-dpkg-lock.py";
const HOLDER_SOURCE = `# Holds apt's dpkg locks the way apt does (fcntl), as a concurrent apt-get or unattended-upgrades would.
import fcntl, os, sys, time
seconds, marker, locks = float(sys.argv[1]), sys.argv[2], sys.argv[3:]
fds = []
for path in locks:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o640)
    fcntl.lockf(fd, fcntl.LOCK_EX)
    fds.append(fd)
with open(marker + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.rename(marker + ".tmp", marker)
time.sleep(seconds)
`;

export interface LockHold {
  /** The holder's pid inside the target (what /proc/locks there shows). */
  readonly pid: number;
  /** The holder's command line, as the target's /proc/<pid>/cmdline gives it (NULs as spaces). */
  readonly command: string;
  /** Date.now() once both locks were held. */
  readonly heldAt: number;
  /** Settles when the holder has exited (after `seconds`, or release()). */
  readonly done: Promise<unknown>;
  /** Ends the holder now. */
  release(): void;
}

/**
 * Holds /var/lib/dpkg/lock-frontend and /var/lib/dpkg/lock in the target for `seconds` with python3's
 * fcntl.lockf, from a root process started through nsenter (not over SSH). Resolves once both locks
 * are really held, so the job that follows is certain to meet them.
 */
export async function holdDpkgLock(sb: Sandbox, seconds: number): Promise<LockHold> {
  await mustRoot(sb, `cat > ${HOLDER_SCRIPT}`, HOLDER_SOURCE);
  const marker = `/run/hold-dpkg-lock-${randomBytes(3).toString("hex")}.pid`;
  const command = `python3 ${HOLDER_SCRIPT} ${seconds} ${marker} ${DPKG_LOCKS.join(" ")}`;
  // exec: python3 is then the process nsenter started, so release() reaches it.
  const spawned = sb.rootSpawn(`exec ${command}`);
  let exited = false;
  const done = spawned.done.finally(() => (exited = true));
  done.catch(() => undefined);
  const deadline = Date.now() + 15_000;
  for (;;) {
    const r = await sb.rootExec(`cat ${marker} 2>/dev/null`, { timeoutMs: 10_000 });
    const pid = Number(r.stdout.trim());
    if (r.code === 0 && pid > 0) return { pid, command, heldAt: Date.now(), done, release: () => spawned.kill() };
    if (exited) throw new Error(`the dpkg lock holder exited before taking the locks: ${JSON.stringify(await done)}`);
    if (Date.now() > deadline) {
      spawned.kill();
      throw new Error(`the dpkg lock holder did not take the locks within 15 s (marker ${marker} never appeared)`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export interface UnitLockHold {
  /** The holder's pid inside the target. */
  readonly pid: number;
  /** Its command line, as the target's /proc/<pid>/cmdline gives it (NULs as spaces). */
  readonly command: string;
  /** The systemd unit the holder runs in. */
  readonly unit: string;
  /** Stops the unit (the holder with it); resolves once it is stopped. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Holds the dpkg locks as holdDpkgLock does, but in a systemd service of the given name (systemd-run
 * --unit), as unattended-upgrades or cloud-final would: its cgroup names that unit. Resolves once the
 * locks are held.
 */
export async function holdDpkgLockInUnit(sb: Sandbox, unit: string, seconds: number): Promise<UnitLockHold> {
  await mustRoot(sb, `cat > ${HOLDER_SCRIPT}`, HOLDER_SOURCE);
  const marker = `/run/hold-dpkg-lock-${randomBytes(3).toString("hex")}.pid`;
  const command = `/usr/bin/python3 ${HOLDER_SCRIPT} ${seconds} ${marker} ${DPKG_LOCKS.join(" ")}`;
  await mustRoot(
    sb,
    `systemctl reset-failed ${unit} 2>/dev/null; systemd-run --quiet --collect --unit=${unit} ${command}`,
  );
  const deadline = Date.now() + 15_000;
  let stopped: Promise<void> | undefined;
  const stop = () => (stopped ??= mustRoot(sb, `systemctl stop ${unit}`).then(() => undefined));
  for (;;) {
    const r = await sb.rootExec(`cat ${marker} 2>/dev/null`, { timeoutMs: 10_000 });
    const pid = Number(r.stdout.trim());
    if (r.code === 0 && pid > 0) return { pid, command, unit, stop };
    if (Date.now() > deadline) {
      await stop().catch(() => undefined);
      throw new Error(
        `the dpkg lock holder in ${unit} did not take the locks within 15 s (marker ${marker} never appeared)`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// ---------------------------------------------------------------------------------------------------
// Keys.

export interface GeneratedKey {
  privateKeyPath: string;
  privateKey: string;
  /** Its public key's OpenSSH fingerprint, "SHA256:...". */
  fingerprint: string;
  /** Deletes the key files. */
  dispose(): void;
}

/** A fresh ed25519 key pair in a temp directory: not in any authorized_keys, not any host's key. */
export async function freshEd25519Key(): Promise<GeneratedKey> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vmi-fault-key-"));
  const privateKeyPath = path.join(dir, "id_ed25519");
  await mustRun("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "vm-install fault key", "-f", privateKeyPath]);
  const line = await mustRun("ssh-keygen", ["-l", "-E", "sha256", "-f", `${privateKeyPath}.pub`]);
  const fingerprint = /SHA256:[A-Za-z0-9+/]{43}/.exec(line)?.[0];
  if (!fingerprint) throw new Error(`could not read a fingerprint from ssh-keygen -l: ${line}`);
  return {
    privateKeyPath,
    privateKey: fs.readFileSync(privateKeyPath, "utf8"),
    fingerprint,
    dispose: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

// ---------------------------------------------------------------------------------------------------
// Did anything reach the target?

/**
 * How many SSH logins sshd on the target has accepted since boot ("Accepted publickey" in its journal).
 * Read through nsenter, so reading it opens no session of its own. `journalctl --sync` first, so a
 * login logged just before the call is counted. OpenSSH 9.8 and later (Debian 13) log the login from
 * the per-connection sshd-session process, under that name: both are read.
 */
export async function acceptedLogins(sb: Sandbox): Promise<number> {
  const out = await mustRoot(
    sb,
    "journalctl --sync 2>/dev/null; journalctl -t sshd -t sshd-session --no-pager -o cat | grep -c 'Accepted publickey' || true",
  );
  return Number(out.trim());
}

// ---------------------------------------------------------------------------------------------------
// Mid-job faults: wait for a moment inside a job, then break something.

/**
 * Polls (every 100 ms, through nsenter) until a process whose command line matches `pattern` (pgrep -f,
 * an extended regex) runs in the target; resolves with its pid. Used to strike in the middle of a step
 * (dpkg unpacking, apt-get install) rather than after a guessed delay.
 */
export async function waitForProcess(sb: Sandbox, pattern: string, timeoutMs = 120_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await sb.rootExec(`pgrep -o -f ${shellQuote(selfSafe(pattern))} || true`, { timeoutMs: 10_000 });
    const pid = Number(r.stdout.trim().split("\n")[0]);
    if (pid > 0) return pid;
    if (Date.now() > deadline)
      throw new Error(`no process matching ${pattern} appeared in ${sb.name} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * `pattern` as pgrep/pkill get it, first character in brackets: the same regex, which no longer matches
 * the command line of the shell that runs pgrep (it holds the pattern's text, not what it matches).
 */
function selfSafe(pattern: string): string {
  return /^[A-Za-z0-9]/.test(pattern) ? `[${pattern[0]}]${pattern.slice(1)}` : pattern;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * Cuts the target off the network for `ms`: the host's end of its veth goes down (the target sees its
 * link lose carrier, every packet to or from it is lost), then comes back up. Resolves once it is up.
 */
export async function cutNetworkFor(sb: Sandbox, ms: number): Promise<{ downAt: number; upAt: number }> {
  await mustRun("ip", ["link", "set", sb.hostVeth, "down"]);
  const downAt = Date.now();
  try {
    await new Promise((resolve) => setTimeout(resolve, ms));
  } finally {
    await mustRun("ip", ["link", "set", sb.hostVeth, "up"]);
  }
  return { downAt, upAt: Date.now() };
}

/** What a healthy VM looks like after a fault: one line per problem, empty when there is none. */
export async function vmProblems(sb: Sandbox, packages: string[]): Promise<string[]> {
  const problems: string[] = [];
  const status = await sb.rootExec(`dpkg-query -W -f='\${Package} \${Status}\\n' ${packages.join(" ")} 2>&1; true`);
  for (const name of packages) {
    const line = status.stdout.split("\n").find((l) => l.startsWith(`${name} `));
    if (!line?.endsWith("install ok installed")) problems.push(`${name}: ${line ?? "not known to dpkg"}`);
  }
  const audit = await sb.rootExec("dpkg --audit 2>&1; ls -A /var/lib/dpkg/updates");
  if (audit.stdout.trim()) problems.push(`dpkg --audit / updates: ${audit.stdout.trim()}`);
  // apt's locks are fcntl locks: try them without waiting, as apt would.
  const locks = await sb.rootExec(
    `python3 -c 'import fcntl,os,sys
busy=[]
for p in sys.argv[1:]:
    fd=os.open(p,os.O_RDWR|os.O_CREAT,0o640)
    try: fcntl.lockf(fd,fcntl.LOCK_EX|fcntl.LOCK_NB)
    except OSError: busy.append(p)
print(" ".join(busy))' ${DPKG_LOCKS.join(" ")} /var/lib/apt/lists/lock /var/cache/apt/archives/lock`,
  );
  if (locks.stdout.trim()) problems.push(`locked: ${locks.stdout.trim()}`);
  const running = await sb.rootExec("pgrep -a -x 'apt-get|dpkg' || true");
  if (running.stdout.trim()) problems.push(`still running: ${running.stdout.trim()}`);
  return problems;
}

// ---------------------------------------------------------------------------------------------------
// The matrix: each fault case records its outcome; `npm run faults` prints and publishes them.

export interface FaultRecord {
  case: string;
  /** What happened, in a few words: "job completed", "failed, rerun completed", ... */
  outcome: string;
  /** From the fault to a VM with everything in place, in ms. */
  recoverMs: number;
  ok: boolean;
}

/** Where the records go: FAULTS_REPORT, else .cache/faults.json under the project. */
function faultReportPath(): string {
  return process.env.FAULTS_REPORT ?? path.resolve(__dirname, "../../../.cache/faults.json");
}

/** Appends one case's record (the file holds one JSON object per line). */
export function recordFault(record: FaultRecord): void {
  const file = faultReportPath();
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.appendFileSync(file, `${JSON.stringify(record)}\n`);
}

// ---------------------------------------------------------------------------------------------------
// Strikes on dpkg's own progress: the moment is a line dpkg reports, not a time.

/**
 * Installed in the target as dpkg's status-logger (dpkg.cfg.d: every dpkg run pipes its --status-fd
 * lines to it) and as an apt DPkg::Pre-Invoke hook (the moment between apt's download and its first
 * dpkg). Every line goes to status.log; the armed strike (`strike`: pattern, nth, target) fires once, on
 * the nth line matching: it SIGKILLs the nearest ancestor of that name, then records what it hit and
 * the states dpkg was left in. dpkg writes the line before it goes on, so the kill lands at that moment
 * or just after it, never before; and never after dpkg's end: a post-invoke gate holds dpkg until the
 * logger has acted on every line (a strike at dpkg's last line would otherwise depend on the load).
 */
const STRIKER = "/usr/local/sbin/vmi-fault-striker";
const STRIKE_DIR = "/run/vmi-fault";
const STRIKER_SOURCE = `import os, re, signal, subprocess, sys, time
d = ${JSON.stringify(STRIKE_DIR)}
def ancestor(name):
    pid = os.getppid()
    while pid > 1:
        try:
            comm = open("/proc/%d/comm" % pid).read().strip()
            ppid = int(open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[1])
        except OSError:
            return None
        if comm == name:
            return pid
        pid = ppid
    return None
def seen(line):
    try:
        pattern, nth, target = open(d + "/strike").read().split("\\t")
    except (OSError, ValueError):
        return
    if not re.search(pattern, line):
        return
    with open(d + "/count", "a") as c:
        c.write("x")
    if os.path.getsize(d + "/count") != int(nth):
        return
    try:
        os.rename(d + "/strike", d + "/struck")
    except OSError:
        return
    pid = ancestor(target.strip())
    if pid is None:
        open(d + "/fired", "w").write("MISSED no %s above %s at: %s\\n" % (target.strip(), os.getpid(), line))
        return
    # Said before the kill: a killed apt-get ends its systemd unit, whose cgroup (this process too) goes with it.
    said = "%d killed %s %d at: %s" % (int(time.time() * 1000), target.strip(), pid, line)
    record(said + "; left: not seen (the striker went down with its unit)")
    os.kill(pid, signal.SIGKILL)
    for _ in range(200):
        try:
            if open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0] in "ZX":
                break
        except OSError:
            break
        time.sleep(0.01)
    record("%s; left: %s" % (said, between() or "nothing in between"))
def between():
    left = subprocess.run(["dpkg-query", "-W", "-f=\${Package} \${db:Status-Abbrev}\\n"], capture_output=True, text=True).stdout
    return " ".join(l.split()[0] + "=" + l.split()[1] for l in left.splitlines() if len(l.split()) > 1 and l.split()[1] not in ("ii", "un", "rc"))
def record(text):
    open(d + "/fired.tmp", "w").write(text + "\\n")
    os.rename(d + "/fired.tmp", d + "/fired")
def gate():
    # dpkg runs this (post-invoke) before it exits, and waits: it holds dpkg until the logger beside it has
    # read and acted on every line dpkg wrote, so a strike late under load still lands before dpkg ends.
    import fcntl, struct, termios
    me = ancestor("dpkg")
    if me is None:
        return
    def under_me(pid):
        for _ in range(3):
            pid = int(open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()[1])
            if pid == me:
                return True
        return False
    for _ in range(3000):
        if not os.path.exists(d + "/strike"):
            return
        idle = True
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                stat = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
                if b"vmi-fault-striker\\0logger" not in open("/proc/%s/cmdline" % pid, "rb").read() or not under_me(pid):
                    continue
                fd = os.open("/proc/%s/fd/0" % pid, os.O_RDONLY | os.O_NONBLOCK)
                unread = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\\0" * 4))[0]
                os.close(fd)
                idle = idle and unread == 0 and stat[0] == "S"
            except OSError:
                continue
        if idle:
            break
        time.sleep(0.01)
    # The end of a dpkg run is a moment of its own, with the states it leaves: "hook: post-invoke a=iW ...".
    line = ("hook: post-invoke " + between()).rstrip()
    log.write(line + "\\n")
    seen(line)
log = open(d + "/status.log", "a", buffering=1)
if sys.argv[1:2] == ["gate"]:
    gate()
elif sys.argv[1:2] == ["hook"]:
    line = "hook: " + sys.argv[2]
    log.write(line + "\\n")
    seen(line)
else:
    for line in sys.stdin:
        line = line.rstrip("\\n")
        log.write(line + "\\n")
        seen(line)
`;

/** A moment to strike at: the `nth` (default 1st) line of dpkg's progress matching `on`, killing `kill`. */
export interface DpkgStrike {
  /** A regex on dpkg's --status-fd lines ("status: pkg: half-installed", "processing: configure: pkg") or "hook: pre-invoke". */
  on: string;
  nth?: number;
  /** The process to SIGKILL: the nearest ancestor of the logger with that name. */
  kill: "dpkg" | "apt-get";
}

/** Installs the striker in the target (idempotent); every later dpkg run reports to it. */
async function installStriker(sb: Sandbox): Promise<void> {
  await mustRoot(
    sb,
    `mkdir -p ${STRIKE_DIR} && cat > ${STRIKER} && ` +
      `printf '%s\\n' 'status-logger "python3 ${STRIKER} logger"' 'post-invoke "python3 ${STRIKER} gate"' > /etc/dpkg/dpkg.cfg.d/vmi-fault && ` +
      `echo 'DPkg::Pre-Invoke { "python3 ${STRIKER} hook pre-invoke"; };' > /etc/apt/apt.conf.d/99vmi-fault`,
    STRIKER_SOURCE,
  );
}

/** What a strike hit: when (Date.now() of the kill: the target shares the host's clock), and in words. */
export interface Struck {
  at: number;
  /** "killed dpkg 1234 at: <dpkg's line>; left: <package>=<dpkg-query's abbreviated status> ..." */
  what: string;
}

/** Arms one strike; `fired()` says what it hit, or undefined when the moment never came. */
export async function armStrike(sb: Sandbox, strike: DpkgStrike): Promise<{ fired(): Promise<Struck | undefined> }> {
  await installStriker(sb);
  await mustRoot(
    sb,
    `rm -f ${STRIKE_DIR}/count ${STRIKE_DIR}/fired ${STRIKE_DIR}/struck && cat > ${STRIKE_DIR}/strike`,
    `${strike.on}\t${strike.nth ?? 1}\t${strike.kill}`,
  );
  return {
    fired: async () => {
      const r = await sb.rootExec(`cat ${STRIKE_DIR}/fired 2>/dev/null`);
      const m = /^(\d+) (.*)$/s.exec(r.stdout.trim());
      if (r.code !== 0 || !r.stdout.trim()) return undefined;
      return m ? { at: Number(m[1]), what: m[2] } : { at: Date.now(), what: r.stdout.trim() };
    },
  };
}

/**
 * SIGKILLs apt-get while it downloads: a loop in the target waits for the first .deb in apt's partial
 * directory to hold data (apt's own progress), then kills. Resolves once killed.
 */
export async function killAptWhileDownloading(sb: Sandbox, timeoutMs = 120_000): Promise<void> {
  const r = await sb.rootExec(
    `n=0; until for f in /var/cache/apt/archives/partial/*.deb; do [ -s "$f" ] && break; f=; done; [ -n "$f" ]; do n=$((n+1)); [ $n -gt ${timeoutMs / 20} ] && exit 3; sleep 0.02; done; ` +
      `pkill -KILL -x apt-get`,
    { timeoutMs: timeoutMs + 10_000 },
  );
  if (r.code !== 0)
    throw new Error(`in sandbox ${sb.name}: apt-get was not caught downloading (exit ${r.code}): ${r.stderr.trim()}`);
}

// ---------------------------------------------------------------------------------------------------
// Maintainer scripts held at a moment we choose: a local apt repository of three tiny packages.

/** The packages of the local repository; `vmi-fault-trigger-files` pulls in `vmi-fault-trigger-watch`. */
export const HELD_PACKAGES = {
  /** Its postinst (configure) blocks while /run/vmi-fault/hold-postinst exists. */
  postinst: "vmi-fault-postinst",
  /** Ships a file under /usr/share/vmi-fault-trig, which vmi-fault-trigger-watch watches (interest: await). */
  triggerFiles: "vmi-fault-trigger-files",
  /** Its postinst, called for that trigger, blocks while /run/vmi-fault/hold-trigger exists. */
  triggerWatch: "vmi-fault-trigger-watch",
  /** Versions 1.0 and 2.0, 2000 files each holding the version: an upgrade whose unpack takes a while. */
  upgrade: "vmi-fault-upgrade",
};

/** Where vmi-fault-upgrade's files are. */
export const UPGRADE_DIR = "/usr/share/vmi-fault-upgrade";

const REPO_BUILDER = `import hashlib, os, subprocess
root = "/srv/vmi-fault-repo"
def hold(arg, tag):
    return """#!/bin/sh
if [ "$1" = %s ] && [ -e ${STRIKE_DIR}/hold-%s ]; then
  echo $$ > ${STRIKE_DIR}/%s.tmp && mv ${STRIKE_DIR}/%s.tmp ${STRIKE_DIR}/%s.running
  read x < ${STRIKE_DIR}/%s.fifo
fi
exit 0
""" % (arg, tag, tag, tag, tag, tag)
pkgs = [
    ("${HELD_PACKAGES.postinst}", "", {"postinst": hold("configure", "postinst")}, {"usr/share/doc/${HELD_PACKAGES.postinst}/README": "held at will\\n"}),
    ("${HELD_PACKAGES.triggerWatch}", "", {"postinst": hold("triggered", "trigger"), "triggers": "interest /usr/share/vmi-fault-trig\\n"}, {"usr/share/doc/${HELD_PACKAGES.triggerWatch}/README": "watches\\n"}),
    ("${HELD_PACKAGES.triggerFiles}", "${HELD_PACKAGES.triggerWatch}", {}, {"usr/share/vmi-fault-trig/one": "1\\n"}),
]
pkgs = [(n, "1.0", dep, sc, f) for n, dep, sc, f in pkgs] + [
    ("${HELD_PACKAGES.upgrade}", v, "", {}, dict(("${UPGRADE_DIR.slice(1)}/f%04d" % i, v + "\\n" * 64) for i in range(2000)))
    for v in ("1.0", "2.0")
]
os.makedirs(root, exist_ok=True)
index = []
for name, version, depends, scripts, files in pkgs:
    build = "/tmp/vmi-fault-build/%s_%s" % (name, version)
    os.makedirs(build + "/DEBIAN", exist_ok=True)
    control = "Package: %s\\nVersion: %s\\nArchitecture: all\\nMaintainer: vm-install tests <tests@invalid>\\n" % (name, version)
    if depends:
        control += "Depends: %s\\n" % depends
    control += "Description: fault matrix fixture\\n"
    open(build + "/DEBIAN/control", "w").write(control)
    for script, text in scripts.items():
        open(build + "/DEBIAN/" + script, "w").write(text)
        os.chmod(build + "/DEBIAN/" + script, 0o755 if script != "triggers" else 0o644)
    for path, text in files.items():
        os.makedirs(os.path.dirname(build + "/" + path), exist_ok=True)
        open(build + "/" + path, "w").write(text)
    deb = "%s_%s_all.deb" % (name, version)
    subprocess.run(["dpkg-deb", "--root-owner-group", "--build", build, root + "/" + deb], check=True, capture_output=True)
    data = open(root + "/" + deb, "rb").read()
    index.append(control + "Filename: ./%s\\nSize: %d\\nSHA256: %s\\n" % (deb, len(data), hashlib.sha256(data).hexdigest()))
packages = "\\n".join(index).encode()
open(root + "/Packages", "wb").write(packages)
open(root + "/Release", "w").write("Origin: vm-install tests\\nLabel: vmi-fault\\nSuite: local\\nCodename: local\\nArchitectures: all\\n"
    "SHA256:\\n %s %d Packages\\n" % (hashlib.sha256(packages).hexdigest(), len(packages)))
open("/etc/apt/sources.list.d/vmi-fault.list", "w").write("deb [trusted=yes] file:%s ./\\n" % root)
`;

/** Builds the local repository in the target and adds it to apt's sources (the job's apt-get update reads it). */
export async function installHeldPackagesRepo(sb: Sandbox): Promise<void> {
  await mustRoot(sb, `mkdir -p ${STRIKE_DIR} && python3 -`, REPO_BUILDER);
}

export interface HeldScript {
  /** Resolves with the script's pid once it is blocked (it writes its pid first: the target's own word). */
  running: Promise<number>;
  /** Lets later runs of the script pass without blocking (the hold marker goes). */
  unhold(): Promise<void>;
}

/** Makes the next run of the `tag` script ("postinst" | "trigger") block until killed or released. */
export async function holdMaintainerScript(
  sb: Sandbox,
  tag: "postinst" | "trigger",
  timeoutMs = 120_000,
): Promise<HeldScript> {
  const d = STRIKE_DIR;
  await mustRoot(sb, `rm -f ${d}/${tag}.running ${d}/${tag}.fifo && mkfifo ${d}/${tag}.fifo && touch ${d}/hold-${tag}`);
  const running = sb
    .rootExec(
      `n=0; until [ -s ${d}/${tag}.running ]; do n=$((n+1)); [ $n -gt ${timeoutMs / 50} ] && exit 3; sleep 0.05; done; cat ${d}/${tag}.running`,
      {
        timeoutMs: timeoutMs + 10_000,
      },
    )
    .then((r) => {
      if (r.code !== 0) throw new Error(`in sandbox ${sb.name}: the held ${tag} script never ran (exit ${r.code})`);
      return Number(r.stdout.trim());
    });
  running.catch(() => undefined);
  return { running, unhold: () => mustRoot(sb, `rm -f ${d}/hold-${tag}`).then(() => undefined) };
}

/**
 * A strike in a few words for the matrix: `dpkg killed at "<line>"; left <the states>`, the packages only
 * unpacked (dpkg-query's iU, the many an interrupted install leaves) counted rather than named.
 */
export function describeStrike(what: string): string {
  const m = /^killed (\S+) \d+ at: (.*?); left: (.*)$/.exec(what);
  if (!m) return what;
  const [, target, line, left] = m;
  const states = left.split(" ").filter((s) => s.includes("="));
  if (states.length === 0) return `${target} killed at "${line}"; left ${left}`;
  const unpacked = states.filter((s) => /=iU$/.test(s));
  const named = states.filter((s) => !/=iU$/.test(s));
  const shown = unpacked.length > 2 ? [...named, `${unpacked.length} more unpacked (iU)`] : [...named, ...unpacked];
  return `${target} killed at "${line}"; left ${shown.join(", ")}`;
}
