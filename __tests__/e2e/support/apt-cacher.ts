// Debian's apt-cacher-ng as the proxy in front of a host-only sandbox: a child process of the test with its
// own configuration, cache and log in a temporary directory, bound to the sandbox's host-side address on a
// port found free there; no Debian service unit, no default port 3142, no Remap (it fetches each URL as
// apt asks for it, so from the host's own mirror, whose name the sandbox took from the host's apt).
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";

const APT_CACHER_BIN = "/usr/sbin/apt-cacher-ng";

export interface AptCacher {
  /** http://<host address>:<port> as a VM's aptProxy. */
  readonly url: string;
  /** What apt-cacher-ng logged: one line per request, "time|I or O|size|client|URL". */
  log(): string;
  stop(): Promise<void>;
}

/** A port free on `host` now. apt-cacher-ng 3.7 cannot bind ports above 32767 (its resolver says
 * "Error resolving address for binding"), so the search stays below. */
async function freePort(host: string): Promise<number> {
  for (let port = 20000 + Math.floor(Math.random() * 10000), n = 0; n < 50; n++, port++) {
    const free = await new Promise<boolean>((resolve) => {
      const s = net.createServer();
      s.once("error", () => resolve(false));
      s.listen(port, host, () => s.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error(`no free port from 20000 to 29999 on ${host} for apt-cacher-ng`);
}

/** Answers a TCP connect (bounded): apt-cacher-ng listening. */
async function waitListening(host: string, port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`apt-cacher-ng exited ${child.exitCode}: ${output()}`);
    const up = await new Promise<boolean>((resolve) => {
      const c = net.connect({ host, port }, () => {
        c.destroy();
        resolve(true);
      });
      c.once("error", () => resolve(false));
    });
    if (up) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`apt-cacher-ng did not listen on ${host}:${port} within 15 s: ${output()}`);
}

/** Starts apt-cacher-ng on `host` (the sandbox's host side); stop() ends it and removes its directory. */
export async function startAptCacher(host: string): Promise<AptCacher> {
  if (!fs.existsSync(APT_CACHER_BIN)) throw new Error(`${APT_CACHER_BIN} is missing: run bin/setup as root`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vmi-acng-"));
  for (const d of ["conf", "cache", "log"]) fs.mkdirSync(path.join(dir, d));
  const port = await freePort(host);
  const conf = [
    `CacheDir: ${dir}/cache`,
    `LogDir: ${dir}/log`,
    "SupportDir: /usr/lib/apt-cacher-ng",
    `BindAddress: ${host}`,
    `Port: ${port}`,
    `SocketPath: ${dir}/socket`,
    `PidFile: ${dir}/pid`,
    "ForeGround: 1",
    "",
  ];
  fs.writeFileSync(path.join(dir, "conf", "acng.conf"), conf.join("\n"));
  let output = "";
  const child = spawn(APT_CACHER_BIN, ["-c", path.join(dir, "conf")], { stdio: ["ignore", "pipe", "pipe"] });
  child.stdout?.on("data", (b) => (output += b));
  child.stderr?.on("data", (b) => (output += b));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null) child.kill("SIGTERM");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitListening(host, port, child, () => output);
  } catch (e) {
    await stop();
    throw e;
  }
  const logFile = path.join(dir, "log", "apt-cacher.log");
  return {
    url: `http://${host}:${port}`,
    log: () => (fs.existsSync(logFile) ? fs.readFileSync(logFile, "utf8") : ""),
    stop,
  };
}
