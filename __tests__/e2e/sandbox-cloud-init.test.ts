// End-to-end: a sandbox booted with cloud-init from a NoCloud seed, as a cloud VM boots. cloud-init, not
// the image, makes the login user and its key (the image's `ubuntu` is gone from such a sandbox), runs
// the user-data's runcmd, and writes the host key the user-data delivers before sshd first starts, so
// the first key exchange already presents it. A sandbox booted without user-data has cloud-init
// disabled and is the sandbox it always was.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { loginUserCloudConfig, multipartUserData, type Sandbox, sshRun, startSandbox } from "../../sandbox";
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
    expect({ code: r.code, stdout: r.stdout, stderr: r.stderr }).toEqual({ code: 0, stdout: `${USER}\nran-by-cloud-init\n`, stderr: "" });
  }, 300_000);

  test("sshd's first key exchange presents the delivered host key: sshd started once, after cloud-init wrote it", async () => {
    // startSandbox read the host key with ssh-keyscan right after sshd's first banner.
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
    const s = await plain.rootExec("cloud-init status; test -e /run/cloud-init/disabled && echo marker; systemctl is-active cloud-init.service");
    expect(s.stdout.split("\n")).toEqual(["status: disabled", "marker", "inactive", ""]);
    expect(await root(plain, "id -un ubuntu")).toBe("ubuntu\n");
    expect(plain.hostPublicKey).not.toBe(delivered);
  }, 120_000);
});
