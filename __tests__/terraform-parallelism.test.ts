// The parallelism setting: validated with the other top-level settings, and on the command line of every
// deploy, destroy and diff bin/cdktf runs (npm run deploy, the demo and the benchmarks all go through it)
// as cdktf's --terraform-parallelism (cdktf's own --parallelism counts stacks, not resources). Checked
// against a stand-in cdktf that prints what it was given, in a copy of bin/ as cdktf-wrapper-output does.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { CONTEXT_KEY, parseConfig } from "../lib/construct/config/parse";
import { parallelismHeld, withTerraformParallelism } from "../lib/construct/terraform-parallelism";
import { PROJECT_ROOT } from "../lib/entry-points";
import { context, synth } from "./support/synth";

const VMS = [{ name: "web-1", kind: "existing", address: "192.0.2.1" }];

describe("the parallelism setting", () => {
  test("defaults to Terraform's own 10; takes a whole number from 1 to 256", () => {
    expect(parseConfig(context({ vms: VMS })).parallelism).toBe(10);
    for (const n of [1, 3, 256]) expect(parseConfig(context({ vms: VMS, parallelism: n })).parallelism).toBe(n);
  });

  test.each([0, -1, 257, 2.5, "4", null, true])("refuses %p, naming the key and what is allowed", (value) => {
    const parse = () => parseConfig(context({ vms: VMS, parallelism: value }));
    expect(parse).toThrow(/parallelism: expected a whole number from 1 to 256/);
  });
});

describe("withTerraformParallelism", () => {
  test("added to the commands that plan or apply; a caller's own value wins; other commands untouched", () => {
    const flag = (n: number) => `--terraform-parallelism=${n}`;
    expect(withTerraformParallelism(["deploy", "--auto-approve"], 4)).toEqual(["deploy", "--auto-approve", flag(4)]);
    for (const command of ["destroy", "diff", "apply", "plan", "watch"]) {
      expect(withTerraformParallelism([command], 7)).toEqual([command, "--terraform-parallelism=7"]);
    }
    for (const own of [
      ["deploy", flag(2)],
      ["deploy", "--terraform-parallelism", "2"],
    ]) {
      expect(withTerraformParallelism(own, 4)).toEqual(own);
    }
    for (const args of [["synth"], ["output"], ["get"], []]) expect(withTerraformParallelism(args, 4)).toEqual(args);
  });
});

describe("bin/cdktf passes the setting on", () => {
  let tmp: string;
  let project: string;
  let wrapper: string;

  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "vmi-parallelism-"));
    const root = path.join(tmp, "checkout");
    fs.mkdirSync(path.join(root, "node_modules", ".bin"), { recursive: true });
    fs.cpSync(path.join(PROJECT_ROOT, "bin"), path.join(root, "bin"), { recursive: true });
    const link = (entry: string) => fs.symlinkSync(path.join(PROJECT_ROOT, entry), path.join(root, entry));
    for (const entry of ["lib", "handlers", "package.json"]) link(entry);
    for (const entry of fs.readdirSync(path.join(PROJECT_ROOT, "node_modules"))) {
      if (entry !== ".bin") link(path.join("node_modules", entry));
    }
    // One argument per line, so an argument with a space in it shows as one.
    const standIn = '#!/bin/sh\nprintf "%s\\n" "$@"\n';
    fs.writeFileSync(path.join(root, "node_modules", ".bin", "cdktf"), standIn, { mode: 0o755 });
    project = path.join(tmp, "project");
    fs.mkdirSync(project);
    wrapper = path.join(root, "bin", "cdktf");
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  function cdktfGets(args: string[], parallelism?: unknown): string[] {
    const settings = { jobTarget: "local", vms: VMS, ...(parallelism === undefined ? {} : { parallelism }) };
    const cdktfJson = { app: "true", context: { [CONTEXT_KEY]: context(settings) } };
    fs.writeFileSync(path.join(project, "cdktf.json"), JSON.stringify(cdktfJson));
    const out = execFileSync("bash", [wrapper, ...args], { cwd: project, encoding: "utf8", stdio: "pipe" });
    return out.split("\n").filter(Boolean);
  }

  test("a configured value reaches cdktf's command line on deploy and destroy; the default 10 otherwise", () => {
    for (const command of ["deploy", "destroy"]) {
      const expected = [command, "--auto-approve", "--terraform-parallelism=3"];
      expect(cdktfGets([command, "--auto-approve"], 3)).toEqual(expected);
    }
    expect(cdktfGets(["diff", "--var", "a b"])).toEqual(["diff", "--var", "a b", "--terraform-parallelism=10"]);
    expect(cdktfGets(["synth"], 3)).toEqual(["synth"]);
  });

  test("a configuration that does not parse leaves the arguments as given (synth reports it)", () => {
    expect(cdktfGets(["deploy", "--auto-approve"], 0)).toEqual(["deploy", "--auto-approve"]);
  });
});

