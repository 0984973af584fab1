// End-to-end: a sandbox booted with cloud-init from a NoCloud seed, as a cloud VM boots. cloud-init, not
// the image, makes the login user and its key (the image's `ubuntu` is gone from such a sandbox), runs
// the user-data's runcmd, and writes the host key the user-data delivers before sshd first starts, so
// the first key exchange already presents it. A sandbox booted without user-data has cloud-init
// disabled and is the sandbox it always was.
import { execFile, execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  getSandbox,
  loginUserCloudConfig,
  multipartUserData,
  type Sandbox,
  sshRun,
  startSandbox,
  stopSandbox,
} from "../../dev/sandbox/index";
import { tempDir } from "../support/synth";
import { describeE2E, root } from "./support/e2e";

const USER = "cloudy";

/** The ssh_keys part the hostkeys work delivers: exactly one ed25519 key, nothing generated. */
function hostKeyPart(privateKey: string, publicKey: string): string {
  const indented = privateKey
    .trim()
    .split("\n")
    .map((l) => `    ${l}`)
    .join("\n");
  return [
    "#cloud-config",
    "ssh_deletekeys: true",
    "ssh_genkeytypes: []",
    "ssh_keys:",
    "  ed25519_private: |",
    indented,
    `  ed25519_public: ${JSON.stringify(publicKey.trim())}`,
    "runcmd:",
    "  - [sh, -c, 'echo ran-by-cloud-init > /var/tmp/runcmd-marker']",
    "",
  ].join("\n");
}

describeE2E("sandbox booted with cloud-init (NoCloud seed)", () => {
  const dir = tempDir("sandbox-cloud-init");
  const hostKey = path.join(dir, "delivered_host_key");
  let delivered = "";
  let sb: Sandbox;
  let plain: Sandbox;

  beforeAll(async () => {
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "delivered", "-f", hostKey]);
    delivered = fs.readFileSync(`${hostKey}.pub`, "utf8").trim().split(/\s+/).slice(0, 2).join(" ");
    const part = hostKeyPart(fs.readFileSync(hostKey, "utf8"), delivered);
    [sb, plain] = await Promise.all([
      startSandbox({
        user: USER,
        cloudInit: {
          userData: (pub) =>
            multipartUserData([
              { text: loginUserCloudConfig(USER, pub), filename: "platform.cfg" },
              { text: part, filename: "host-keys.cfg" },
            ]),
        },
      }),
      startSandbox(),
    ]);
  }, 300_000);

  afterAll(async () => {
    await Promise.all([sb?.stop(), plain?.stop()]);
  }, 120_000);

  test("cloud-init finishes with status done and made the login user, who logs in with the key and sudo", async () => {
    const done = await sb.cloudInitDone();
    expect({ code: done.code, status: /^status: (\S+)/m.exec(done.stdout)?.[1] }).toEqual({ code: 0, status: "done" });
    // The user is cloud-init's: its log says it added it, and neither the image nor a plain sandbox has it.
    expect(await root(sb, "grep -c 'Adding user cloudy' /var/log/cloud-init.log")).toMatch(/^[1-9]/);
    expect((await plain.rootExec(`getent passwd ${USER}`)).code).toBe(2);
    expect((await sb.rootExec("getent passwd ubuntu")).code).toBe(2);
    const knownHosts = path.join(dir, "known_hosts");
    fs.writeFileSync(knownHosts, `${sb.address} ${delivered}\n`);
    const r = await sshRun({ ...sb, knownHostsPath: knownHosts }, "id -un && sudo -n cat /var/tmp/runcmd-marker");
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({
      code: 0,
      stdout: `${USER}\nran-by-cloud-init\n`,
      stderr: "",
    });
  }, 300_000);

  test("sshd's first key exchange presents the delivered host key: sshd started once, after cloud-init wrote it", async () => {
    // startSandbox's ssh-keyscan, once sshd answered and logins were allowed, was sshd's first key exchange.
    expect(sb.hostPublicKey).toBe(delivered);
    expect((await root(sb, "ls /etc/ssh | grep '^ssh_host_' | sort")).split("\n").filter(Boolean)).toEqual([
      "ssh_host_ed25519_key",
      "ssh_host_ed25519_key.pub",
    ]);
    const show = await root(
      sb,
      "systemctl show -p NRestarts -p ExecMainStartTimestampMonotonic ssh.service; " +
        "systemctl show -p ExecMainExitTimestampMonotonic cloud-init.service; " +
        "journalctl -b -o cat -u ssh.service | grep -c 'Server listening on 0.0.0.0'",
    );
    const v = Object.fromEntries(
      show
        .trim()
        .split("\n")
        .map((l, i) => (l.includes("=") ? l.split("=") : [`listening${i}`, l])),
    );
    expect(v.NRestarts).toBe("0");
    expect(Number(v.ExecMainStartTimestampMonotonic)).toBeGreaterThan(Number(v.ExecMainExitTimestampMonotonic));
    expect(Object.entries(v).filter(([k]) => k.startsWith("listening"))).toEqual([[expect.any(String), "1"]]);
  }, 120_000);

  test("without user-data cloud-init stays disabled: the image's user and sandbox-made host keys, as before", async () => {
    const s = await plain.rootExec(
      "cloud-init status; test -e /run/cloud-init/disabled && echo marker; systemctl is-active cloud-init.service",
    );
    expect(s.stdout.split("\n")).toEqual(["status: disabled", "marker", "inactive", ""]);
    expect(await root(plain, "id -un ubuntu")).toBe("ubuntu\n");
    expect(plain.hostPublicKey).not.toBe(delivered);
  }, 120_000);
});

