// A Nubes VM's host key delivered by the stack (vms[].hostKeys "delivered"), through real `cdktf deploy`
// against the twin, whose VMs boot with cloud-init from the VM's cloud_init: the first job already pins
// the delivered key, an impostor answering at the jobs' address first is refused before authentication,
// the key never shows where it must not, and another working copy's key (or none) changes nothing.
//
// The address the jobs use is a fixed one (vms[].address, 127.0.0.1 and a port) with a TCP forwarder in
// this process behind it, as a public address stands in front of a VM: the test points it at an impostor
// sandbox (its own host key) first, at the real VM afterwards, without changing the configuration.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { type CdktfRun, outputWords, readOutputs, runCdktf, writeCdktfProject } from "../../dev/demo/project";
import { getSandbox, listSandboxes, type Sandbox, startSandbox, stopSandbox } from "../../dev/sandbox/index";
import { TWIN_CDKTF_FLAGS, twinDeployEnv } from "../../dev/twin/deploy-env";
import { installTwin } from "../../dev/twin/install";
import { removeVapp } from "../../dev/twin/nubes/records";
import { sandboxNameOf } from "../../dev/twin/nubes/vm-settings";
import { generateHostKey, hostKeyFile, readHostKeyFile } from "../../lib/construct/delivered-host-keys";
import { resultsFolder } from "../../lib/construct/jobs/secret-trigger";
import { filesUnder, tempDir } from "../support/synth";
import { describeE2E } from "./support/e2e";
import { type TcpForwarder, tcpForwarder } from "./support/tcp-forwarder";

const STACK = "e2e-hostkeys";

/** The forwarder and where it sends clients now (an impostor first, then the real VM). */
async function forwarder(): Promise<TcpForwarder & { to: { address?: string } }> {
  const to: { address?: string } = {};
  return { ...(await tcpForwarder(() => to.address)), to };
}

/** The lines of the private key's body: what would give it away wherever it was copied. */
function keyBody(privateKey: string): string[] {
  return privateKey.split("\n").filter((l) => l && !l.startsWith("-----"));
}

