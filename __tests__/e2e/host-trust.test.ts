// Trust on first contact, end to end: real `cdktf deploy` (local target) to a sandbox given without a pin.
// The first deploy records the key the VM presents in Terraform state; after the VM's host keys are
// replaced, a deploy with a new runId fails before authentication naming both keys, every installer run
// against the recorded key fails the same way, and sshd's own log shows no accepted authentication after
// the change. `npm run trust` records nothing blind (no terminal, no fingerprint) and refuses a fingerprint
// the VM does not present, running no installer; given the right one, it records exactly that key and the
// installers run against it.
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { type CdktfRun, readOutputs, runCdktf, writeCdktfProject } from "../../dev/demo/project";
import type { Sandbox } from "../../dev/sandbox/index";
import { PROJECT_ROOT } from "../../lib/entry-points";
import { tempDir } from "../support/synth";
import { describeE2E, jobEnv, runInstaller, sandboxPerSuite } from "./support/e2e";
import { postgresByJob } from "./support/snapshots";

const STACK = "e2e-trust";
const env = { TF_VAR_pg_password: "a password of 12+ characters" };

describeE2E("host keys: trust on first contact, remembered in Terraform state", () => {
  let sb: Sandbox;
  let dir: string;
  let firstKey: string;
  let newKey: string;
  let changedAt: string;

  const ctx = (runId: number) => ({
    stackName: STACK,
    runId,
    jobTarget: "local",
    installers: {
      packages: { packages: ["jq"] },
      postgres: { enabled: true, passwordVariable: "pg_password" },
    },
    // No hostKeySha256: the stack learns the key itself.
    vms: [
      {
        name: "trust",
        kind: "existing",
        address: sb.address,
        sshPort: sb.port,
        user: sb.user,
        privateKeyPath: sb.privateKeyPath,
      },
    ],
  });

  async function deploy(runId: number): Promise<CdktfRun & { outputs: Record<string, string> }> {
    writeCdktfProject(dir, ctx(runId));
    const run = await runCdktf(dir, ["deploy", "--auto-approve", "--outputs-file", path.join(dir, "outputs.json")], {
      env,
    });
    return { ...run, outputs: run.code === 0 ? readOutputs(dir, STACK) : {} };
  }

  /** The key recorded in Terraform state for the VM, read with `terraform show -json`. */
  function recordedKey(): string {
    const show = spawnSync("terraform", [`-chdir=${path.join(dir, "cdktf.out", "stacks", STACK)}`, "show", "-json"], {
      encoding: "utf8",
      env: process.env,
    });
    const state = JSON.parse(show.stdout);
    const record = state.values.root_module.resources.find((r: any) => r.address === "terraform_data.trust_host_key");
    return record.values.output.sha256;
  }

  const sshdLogSince = async (since: string) =>
    (await sb.rootExec(`journalctl -u ssh --no-pager -o cat --since ${since}`)).stdout;

  // PostgreSQL is there already: its job is the second one pinned to the key, not an install to wait for.
  sandboxPerSuite((s) => (sb = s), 900_000, postgresByJob);
  beforeAll(() => {
    dir = tempDir("host-trust");
  });

  test("the first deploy records the key the VM presents, and the installers ran against it", async () => {
    const run = await deploy(1);
    expect(run.code).toBe(0);
    firstKey = sb.hostKeySha256;
    expect(recordedKey()).toBe(firstKey);
    expect(JSON.parse(run.outputs.trust_packages_result).host_key_sha256).toBe(firstKey);
    expect(JSON.parse(run.outputs.trust_postgres_result).host_key_sha256).toBe(firstKey);
  }, 600_000);

  test("after the VM's host keys change, every job fails before authentication, naming both keys", async () => {
    changedAt = `@${(await sb.rootExec("date +%s")).stdout.trim()}`;
    const regen = await sb.rootExec(
      "rm -f /etc/ssh/ssh_host_* && ssh-keygen -A >/dev/null && systemctl restart ssh && ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub",
    );
    expect(regen.code).toBe(0);
    newKey = regen.stdout.split(" ")[1];
    expect(newKey).toMatch(/^SHA256:/);
    expect(newKey).not.toBe(firstKey);

    const run = await deploy(2);
    expect(run.code).not.toBe(0);
    // The job knows where its key came from (SSH_HOST_KEY_SOURCE first-contact) and says so.
    expect(run.output).toContain(
      `expected ${firstKey}, the key recorded in Terraform state at the VM's first contact, but the server presented ${newKey}`,
    );
    expect(run.output).toContain("npm run trust -- <vm name>");
    // The record did not move: the probe's new report is ignored.
    expect(recordedKey()).toBe(firstKey);
    // The jobs after the failed one never started (Terraform stops the chain): run each installer's
    // bundle exactly as its job would, with the recorded key, to show each refuses on its own.
    const events: Record<string, unknown> = {
      "install-packages": { packages: ["jq"] },
      "install-docker": {},
      "install-postgres": { db_name: "myapp", db_user: "app_user", db_password: env.TF_VAR_pg_password },
    };
    for (const [handler, event] of Object.entries(events)) {
      const out = await runInstaller(sb, handler, event, { env: jobEnv(sb, { SSH_HOST_KEY_SHA256: firstKey }) });
      expect(out.phase).toBe("Failed");
      expect(out.message).toContain(`expected ${firstKey} but the server presented ${newKey}`);
      expect(out.message).not.toContain(env.TF_VAR_pg_password);
    }
    const log = await sshdLogSince(changedAt);
    // The log is being read (the restart and the refused handshakes are in it) and shows no login at all.
    expect(log).toMatch(/Server listening/);
    expect(log).not.toMatch(/Accepted (publickey|password|keyboard-interactive)/);
  }, 600_000);

  /** `npm run trust -- <args>` in the project folder, with no terminal (stdin is not a TTY). */
  function trust(args: string[]): { code: number | null; said: string } {
    const r = spawnSync(
      process.execPath,
      ["-r", path.join(PROJECT_ROOT, "bin", "ts-register.js"), path.join(PROJECT_ROOT, "bin", "trust.ts"), ...args],
      {
        cwd: dir,
        encoding: "utf8",
        env: { ...process.env, ...env },
      },
    );
    return { code: r.status, said: `${r.stdout}\n${r.stderr}` };
  }

  /** The same at a terminal: script(1) runs it on a pseudo-terminal and types `input`. */
  function atTerminal(args: string[], input: string): { code: number | null; said: string } {
    const quote = (word: string) => `'${word.replace(/'/g, "'\\''")}'`;
    const command = [
      process.execPath,
      "-r",
      path.join(PROJECT_ROOT, "bin", "ts-register.js"),
      path.join(PROJECT_ROOT, "bin", "trust.ts"),
      ...args,
    ]
      .map(quote)
      .join(" ");
    const r = spawnSync("script", ["-qec", command, "/dev/null"], {
      cwd: dir,
      encoding: "utf8",
      input,
      env: { ...process.env, ...env },
    });
    return { code: r.status, said: `${r.stdout}\n${r.stderr}` };
  }

  test("npm run trust without a fingerprint shows the key and records nothing (no terminal, or not confirmed at one); a wrong fingerprint is refused and no installer runs", async () => {
    // A marker an installer run would undo: install-packages would put jq back.
    expect((await sb.rootExec("apt-get remove -y jq >/dev/null 2>&1 && ! dpkg -s jq >/dev/null 2>&1")).code).toBe(0);
    const blind = trust(["trust", "-auto-approve"]);
    expect(blind.code).toBe(64);
    expect(blind.said).toContain(
      `trust at ${sb.address}:${sb.port} presents ${newKey} (ssh-ed25519); nothing was authenticated`,
    );
    expect(blind.said).toContain(`not recorded: no terminal to confirm ${newKey} on`);
    expect(blind.said).toContain(`npm run trust -- trust ${newKey}`);

    // At a terminal (script(1) gives it one) it asks; anything but yes records nothing.
    const declined = atTerminal(["trust"], "n\n");
    expect(declined.code).toBe(1);
    expect(declined.said).toContain(
      `Is ${newKey} what ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub prints on trust's console?`,
    );
    expect(declined.said).toContain(`not recorded: ${newKey} was not confirmed`);

    const wrong = `SHA256:${"W".repeat(43)}`;
    const refused = trust(["trust", wrong, "-auto-approve"]);
    expect(refused.code).toBe(1);
    expect(refused.said).toContain(
      `presents ${newKey} (ssh-ed25519), not the ${wrong} you gave: nothing was recorded and no installer ran`,
    );
    expect(`${blind.said}${refused.said}`).not.toMatch(/terraform_data\.trust_\w+: (Creating|Destroying)/);

    expect(recordedKey()).toBe(firstKey);
    expect((await sb.rootExec("dpkg -s jq >/dev/null 2>&1")).code).not.toBe(0);
    expect(await sshdLogSince(changedAt)).not.toMatch(/Accepted (publickey|password|keyboard-interactive)/);
  }, 600_000);

  test("npm run trust with the fingerprint checked on the console records exactly it and reruns the installers against it; the next deploy changes nothing", async () => {
    const accepted = trust(["trust", newKey, "-auto-approve"]);
    expect(accepted.said).toMatch(/Apply complete!/);
    expect(accepted.code).toBe(0);
    expect(accepted.said).toMatch(/terraform_data\.trust_packages: Creation complete/);
    expect(recordedKey()).toBe(newKey);
    expect((await sb.rootExec("dpkg -s jq >/dev/null 2>&1")).code).toBe(0);
    expect(await sshdLogSince(changedAt)).toMatch(/Accepted publickey for ubuntu/);
    const run = await deploy(2);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.outputs.trust_packages_result)).toMatchObject({ host_key_sha256: newKey, installed: ["jq"] });
    expect(JSON.parse(run.outputs.trust_postgres_result).host_key_sha256).toBe(newKey);
    expect(run.output).not.toMatch(/terraform_data\.trust_packages[^:]*: Creating/);
  }, 600_000);
});
