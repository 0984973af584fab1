// The bundled handler.js, copied alone into an empty directory and run the way a job runs it
// (`node -e 'require("<dir>/handler.js").install(event)'`, connection in env), against an in-process
// SSH server that plays a small Debian VM: real SSH, real sudo wrapping on the wire, real parsing.

import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { TRANSACTION_LOOK, TRANSACTION_PROLOGUE } from "../../handlers/common/apt-transaction";
import { BOOT_LOOK } from "../../handlers/common/boot-look";
import { DPKG_HEALTH_LOOK } from "../../handlers/common/dpkg-health";
import { PACKAGES_PROBE } from "../../handlers/common/ensure-packages";
import { LOCK_TABLE_LOOK } from "../../handlers/common/lock-holders";
import { INVENTORY_LOOK, PACKAGES_FILE } from "../../handlers/common/package-inventory";
import { bundleHandler } from "../../lib/construct/bundling/bundle";
import { DEBIAN_12, dpkgLine, policyBlock } from "./support/fixtures";
import { answerFollowed, answerLook, answerWithTransaction, probesOf } from "./support/look-answers";
import { renameOf } from "./support/remote-writes";
import { type ExecReply, startServer, type TestServer } from "./support/ssh-server";
import { testKey } from "./support/test-keys";
import { unwrapLine } from "./support/wire";

/** A pretend Debian VM: a repository, an installed set, and the few commands the installer sends. */
class FakeVm {
  readonly repo: Record<string, string> = {
    git: "1:2.39.2-1.1",
    curl: "7.88.1-10+deb12u5",
    jq: "1.6-2.1",
    htop: "3.2.2-2",
  };
  readonly installed = new Map<string, string>([["curl", "7.88.1-10+deb12u5"]]);
  readonly log: string[] = [];
  /** /var/lib/vm-install/packages.json as the job last wrote it. */
  inventory?: string;
  /** The last install's record as its dpkg hooks wrote it (common/apt-transaction.ts). */
  transaction: Record<string, string> = {};