describeE2E("a Nubes VM's host key delivered through cloud_init, against the twin", () => {
  const dir = tempDir("hostkeys");
  const tag = randomBytes(3).toString("hex");
  const vm = `hk${tag}`;
  const twin = installTwin(path.join(dir, ".twin"));
  const env = { ...twinDeployEnv(twin), CHECKPOINT_DISABLE: "1" };
  const keyFile = hostKeyFile(resultsFolder(dir, STACK), vm);
  let front: Awaited<ReturnType<typeof forwarder>>;
  let impostor: Sandbox;
  const runs: CdktfRun[] = [];

  const ctx = () => ({
    stackName: STACK,
    jobTarget: "local",
    nubes: { vdcUid: "twin-vdc", nsxtUid: "twin-nsxt", deleteMode: "delete" },
    installers: { packages: { enabled: true, packages: ["jq"] } },
    vms: [
      {
        name: vm,
        user: "deployer",
        publicKeyPath: "vm_key.pub",
        privateKeyPath: "vm_key",
        address: "127.0.0.1",
        sshPort: front.port,
        cloudInit: "cloud-init.yaml",
      },
    ],
  });
  const deploy = async () => {
    writeCdktfProject(dir, ctx());
    const run = await runCdktf(
      dir,
      ["deploy", "--auto-approve", ...TWIN_CDKTF_FLAGS, "--outputs-file", path.join(dir, "outputs.json")],
      { env },
    );
    runs.push(run);
    return run;
  };
  const terraform = (args: string[]) =>
    spawnSync("terraform", [`-chdir=${path.join(dir, "cdktf.out", "stacks", STACK)}`, ...args, "-no-color"], {
      env: { ...process.env, ...env },
      encoding: "utf8",
    });

  beforeAll(async () => {
    spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "hostkeys-e2e", "-f", path.join(dir, "vm_key")]);
    // The user's own cloud-init: a file with template syntax in it, and a user besides the login user.
    fs.writeFileSync(
      path.join(dir, "cloud-init.yaml"),
      "#cloud-config\nwrite_files:\n  - path: /etc/vm-install-e2e\n    content: 'from cloudInit: ${HOME} %{x}'\nusers:\n  - name: alice\n",
    );
    front = await forwarder();
    // The impostor: a machine with a key of its own, logging every authentication attempt (VERBOSE).
    impostor = await startSandbox({ name: `hki${tag}` });
    await impostor.rootExec(
      "echo 'LogLevel VERBOSE' > /etc/ssh/sshd_config.d/00-e2e-verbose.conf && systemctl restart ssh",
    );
    front.to.address = impostor.address;
  }, 300_000);

  afterAll(async () => {
    const run = await runCdktf(dir, ["destroy", "--auto-approve", ...TWIN_CDKTF_FLAGS], { env });
    await stopSandbox(sandboxNameOf(vm));
    removeVapp(`vm-install-${vm}`);
    await impostor?.stop();
    front?.close();
    if (run.code !== 0) throw new Error(`destroy failed:\n${run.output.slice(-3000)}`);
  }, 600_000);

  test("an impostor answering first: the first job fails before authentication, naming both keys and hostKeys", async () => {
    const run = await deploy();
    expect(run.code).not.toBe(0);
    const delivered = readHostKeyFile(keyFile)!.sha256;
    const said = outputWords(run, STACK);
    expect(said).toContain(
      `host key mismatch for 127.0.0.1:${front.port}: expected ${delivered}, the host key this stack generated for the VM`,
    );
    expect(said).toContain(
      `but the server presented ${impostor.hostKeySha256} (ssh-ed25519); refusing to authenticate`,
    );
    expect(said).toContain('set vms[].hostKeys to "first-contact"');
    expect(run.output).not.toMatch(/host_key_probe/); // no first contact: the installer is the first job
    // The real VM was created meanwhile, with the delivered key.
    expect(listSandboxes().map((s) => s.name)).toContain(sandboxNameOf(vm));
    // The impostor saw a connection end before authentication, and no attempt to authenticate.
    const log = (await impostor.rootExec("journalctl -u ssh --no-pager -o cat")).stdout;
    expect(log).toMatch(/Connection from \S+ port \d+ on/);
    expect(log).toMatch(/\[preauth\]/);
    expect(log).not.toMatch(/Accepted|Failed publickey|Postponed publickey|Invalid user|authenticating user|userauth/i);
  }, 600_000);

  test("the real VM behind the address: it deploys, the first job pinned to the delivered key, the only key the VM has", async () => {
    const real = getSandbox(sandboxNameOf(vm));
    front.to.address = real.address;
    const run = await deploy();
    expect({ code: run.code, tail: run.code === 0 ? "" : run.output.slice(-3000) }).toEqual({ code: 0, tail: "" });
    const delivered = readHostKeyFile(keyFile)!;
    const result = JSON.parse(readOutputs(dir, STACK)[`${vm}_packages_result`]);
    expect(result).toMatchObject({ status: "ok", host_key_sha256: delivered.sha256 });
    expect(readOutputs(dir, STACK)[`${vm}_host_key_sha256`]).toBe(delivered.sha256);
    const keys = await real.rootExec(
      "ls /etc/ssh | grep '^ssh_host_' ; ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub",
    );
    expect(keys.stdout.split("\n").slice(0, 2)).toEqual(["ssh_host_ed25519_key", "ssh_host_ed25519_key.pub"]);
    expect(keys.stdout).toContain(` ${delivered.sha256} `);
    // The user's own cloud-init ran too, its text verbatim, and its extra user sits beside the login user.
    expect((await real.rootExec("cat /etc/vm-install-e2e")).stdout).toBe("from cloudInit: ${HOME} %{x}");
    expect((await real.rootExec("id -un alice && id -un deployer")).stdout.split("\n").slice(0, 2)).toEqual([
      "alice",
      "deployer",
    ]);
  }, 600_000);

  test("the delivered key is nowhere but its file and the state: not in cdktf.out, the logs, the results or the deploy output", () => {
    const body = keyBody(readHostKeyFile(keyFile)!.private);
    const places = [
      ...filesUnder(path.join(dir, "cdktf.out")),
      ...filesUnder(resultsFolder(dir, STACK)).filter((f) => f !== keyFile),
      path.join(dir, "outputs.json"),
    ];
    expect(places.some((f) => f.includes(`${path.sep}logs${path.sep}`))).toBe(true);
    for (const file of places) {
      const text = fs.readFileSync(file, "utf8");
      for (const line of body) expect({ file, leaks: text.includes(line) }).toEqual({ file, leaks: false });
      if (!file.includes(`${path.sep}assets${path.sep}`))
        expect({ file, header: text.includes("PRIVATE KEY") }).toEqual({ file, header: false });
    }
    for (const run of runs) for (const line of body) expect(run.output).not.toContain(line);
  });

  test("another working copy's key, or none, changes nothing: the state's first key stays", async () => {
    const first = readHostKeyFile(keyFile)!;
    fs.writeFileSync(keyFile, JSON.stringify(generateHostKey("another working copy")), { mode: 0o600 });
    const synth = await runCdktf(dir, ["synth"], { env });
    expect(synth.code).toBe(0);
    for (const round of ["another key", "no key file"]) {
      if (round === "no key file") fs.rmSync(keyFile);
      const plan = terraform(["plan", "-input=false", "-detailed-exitcode"]);
      expect({ round, code: plan.status, out: plan.status === 0 ? "" : plan.stdout + plan.stderr }).toEqual({
        round,
        code: 0,
        out: "",
      });
      expect(plan.stdout).toContain("No changes.");
    }
    expect(JSON.parse(terraform(["output", "-json"]).stdout)[`${vm}_host_key_sha256`].value).toBe(first.sha256);

    // Only replacing the record takes a new key, and the VM is replaced with it (cloud-init reads keys at
    // first boot only). A plan: nothing is changed here.
    const replace = `-replace=terraform_data.${vm}_delivered_host_key`;
    fs.writeFileSync(keyFile, JSON.stringify(generateHostKey("a rotated key")), { mode: 0o600 });
    const rotate = terraform(["plan", "-input=false", replace]);
    expect(rotate.status).toBe(0);
    expect(rotate.stdout).toContain(`nubes_vc_vm_v3.${vm}_vm will be replaced due to changes in replace_triggered_by`);
  }, 300_000);
});
