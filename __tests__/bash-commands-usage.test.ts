// The bash commands (bin/setup, bin/test, bin/cdktf behind npm run synth/deploy/destroy) as bad-usage.test.ts
// holds the Node ones: --help prints the usage and exits 0 with no secret set, no network and nothing written
// or installed; a deploy or destroy with no terminal to approve on and no --auto-approve says to pass it
// (exit 64) before anything runs, instead of cdktf's Ink trace ("Raw mode is not supported").
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_ROOT } from "../lib/entry-points";
import { EXIT } from "../lib/operator/exit-codes";
import { tempDir } from "./support/synth";

/** A project whose deploy needs a secret (the password), with none set. */
function project(): string {
  const dir = tempDir("bash-usage");
  const vmInstall = {
    stackName: "usage",
    jobTarget: "local",
    installers: { postgres: { enabled: true, passwordVariable: "pg_password" } },
    vms: [{ name: "h", kind: "existing", address: "192.0.2.1" }],
  };
  const app = `node -r ${path.join(PROJECT_ROOT, "bin", "ts-register.js")} ${path.join(PROJECT_ROOT, "main.ts")}`;
  fs.writeFileSync(
    path.join(dir, "cdktf.json"),
    JSON.stringify({ language: "typescript", app, context: { vmInstall } }),
  );
  return dir;
}

/** `bash <script> <args>` in `cwd`, stdin not a terminal, no TF_VAR_ set, no network configuration needed. */
function bash(script: string, args: string[], cwd: string) {
  const env = { ...process.env };
  for (const name of Object.keys(env))
    if (name.startsWith("TF_VAR_") || name === "TF_CLI_CONFIG_FILE") delete env[name];
  const r = spawnSync("bash", [path.join(PROJECT_ROOT, script), ...args], {
    cwd,
    env,
    encoding: "utf8",
    stdio: "pipe",
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const listing = (dir: string) => fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).sort();

describe("--help: the usage on stdout, exit 0, nothing done", () => {
  test.each([
    ["bin/setup", ["--help"], "usage: bash bin/setup [--check-terraform]"],
    ["bin/setup", ["-h"], "usage: bash bin/setup"],
    ["bin/test", ["--help"], "usage: npm test"],
    ["bin/cdktf", ["deploy", "--help"], "cdktf deploy [stacks...]"],
    ["bin/cdktf", ["destroy", "--help"], "cdktf destroy [stacks..]"],
    ["bin/cdktf", ["synth", "--help"], "cdktf synth"],
  ])(
    "bash %s %s",
    (script, args, usage) => {
      const dir = project();
      const before = listing(dir);
      const r = bash(script, args as string[], dir);
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: EXIT.ok, stderr: "" });
      expect(r.stdout).toContain(usage);
      expect(listing(dir)).toEqual(before);
    },
    60_000,
  );
});

test("bash bin/setup with an unknown argument: exit 64, the usage on stderr, nothing installed", () => {
  const r = bash("bin/setup", ["--no-such-flag"], project());
  expect({ code: r.code, stdout: r.stdout }).toEqual({ code: EXIT.usage, stdout: "" });
  expect(r.stderr).toContain("setup: unexpected --no-such-flag\nusage: bash bin/setup");
});

describe("no terminal and no --auto-approve: one line saying to pass it, exit 64, nothing run", () => {
  test.each([
    [["deploy"], "npm run deploy -- --auto-approve"],
    [["destroy"], "npm run destroy -- --auto-approve"],
    [["deploy", "--var-file", "x.tfvars"], "npm run deploy -- --auto-approve"],
  ])(
    "bin/cdktf %j",
    (args, fix) => {
      const dir = project();
      const before = listing(dir);
      const r = bash("bin/cdktf", args, dir);
      expect({ code: r.code, stdout: r.stdout }).toEqual({ code: EXIT.usage, stdout: "" });
      expect(r.stderr).toBe(
        `vm-install: cdktf ${args[0]} asks for approval and stdin is not a terminal: pass --auto-approve (${fix})\n`,
      );
      expect(listing(dir)).toEqual(before);
    },
    60_000,
  );
});