  /** dpkg-query's answer, when `cmd` is one. */
  dpkgQuery(cmd: string): ExecReply | undefined {
    const m = /^dpkg-query -W -f='[^']*' (.*)$/.exec(cmd);
    if (!m) return undefined;
    const names = m[1].trim().split(/\s+/);
    return {
      code: names.every((n) => this.installed.has(n)) ? 0 : 1,
      stdout: names.map((n) => (this.installed.has(n) ? dpkgLine(n, this.installed.get(n)) : "")).join(""),
    };
  }

  exec = (line: string, stdin?: Buffer): ExecReply => {
    this.log.push(line);
    const { sudo, script } = unwrapLine(line);
    let cmd = script.replace(/^(export [A-Z_]+=\S*; )+/, "");
    // A long step run detached (common/detached.ts): the step's own script is what the VM would run.
    const detached = /printf '%s\\n' '((?:[^']|'\\'')*)' > "\$s\/cmd"/.exec(cmd);
    if (sudo && detached) cmd = detached[1].replace(/'\\''/g, "'").replace(/^(export [A-Z_]+=\S*; )+/, "");
    return this.answer(cmd, sudo, stdin);
  };

  answer(cmd: string, sudo: boolean, stdin?: Buffer): ExecReply {
    // A step and the look after it (apt-get update's): the probes apt-cache answers, the others QUIET.
    // An install and the look at its transaction (one exec): each part as it is answered alone.
    const followed =
      answerWithTransaction(cmd, (part) => this.answer(part, sudo)) ??
      answerFollowed(cmd, (c) => (c.startsWith("apt-cache ") ? this.answer(c, sudo) : undefined));
    if (followed) return followed;
    // Debian 12, no cloud-init, no apt proxy file; dpkg clean, and nobody holds apt's locks.
    // The kit's first look carries install-packages' dpkg-query: answered as that command alone is.
    if (cmd.startsWith(BOOT_LOOK.script)) {
      const dpkg = probesOf(cmd).find((p) => p.name === PACKAGES_PROBE);
      const seen = dpkg && this.dpkgQuery(dpkg.command);
      const packages = seen && { text: seen.stdout ?? "", code: seen.code ?? 0 };
      return { stdout: answerLook(cmd, { os_release: DEBIAN_12, ...(packages ? { packages } : {}) }) };
    }
    if (cmd === DPKG_HEALTH_LOOK.script) return { stdout: answerLook(cmd) };
    if (sudo && cmd === LOCK_TABLE_LOOK.script) return { stdout: answerLook(cmd) };
    // The package inventory (common/package-inventory.ts): each install's own record, and its file.
    // Read with it (one exec): the inventory file and dpkg's word on the packages asked for (the verify).
    if (sudo && cmd.startsWith(TRANSACTION_LOOK.script)) {
      const verify = probesOf(cmd).find((p) => p.name === "installed");
      const seen = verify && this.dpkgQuery(verify.command);
      return {
        stdout: answerLook(cmd, {
          ...this.transaction,
          "inventory.packages": this.inventory ?? { code: 3 },
          ...(seen ? { installed: { text: seen.stdout ?? "", code: seen.code ?? 0 } } : {}),
        }),
      };
    }
    if (sudo && cmd === INVENTORY_LOOK.script)
      return { stdout: answerLook(cmd, { "inventory.packages": this.inventory ?? { code: 3 } }) };
    if (sudo && cmd.includes(renameOf(PACKAGES_FILE))) {
      this.inventory = stdin?.toString();
      return {};
    }
    const words = (s: string) => s.trim().split(/\s+/);
    let m: RegExpExecArray | null;
    const query = this.dpkgQuery(cmd);
    if (query) return query;
    if (!sudo && /apt-get/.test(cmd))
      return { code: 1, stderr: "E: Could not open lock file - open (13: Permission denied)\n" };
    if (/^apt-get update -q && mkdir -p \/var\/lib\/apt\/periodic && touch /.test(cmd))
      return { stdout: "Reading package lists...\n" };
    if ((m = /^apt-cache policy (.*)$/.exec(cmd)))
      return {
        stdout: words(m[1])
          .filter((n) => this.repo[n])
          .map((n) => policyBlock(n, this.repo[n]))
          .join(""),
      };
    // The step empties the record's directory, then apt-get's dpkg hooks write it (options quoted: left out).
    if (sudo && cmd.startsWith(`${TRANSACTION_PROLOGUE} && apt-get install -y -q `)) {
      const specs = words(cmd.replace(/'[^']*'/g, "")).filter((w) => this.repo[w]);
      const before = [...this.installed.keys()].map((n) => `ii \t${n}\n`).join("");
      for (const n of specs) this.installed.set(n, this.repo[n]);
      const status = specs.map((n) => `status: ${n}: installed\n`).join("");
      this.transaction = { "apt_tx.before.packages": before, "apt_tx.status": status };
      return { stdout: "Setting up ...\n" };
    }
    return { code: 127, stderr: `fake vm: unknown command: ${cmd}\n` };
  }
}

