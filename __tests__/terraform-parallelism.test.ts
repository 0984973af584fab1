// The parallelism setting: validated with the other top-level settings, and on the command line of every
// deploy, destroy and diff bin/cdktf runs (npm run deploy, the demo and the benchmarks all go through it)
// as cdktf's --terraform-parallelism (cdktf's own --parallelism counts stacks, not resources). Checked
// against a stand-in cdktf that prints what it was given, in a copy of bin/ as cdktf-wrapper-output does.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { CONTEXT_KEY, parseConfig } from "../construct/config/parse";
import { PROJECT_ROOT } from "../construct/entry-points";
import { withTerraformParallelism } from "../operator/terraform-parallelism";
import { context } from "./support/synth";

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
    for (const entry of ["construct", "operator", "shared", "handlers", "package.json"]) link(entry);
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
