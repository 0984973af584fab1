// What a deploy leaves in the project folder is its owner's alone, whatever the umask it was started
// with: the local backend's state and .backup (with the sless target: the SSH key and the password in
// clear text), plan files (every variable's value), .terraform/, the local target's results, logs and
// secret triggers, cdktf.out. A real `cdktf deploy` and `cdktf diff` through bin/cdktf, local target
// against a sandbox (the cheapest deploy that writes every kind of file); files an older version left
// wider are tightened and named.
import * as fs from "node:fs";
import * as path from "node:path";
import { type CdktfRun, existingHost, runCdktf, writeCdktfProject } from "../../dev/demo/project";
import type { Sandbox } from "../../dev/sandbox/index";
import { tempDir } from "../support/synth";
import { describeE2E, sandboxPerSuite } from "./support/e2e";
import { postgresByJob } from "./support/snapshots";

const PASSWORD = "file modes password, long enough";
const env = { TF_VAR_pg_password: PASSWORD };

/** Every file and folder under `dir` (symlinks not followed) that group or others may use, with its mode. */
function openToOthers(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((rel) => ({ rel, st: fs.lstatSync(path.join(dir, rel)) }))
    .filter(({ st }) => !st.isSymbolicLink() && (st.mode & 0o077) !== 0)
    .map(({ rel, st }) => `${rel} ${(st.mode & 0o7777).toString(8)}`)
    .sort();
}

/** `cdktf <args>` in `dir` started with umask `mask` (what a person's shell would have). */
async function cdktfWithUmask(mask: number, dir: string, args: string[]): Promise<CdktfRun> {
  const old = process.umask(mask);
  try {
    return await runCdktf(dir, args, { env });
  } finally {
    process.umask(old);
  }
}

describeE2E("a deploy leaves what it writes in the project folder to its owner, whatever the umask", () => {
  let sb: Sandbox;
  const ctx = (stack: string, runId = 1) => ({
    stackName: stack,
    runId,
    jobTarget: "local",
    installers: { packages: { packages: ["jq"] }, postgres: { enabled: true, passwordVariable: "pg_password" } },
    vms: [existingHost("m", sb)],
  });

  // PostgreSQL is there already: its job writes its result, log and secret trigger without an install.
  sandboxPerSuite((s) => (sb = s), 900_000, postgresByJob);
  // One umask, the widest: bin/cdktf sets umask 077 whatever it was started with, so 022 (a shell's
  // usual) takes the same path, and a file 022 would leave open, 000 leaves open too. The tightening
  // case goes on in this deploy's folder (its state and .backup are there).
  const mask = 0o000;
  const stack = "modes-0";
  const dir = tempDir(stack);

  test("umask 000: state, .backup, plan, .terraform, results, logs and triggers are 0600, their folders 0700", async () => {
    writeCdktfProject(dir, ctx(stack));
    fs.chmodSync(path.join(dir, "cdktf.json"), 0o600); // the test's own file, not the project's output
    expect((await cdktfWithUmask(mask, dir, ["deploy", "--auto-approve"])).code).toBe(0);
    // Terraform writes the .backup when it replaces a state: a second deploy that reruns the jobs.
    writeCdktfProject(dir, ctx(stack, 2));
    fs.chmodSync(path.join(dir, "cdktf.json"), 0o600);
    expect((await cdktfWithUmask(mask, dir, ["deploy", "--auto-approve"])).code).toBe(0);
    // A plan file (cdktf diff) holds every variable's value, the password included.
    const diff = await cdktfWithUmask(mask, dir, ["diff"]);
    expect(diff.code).toBe(0);

    // Not vacuous: the files that hold or may hold secrets are there.
    const stackDir = path.join("cdktf.out", "stacks", stack);
    const written = fs.readdirSync(dir, { recursive: true, encoding: "utf8" });
    expect(written).toEqual(
      expect.arrayContaining([
        `terraform.${stack}.tfstate`,
        `terraform.${stack}.tfstate.backup`,
        path.join(stackDir, ".terraform", "terraform.tfstate"),
        path.join(".vm-install", stack, "m-install-postgres.tfstate"),
        path.join(".vm-install", stack, "m-install-postgres.secret-trigger"),
      ]),
    );
    expect(written.some((f) => f.startsWith(path.join(".vm-install", stack, "logs", "m-install-postgres-")))).toBe(
      true,
    );
    expect(written.filter((f) => path.basename(f) === "plan")).not.toEqual([]);
    expect(openToOthers(dir)).toEqual([]);
  }, 600_000);

  test("a state and results left open to others are made owner-only before the deploy, each named with its old mode", async () => {
    // The umask 000 case's folder: deployed twice, so the state has its .backup.
    expect(openToOthers(dir)).toEqual([]);
    // As an older version, or another tool, left them.
    const widened = {
      [`terraform.${stack}.tfstate`]: 0o644,
      [`terraform.${stack}.tfstate.backup`]: 0o666,
      [path.join(".vm-install", stack)]: 0o755,
      [path.join(".vm-install", stack, "m-install-postgres.tfstate")]: 0o644,
    };
    for (const [rel, mode] of Object.entries(widened)) fs.chmodSync(path.join(dir, rel), mode);

    const again = await cdktfWithUmask(0o022, dir, ["deploy", "--auto-approve"]);
    expect(again.code).toBe(0);
    for (const [rel, mode] of Object.entries(widened)) {
      expect(again.output).toContain(
        `vm-install: ${path.join(dir, rel)} was mode 0${mode.toString(8)}, open to group or others; made owner-only`,
      );
    }
    // Tightened before cdktf started: the messages are the first lines, one per path, and none after.
    const lines = again.output.split("\n");
    const first = lines.findIndex((l) => !l.startsWith("vm-install: "));
    expect(first).toBe(Object.keys(widened).length);
    expect(lines.slice(first).filter((l) => l.startsWith("vm-install: "))).toEqual([]);
    expect(openToOthers(dir)).toEqual([]);
  }, 600_000);
});
