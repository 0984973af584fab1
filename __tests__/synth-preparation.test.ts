// What the app prepares at synth for Terraform (lib/construct/synth-preparation.ts), so that cdktf run directly
// is as safe as bin/cdktf: owner-only state and plan files before Terraform writes them, secret triggers
// from the values cdktf withholds from the app (read from cdktf's own environment), and a plan that stops,
// naming the command to run, when they cannot be read.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { cdktfCaller } from "../lib/construct/cdktf-caller-environment";
import { parseConfig } from "../lib/construct/config/parse";
import { resultsFolder, secretTriggerFile } from "../lib/construct/jobs/secret-trigger";
import { localStateFile, PREPARED_ENV, prepareForTerraform } from "../lib/construct/synth-preparation";
import { PROJECT_ROOT } from "../lib/entry-points";
import { context, synth, synthApp, tempDir } from "./support/synth";

const LOCAL = context({
  stackName: "prep",
  jobTarget: "local",
  installers: { postgres: { enabled: true, passwordVariable: "pg_password" } },
  vms: [{ name: "h", kind: "existing", address: "192.0.2.1" }],
});
const config = parseConfig(LOCAL);
const mode = (file: string) => (fs.statSync(file).mode & 0o777).toString(8);
const trigger = (dir: string) => secretTriggerFile(resultsFolder(dir, "prep"), "h-install-postgres");

/** prepareForTerraform in a new project folder under a person's umask 022; the lines it said. */
async function prepare(env: NodeJS.ProcessEnv, dir = tempDir("prep")) {
  const said: string[] = [];
  const old = process.umask(0o022);
  try {
    const stackDir = path.join(dir, "cdktf.out", "stacks", "prep");
    const result = await prepareForTerraform(dir, stackDir, config, env, (l) => said.push(l));
    return { dir, stackDir, said, result };
  } finally {
    process.umask(old);
  }
}

test("the local state, its backup, cdktf.out and the plan file are owner-only before Terraform writes them", async () => {
  const { dir, stackDir, said } = await prepare({ [PREPARED_ENV]: "1" });
  const state = localStateFile(dir, "prep");
  expect({
    state: mode(state),
    backup: mode(`${state}.backup`),
    out: mode(path.join(dir, "cdktf.out")),
    stack: mode(stackDir),
    plan: mode(path.join(stackDir, "plan")),
  }).toEqual({ state: "600", backup: "600", out: "700", stack: "700", plan: "600" });
  // Empty: Terraform reads no state from it, and keeps its mode when it writes one.
  expect(fs.readFileSync(state, "utf8")).toBe("");
  expect(said).toEqual([]);
});

test("a state and results folder left open to others are tightened, each named, their contents kept", async () => {
  const dir = tempDir("prep-open");
  const state = localStateFile(dir, "prep");
  fs.writeFileSync(state, '{"version":4}', { mode: 0o644 });
  fs.chmodSync(state, 0o644);
  fs.mkdirSync(resultsFolder(dir, "prep"), { recursive: true, mode: 0o755 });
  fs.chmodSync(resultsFolder(dir, "prep"), 0o755);
  const { said } = await prepare({ [PREPARED_ENV]: "1" }, dir);
  expect(mode(state)).toBe("600");
  expect(mode(resultsFolder(dir, "prep"))).toBe("700");
  expect(fs.readFileSync(state, "utf8")).toBe('{"version":4}');
  expect(said).toEqual([
    `vm-install: ${resultsFolder(dir, "prep")} was mode 0755, open to group or others; made owner-only (it can hold secrets)`,
    `vm-install: ${state} was mode 0644, open to group or others; made owner-only (it can hold secrets)`,
  ]);
});

test("a shared backend's stack gets no local state file", async () => {
  const pg = parseConfig({ ...LOCAL, backend: { type: "pg" } });
  const dir = tempDir("prep-pg");
  await prepareForTerraform(dir, path.join(dir, "cdktf.out", "stacks", "prep"), pg, { [PREPARED_ENV]: "1" });
  expect(fs.existsSync(localStateFile(dir, "prep"))).toBe(false);
});

