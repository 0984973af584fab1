// A key file that is gone by apply time (deleted after synth, or a cdktf.out applied from a copy without
// it): Terraform's provisioner error carries one line naming the job (VM and installer), the cdktf.json
// setting and what to do, never the runner's usage text; npm run status shows that line for the installer
// and names it as the reason the next one did not run (issue 33 item 4). Offline: a pinned existing host,
// so no job reaches the network before it fails.
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { writeCdktfProject } from "../dev/demo/project";
import { ENTRY_POINTS, PROJECT_ROOT } from "../lib/entry-points";
import { tempDir, testKeyPair } from "./support/synth";

test("one line in the apply's error and in status; the installer after it says why it did not run", () => {
  const dir = tempDir("key-gone");
  const key = path.join(dir, "vm_key");
  fs.copyFileSync(testKeyPair().privateKeyPath, key);
  fs.chmodSync(key, 0o600);
  writeCdktfProject(dir, {
    stackName: "gone",
    jobTarget: "local",
    installers: { docker: { enabled: true, channel: "distro" } },
    vms: [
      {
        name: "h",
        kind: "existing",
        address: "192.0.2.1",
        privateKeyPath: "vm_key",
        hostKeySha256: `SHA256:${"P".repeat(43)}`,
      },
    ],
  });
  const rc = path.join(dir, "terraformrc");
  fs.writeFileSync(rc, "");
  const env = { ...process.env, TF_CLI_CONFIG_FILE: rc, CHECKPOINT_DISABLE: "1", TF_IN_AUTOMATION: "1" };
  const synth = spawnSync("bash", [ENTRY_POINTS.cdktfWrapper, "synth"], { cwd: dir, env, encoding: "utf8" });
  expect({ status: synth.status, stderr: synth.stderr.slice(-1500) }).toEqual({
    status: 0,
    stderr: expect.any(String),
  });
  fs.rmSync(key);

  const stackDir = path.join(dir, "cdktf.out", "stacks", "gone");
  execFileSync("terraform", ["init", "-input=false"], { cwd: stackDir, env, stdio: "pipe" });
  const apply = spawnSync("terraform", ["apply", "-auto-approve", "-input=false", "-no-color"], {
    cwd: stackDir,
    env,
    encoding: "utf8",
  });
  const output = `${apply.stdout}${apply.stderr}`;
  expect(apply.status).toBe(1);
  const reason =
    `vms[h].privateKeyPath (vm_key): ${key} does not exist; make it with ssh-keygen -t ed25519 -N '' -f ${key}, ` +
    "or give the VM's login key there instead";
  expect(output).toContain(`[h-install-packages] Failed: ${reason}`);
  // The runner's own command line is printed by local-exec ("Executing: ..."); its usage text never is.
  expect(output).not.toMatch(/usage: npm run invoke|lists every option/);

  const status = spawnSync(
    process.execPath,
    ["-r", path.join(PROJECT_ROOT, "bin", "ts-register.js"), path.join(PROJECT_ROOT, "bin", "status.ts"), "--json"],
    { cwd: dir, env, encoding: "utf8" },
  );
  const rows = JSON.parse(status.stdout) as { installer: string; status: string; summary: string }[];
  expect(rows.map((r) => [r.installer, r.status, r.summary])).toEqual([
    ["install-packages", "failed", reason],
    [
      "install-docker",
      "not run",
      "not run: install-packages failed before it on h (see its row); once that is put right, npm run deploy runs both",
    ],
    ["install-postgres", "skipped", "disabled in cdktf.json"],
  ]);
}, 120000);