// The merge rule the twin's README states for its platform part + cloud_init: cloud-init merges cloud-config
// parts with dict(replace)+list()+str(), so a later part's `users:` replaces the platform's list, unless
// that part asks for list(append).
describeE2E("cloud-init merging of a platform part and a later part", () => {
  const APPEND = "merge_how: [{name: list, settings: [append]}, {name: dict, settings: [no_replace, recurse_list]}]";
  const later = (mergeHow: string) => `#cloud-config\nusers:\n  - name: second\n    shell: /bin/bash\n${mergeHow}\n`;
  const boots: Sandbox[] = [];
  afterAll(async () => {
    await Promise.all(boots.map((b) => b.stop()));
  }, 120_000);

  test("a later part's users: replaces the platform's user; with merge_how list(append) both are made", async () => {
    const boot = (mergeHow: string) =>
      startSandbox({
        user: USER,
        cloudInit: {
          userData: (pub) =>
            multipartUserData([
              { text: loginUserCloudConfig(USER, pub), filename: "platform.cfg" },
              { text: later(mergeHow), filename: "later.cfg" },
            ]),
        },
      }).then((b) => {
        boots.push(b);
        return b;
      });
    const [replaced, appended] = await Promise.all([boot(""), boot(APPEND)]);
    const users = async (b: Sandbox) => {
      expect((await b.cloudInitDone()).code).toBe(0);
      return Promise.all([USER, "second"].map(async (u) => (await b.rootExec(`id -un ${u}`)).code === 0));
    };
    expect({ replaced: await users(replaced), appended: await users(appended) }).toEqual({
      replaced: [false, true],
      appended: [true, true],
    });
  }, 300_000);
});

describeE2E("sandbox up --user-data FILE", () => {
  const dir = tempDir("sandbox-cli-user-data");
  const name = `e2e-ud-${process.pid}`;
  const cli = (...args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile(
        process.execPath,
        ["-r", "./bin/ts-register.js", "dev/sandbox/cli.ts", ...args],
        { cwd: path.resolve(__dirname, "../..") },
        (err, stdout, stderr) =>
          resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );

  afterAll(async () => {
    await stopSandbox(name);
  }, 120_000);

  test("boots with the platform's part (--user with the sandbox's key) and the file's; the printed key logs in", async () => {
    const file = path.join(dir, "user-data.yaml");
    fs.writeFileSync(file, "#cloud-config\nruncmd:\n  - [sh, -c, 'echo from-file > /var/tmp/cli-marker']\n");
    const up = await cli("up", name, "--user-data", file, "--user", "opsuser", "--json");
    expect({ code: up.code, stderr: up.code ? up.stderr : "" }).toEqual({ code: 0, stderr: "" });
    const info = JSON.parse(up.stdout);
    expect(info).toMatchObject({ name, user: "opsuser" });
    const sb = getSandbox(name);
    expect((await sb.cloudInitDone()).code).toBe(0);
    const r = await sshRun(sb, "id -un; cat /var/tmp/cli-marker");
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 0, stdout: "opsuser\nfrom-file\n" });
  }, 300_000);

  test("refuses a file that is not user-data, and --user without --user-data, before booting anything", async () => {
    const file = path.join(dir, "not-user-data.yaml");
    fs.writeFileSync(file, "runcmd: [ls]\n");
    const bad = await cli("up", `${name}-x`, "--user-data", file);
    expect({ code: bad.code, said: bad.stderr.split("\n")[0] }).toEqual({
      code: 64,
      said: `sandbox: up: ${file} is not user-data: start it with #cloud-config, #! or MIME multipart headers`,
    });
    const lone = await cli("up", `${name}-y`, "--user", "opsuser");
    expect(lone.code).toBe(64);
    expect(lone.stderr).toContain("up: --user goes with --user-data");
  }, 120_000);
});