function runJob(
  dir: string,
  env: Record<string, string>,
  event: unknown,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const script = `require(${JSON.stringify(path.join(dir, "handler.js"))}).install(JSON.parse(process.env.EVENT)).then(
    (r) => console.log("RESULT " + JSON.stringify(r)),
    (e) => { console.log("ERROR " + e.message); process.exitCode = 1; })`;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["-e", script],
      { cwd: dir, env: { PATH: process.env.PATH ?? "", EVENT: JSON.stringify(event), ...env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("bundled install-packages handler over real SSH", () => {
  const key = testKey("client_ed25519");
  const vm = new FakeVm();
  let server: TestServer;
  let dir: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), "bundle-cache-"));
    const bundle = bundleHandler({ handler: "install-packages", cacheDir });
    // An empty directory far from node_modules: the bundle must need nothing beside it.
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "job-"));
    fs.copyFileSync(path.join(bundle.dir, "handler.js"), path.join(dir, "handler.js"));
    fs.rmSync(cacheDir, { recursive: true, force: true });
    server = await startServer({ authorizedKey: key.public, onExec: vm.exec });
    env = { VM_IP: "127.0.0.1", SSH_PORT: String(server.port), SSH_USER: "ubuntu", SSH_KEY: key.private };
  });

  afterAll(async () => {
    await server?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it("installs what is missing, with progress on stdout and a full result", async () => {
    const job = await runJob(
      dir,
      { ...env, SSH_HOST_KEY_SHA256: server.hostKeySha256 },
      { packages: ["git", "curl", "jq", "no-such-pkg"] },
    );
    const resultLine = job.stdout.split("\n").find((l) => l.startsWith("RESULT "));
    expect(resultLine).toBeDefined();
    const result = JSON.parse(resultLine!.slice(7));
    expect(result).toMatchObject({
      status: "partial",
      changed: true,
      installed: ["git", "jq"],
      already_installed: ["curl"],
      failed: [{ name: "no-such-pkg", reason: expect.stringMatching(/^unknown package/) }],
      versions: { git: "1:2.39.2-1.1", curl: "7.88.1-10+deb12u5", jq: "1.6-2.1" },
      os: { id: "debian", codename: "bookworm", version_id: "12" },
      host_key_sha256: server.hostKeySha256,
    });
    expect(Object.keys(result.timings_ms)).toEqual(
      // dpkg's word on the batch is read with the install's record (issue 30): no verify step of its own.
      expect.arrayContaining(["connect", "os", "apt_update", "candidates", "apt_install", "total"]),
    );
    expect(job.stdout).toMatch(/\[install-packages\] apt-get update \.\.\. \d+\.\ds/);
    expect(job.stdout).not.toContain(key.private.split("\n")[1]);
    // What went over the wire: privileged work as one sudo sh -c, queries unprivileged.
    // apt-get install runs detached: one sudo sh -c that writes the step (its exports first) and follows it.
    const sent = vm.log.map(unwrapLine);
    const installs = sent.filter((c) => c.script.includes("apt-get install"));
    expect(installs.length).toBeGreaterThan(0);
    expect(
      installs.every(
        (c) =>
          c.sudo &&
          c.script.startsWith("D=/run/vm-install/steps;") &&
          c.script.includes("export DEBIAN_FRONTEND=noninteractive;"),
      ),
    ).toBe(true);
    // (The install step's dpkg hooks run dpkg-query as root, inside apt's transaction; the look after it, root's
    // for the record's 0700 directory, rides in the install's own exec and reads dpkg's word on the batch.)
    expect(sent.filter((c) => c.script.startsWith(TRANSACTION_LOOK.script))).toEqual([]);
    expect(installs.every((c) => c.script.includes(" apt_tx.status; {") && c.script.includes(" installed; {"))).toBe(
      true,
    );
    const queries = sent.filter(
      (c) =>
        c.script.includes("dpkg-query") &&
        !c.script.includes("apt-get install") &&
        !c.script.startsWith(TRANSACTION_LOOK.script),
    );
    expect(queries.length).toBeGreaterThan(0);
    expect(queries.every((c) => !c.sudo)).toBe(true);
    // What it installed is recorded for state absent; curl was there before, so it is not.
    expect(JSON.parse(vm.inventory ?? "{}").installers?.packages?.packages).toEqual(["git", "jq"]);
  });

  it("a rerun changes nothing and runs no apt-get", async () => {
    const before = vm.log.length;
    const job = await runJob(dir, env, { packages: ["git", "curl", "jq"] });
    const result = JSON.parse(
      job.stdout
        .split("\n")
        .find((l) => l.startsWith("RESULT "))!
        .slice(7),
    );
    expect(result).toMatchObject({
      status: "ok",
      changed: false,
      installed: [],
      already_installed: ["git", "curl", "jq"],
    });
    expect(vm.log.slice(before).some((l) => unwrapLine(l).script.includes("apt-get"))).toBe(false);
    expect(job.stdout).toContain("[install-packages] nothing to do: all 3 packages are already installed");
  });

  it("rejects a bad event before connecting", async () => {
    const before = server.authAttempts;
    const job = await runJob(dir, env, { packages: ["git;touch /tmp/pwned"] });
    expect(job.code).not.toBe(0);
    expect(job.stdout).toMatch(
      /ERROR install-packages: invalid input, nothing was done on the VM: .*\n\s+- event packages\[0\]: "git;touch \/tmp\/pwned"/,
    );
    expect(server.authAttempts).toBe(before);
  });
});
