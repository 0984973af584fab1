// Waiting for a booted target to be usable: sshd answering with its banner, logins allowed, and the
// host key known (from the file boot.sh copied out, or asked of sshd when cloud-init made it).
import * as fs from "node:fs";
import * as net from "node:net";
import { type BootPaths, SSH_PORT, sha256Fingerprint } from "./boot";
import { type ProcRef, procAlive } from "./procfs";
import { childEnv, run, tail } from "./run";
import { findInit } from "./tree";
import { sleep } from "./wait";

function consoleTail(p: BootPaths): string {
  try {
    return tail(fs.readFileSync(p.consoleLog, "utf8"), 15);
  } catch {
    return "(no console output)";
  }
}

function sshBanner(address: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: address, port });
    let buf = "";
    const done = (ok: boolean) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    sock.setEncoding("utf8");
    sock.on("data", (d: string) => {
      buf += d;
      if (buf.includes("\n")) done(buf.startsWith("SSH-"));
    });
    sock.on("error", () => done(false));
    sock.on("close", () => done(false));
  });
}

/** The ed25519 key sshd presents ("ssh-ed25519 AAAA..."), or "" when it offers none. */
async function scanHostKey(address: string): Promise<string> {
  const args = ["-T", "5", "-t", "ed25519", "-p", String(SSH_PORT), address];
  const r = await run("ssh-keyscan", args, { env: childEnv() });
  const line = r.stdout.split("\n").find((l) => l.split(/\s+/)[1] === "ssh-ed25519");
  return line ? line.trim().split(/\s+/).slice(1, 3).join(" ") : "";
}

/** The name of the error a boot that ran out of time throws (startSandbox boots once more on it). */
export const NOT_READY = "SandboxNotReady";

/** What the container's systemd was doing when the wait gave up: the sandbox is torn down right after,
 * so this is the only look a failed CI run leaves. */
const SYSTEMD_STATE =
  "systemctl is-system-running; systemctl list-jobs --no-pager; ls -l /run/nologin; " +
  "journalctl -b --no-pager -o short-monotonic -n 40";

async function systemdState(exec: (cmd: string) => Promise<{ code: number; stdout: string }>): Promise<string> {
  const r = await exec(`${SYSTEMD_STATE} 2>&1`).catch((e: Error) => ({ code: -1, stdout: e.message }));
  const lines = r.stdout.trim().split("\n").slice(-60);
  return `. systemd in the container said:\n${lines.join("\n")}\n`;
}

export interface ReadyInfo {
  hostPublicKey: string;
  hostKeySha256: string;
  init: number;
}

/**
 * Waits until sshd answers with its banner and logins are allowed (systemd-user-sessions has removed
 * /run/nologin; before that sshd refuses every non-root user with "System is booting up").
 */
export async function waitUntilReady(
  name: string,
  top: ProcRef,
  p: BootPaths,
  address: string,
  timeoutMs: number,
  exec: (cmd: string) => Promise<{ code: number; stdout: string }>,
  /** "file": boot.sh generated the host key and copied it out; "sshd": cloud-init made it, ask sshd. */
  hostKeyFrom: "file" | "sshd" = "file",
): Promise<ReadyInfo> {
  const deadline = Date.now() + timeoutMs;
  const fail = (what: string) => new Error(`sandbox ${name}: ${what}. Console (${p.consoleLog}): ${consoleTail(p)}`);
  let hostPublicKey = "";
  let init: number | undefined;
  let stage = hostKeyFrom === "file" ? "the host key to be generated" : "systemd to start in the container";
  for (;;) {
    if (!procAlive(top)) throw fail(`the boot process (unshare pid ${top.pid}) exited while waiting for ${stage}`);
    if (Date.now() > deadline) {
      const why = init ? await systemdState(exec) : "";
      const e = fail(`not ready after ${Math.round(timeoutMs / 1000)} s, still waiting for ${stage}${why}`);
      throw Object.assign(e, { name: NOT_READY });
    }
    if (!hostPublicKey && hostKeyFrom === "file") {
      // Type and key only: ssh-keygen -A in the chroot commented it with the host's name, which is noise.
      if (fs.existsSync(p.hostPub))
        hostPublicKey = fs.readFileSync(p.hostPub, "utf8").trim().split(/\s+/).slice(0, 2).join(" ");
      else {
        await sleep(50);
        continue;
      }
      stage = "systemd to start in the container";
    }
    if (!init) {
      init = findInit(top);
      if (!init) {
        await sleep(50);
        continue;
      }
      stage = `sshd to answer on ${address}:${SSH_PORT}`;
    }
    if (stage.startsWith("sshd")) {
      if (!(await sshBanner(address, SSH_PORT, 1000))) {
        await sleep(100);
        continue;
      }
      stage = "logins to be allowed (systemd-user-sessions)";
    }
    const r = await exec("systemctl is-active --quiet systemd-user-sessions.service && ! test -e /run/nologin");
    if (r.code === 0) break;
    await sleep(100);
  }
  if (!hostPublicKey) {
    hostPublicKey = await scanHostKey(address);
    const why = "did the user-data's ssh_genkeytypes or ssh_keys leave it out?";
    if (!hostPublicKey) throw fail(`sshd answers on ${address} but offers no ed25519 host key (${why})`);
  }
  return { hostPublicKey, hostKeySha256: sha256Fingerprint(hostPublicKey), init };
}