describe("secret triggers", () => {
  test("written from the TF_VAR_ values the app is given; a new value, a new trigger", async () => {
    const { dir, result } = await prepare({ TF_VAR_pg_password: "first password, long" });
    expect(result.secretTriggers).toBe("current");
    const first = fs.readFileSync(trigger(dir), "utf8");
    expect(mode(trigger(dir))).toBe("600");
    await prepare({ TF_VAR_pg_password: "second password, long" }, dir);
    expect(fs.readFileSync(trigger(dir), "utf8")).not.toBe(first);
  });

  test("left to bin/cdktf when it says it wrote them", async () => {
    const { dir, result } = await prepare({ [PREPARED_ENV]: "1", TF_VAR_pg_password: "a password, long" });
    expect(result.secretTriggers).toBe("current");
    expect(fs.existsSync(trigger(dir))).toBe(false);
  });

  test("no value to be had (not under cdktf, none given): unknown, and the stack's plan stops naming the command", async () => {
    const { result } = await prepare({});
    expect(result.secretTriggers).toBe("unknown");
    const stopped = (secretTriggers: "current" | "unknown") => {
      const { tf } = synth(LOCAL, undefined, undefined, { secretTriggers });
      return tf.resource.terraform_data.secret_triggers_check?.lifecycle.precondition[0].error_message;
    };
    expect(stopped("current")).toBeUndefined();
    expect(stopped("unknown")).toMatch(
      /^vm-install: cdktf ran this app without the TF_VAR_ values .*run `npm run deploy`/,
    );
  });
});

test("under cdktf: the TF_VAR_ values of the process that started the app's shell, not the shell's", () => {
  // As cdktf runs an app: its own environment minus TF_VAR_, plus CDKTF_OUTDIR, through /bin/sh -c.
  const read = `require(${JSON.stringify(path.join(PROJECT_ROOT, "lib", "construct", "cdktf-caller-environment.ts"))})`;
  const app = `node -r ${path.join(PROJECT_ROOT, "bin", "ts-register.js")} -e 'const m = ${read}; console.log(JSON.stringify(m.variablesOf(m.cdktfCaller())))'`;
  const cdktf =
    "const { execSync } = require('node:child_process');" +
    "const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TF_VAR_')));" +
    `process.stdout.write(execSync(${JSON.stringify(app)}, { env: { ...env, CDKTF_OUTDIR: 'cdktf.out' } }));`;
  const r = spawnSync(process.execPath, ["-e", cdktf], {
    env: { PATH: process.env.PATH, TF_VAR_pg_password: "from cdktf's environment", TF_VAR_other: "x" },
    encoding: "utf8",
  });
  expect(r.stderr).toBe("");
  expect(JSON.parse(r.stdout)).toEqual({ TF_VAR_pg_password: "from cdktf's environment", TF_VAR_other: "x" });
  // Not started with CDKTF_OUTDIR: not cdktf's app, nothing to read.
  expect(cdktfCaller({})).toBeUndefined();
});

test("a synth whose cdktf has no CHECKPOINT_DISABLE warns that cdktf and Terraform will call HashiCorp, and says what to export", () => {
  const warnings = (env: Record<string, string>) => {
    const { outdir } = synthApp(LOCAL, { env });
    const manifest = JSON.parse(fs.readFileSync(path.join(outdir, "manifest.json"), "utf8"));
    return (manifest.stacks.prep.annotations as { level: string; message: string }[])
      .filter((a) => a.level === "@cdktf/warn" && a.message.includes("CHECKPOINT_DISABLE"))
      .map((a) => a.message);
  };
  expect(warnings({ CHECKPOINT_DISABLE: "" })).toEqual([expect.stringMatching(/export CHECKPOINT_DISABLE=1/)]);
  expect(warnings({ CHECKPOINT_DISABLE: "1" })).toEqual([]);
});