describe("a plain cdktf run: does its Terraform hold the setting (checked at synth)", () => {
  const sless = { jobTarget: "sless" as const, parallelism: 3 };
  const cdktf = (...args: string[]) => ["node", "/p/node_modules/.bin/cdktf", ...args];
  test.each([
    ["sless, no --terraform-parallelism on a deploy", sless, cdktf("deploy", "--auto-approve"), {}, "not-held"],
    ["... on a destroy", sless, cdktf("destroy", "--auto-approve"), {}, "not-held"],
    ["... given with =", sless, cdktf("deploy", "--terraform-parallelism=3"), {}, "held"],
    ["... given as two words", sless, cdktf("deploy", "--terraform-parallelism", "3"), {}, "held"],
    ["... another value: the caller's wins", sless, cdktf("deploy", "--terraform-parallelism=7"), {}, "held"],
    ["... in TF_CLI_ARGS_apply", sless, cdktf("deploy"), { TF_CLI_ARGS_apply: "-parallelism=3" }, "held"],
    ["a synth or a diff runs no job", sless, cdktf("diff"), {}, "held"],
    ["node options before cdktf's script", sless, ["node", "--no-warnings", "/p/cdktf", "deploy"], {}, "not-held"],
    ["a node option with a value", sless, ["node", "--require", "/p/x.js", "/p/cdktf", "deploy"], {}, "not-held"],
    ["a cdktf option with a value before the command", sless, cdktf("--log-level", "debug", "deploy"), {}, "not-held"],
    ["... and a synth that way runs no job", sless, cdktf("--log-level", "debug", "synth"), {}, "held"],
    ["Terraform's own default", { ...sless, parallelism: 10 }, cdktf("deploy"), {}, "held"],
    ["the local target's runners hold it", { ...sless, jobTarget: "local" as const }, cdktf("deploy"), {}, "held"],
    ["cdktf's command line unreadable", sless, undefined, {}, "unknown"],
  ])("%s: %s", (_, config, args, env, held) => {
    expect(parallelismHeld(config, args, env)).toBe(held);
  });

  test("not held: every plan stops naming the option; unknown: a synth warning; held: neither", () => {
    const ctx = context({ vms: VMS, jobTarget: "local" });
    const stops = (parallelism: "held" | "not-held" | "unknown") => {
      const { tf, outdir } = synth(ctx, undefined, undefined, { parallelism });
      const manifest = JSON.parse(fs.readFileSync(path.join(outdir, "manifest.json"), "utf8"));
      const warnings = Object.values(manifest.stacks as Record<string, { annotations: { message: string }[] }>)
        .flatMap((s) => s.annotations.map((a) => a.message))
        .filter((m) => m.includes("--terraform-parallelism"));
      return [tf.resource?.terraform_data?.parallelism_check?.lifecycle.precondition[0].error_message, warnings];
    };
    expect(stops("held")).toEqual([undefined, []]);
    expect(stops("not-held")).toEqual([
      expect.stringMatching(/^vm-install: cdktf\.json's parallelism is 10, but .*pass --terraform-parallelism=10/),
      [],
    ]);
    expect(stops("unknown")).toEqual([undefined, [expect.stringContaining("could not be read")]]);
  });

  test("cdktf's command line as the app reads it from /proc: the app's shell is skipped, cdktf's own args found", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vm-install-fake-cdktf-"));
    const read = `require(${JSON.stringify(path.join(PROJECT_ROOT, "lib", "construct", "cdktf-caller-environment.ts"))})`;
    const app = `node -r ${path.join(PROJECT_ROOT, "bin", "ts-register.js")} -e 'console.log(JSON.stringify(${read}.cdktfCaller().args))'`;
    const fake = path.join(dir, "cdktf");
    fs.writeFileSync(
      fake,
      "const { execSync } = require('node:child_process');" +
        `process.stdout.write(execSync(${JSON.stringify(app)}, { env: { ...process.env, CDKTF_OUTDIR: 'cdktf.out' } }));`,
    );
    const out = execFileSync(process.execPath, [fake, "deploy", "--auto-approve"], { encoding: "utf8" });
    const args = JSON.parse(out) as string[];
    expect(args.slice(1)).toEqual([fake, "deploy", "--auto-approve"]);
    expect(parallelismHeld({ jobTarget: "sless", parallelism: 3 }, args, {})).toBe("not-held");
  });
});
