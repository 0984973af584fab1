// A newcomer's first commands. Before `bash bin/setup` (no node_modules): every npm script says to run
// it, in one line, instead of Node's stack trace for a missing esbuild/package.json or `sh: tsc: not found`.
// bin/setup's first act: Terraform >= 1.5 on PATH, or a plain word on where to get it, before anything
// long (apt-get, npm ci) starts. None of this runs apt-get or npm ci: fakes record it if anything tried.
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { PROJECT_ROOT } from "../lib/entry-points";

const BASH = execFileSync("sh", ["-c", "command -v bash"], { encoding: "utf8" }).trim();
const SETUP_HINT =
  "vm-install: the npm dependencies are not installed (node_modules/esbuild is missing): run `bash bin/setup` first";

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "vmi-newcomer-"));
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A checkout as a fresh clone has it before set-up: package.json and bin/, no node_modules. */
function bareCheckout(): string {
  const dir = path.join(tmp, "checkout");
  fs.mkdirSync(dir);
  fs.copyFileSync(path.join(PROJECT_ROOT, "package.json"), path.join(dir, "package.json"));
  fs.cpSync(path.join(PROJECT_ROOT, "bin"), path.join(dir, "bin"), { recursive: true });
  return dir;
}

/** A directory holding only the given executables (shell scripts), as a whole PATH. */
function pathOf(name: string, tools: Record<string, string>): string {
  const dir = path.join(tmp, name);
  fs.mkdirSync(dir);
  for (const [tool, body] of Object.entries(tools))
    fs.writeFileSync(path.join(dir, tool), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return dir;
}

describe("npm scripts before bin/setup", () => {
  test.each([
    ["status", "node -r ./bin/ts-register.js"],
    ["demo", "node -r ./bin/ts-register.js"],
    ["typecheck", "tsc"],
    ["lint", "biome"],
    ["deploy", "bin/cdktf"],
  ])("npm run %s (%s) says to run bash bin/setup, exit 1, no stack trace", (script) => {
    const dir = bareCheckout();
    const env = { ...process.env, npm_config_loglevel: "error" };
    const r = spawnSync("npm", ["run", "--silent", script], { cwd: dir, encoding: "utf8", env });
    expect({ status: r.status, stderr: r.stderr.trim() }).toEqual({ status: 1, stderr: SETUP_HINT });
    expect(r.stdout).not.toMatch(/Cannot find module|not found/);
  });

  test("set up, bin/need-setup passes silently and starts no process (an empty PATH: bash built-ins only)", () => {
    // Cheap before every script; ts-register.js's own check is the esbuild lookup it always made.
    const r = spawnSync(BASH, ["bin/need-setup", "tsc", "biome", "cdktf"], {
      cwd: PROJECT_ROOT,
      encoding: "utf8",
      env: { PATH: pathOf("nothing", {}) },
    });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: "" });
  });
});

describe("bin/setup's Terraform check", () => {
  const check = (PATH: string, args = ["--check-terraform"], cwd = PROJECT_ROOT) =>
    spawnSync(BASH, [path.join(cwd, "bin", "setup"), ...args], { cwd, encoding: "utf8", env: { PATH } });

  test("no terraform on PATH: says where to get it and that it must be on PATH, exit 1", () => {
    const r = check(pathOf("empty", {}));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^setup: terraform is not on PATH; vm-install needs Terraform >= 1\.5/);
    expect(r.stderr).toContain("https://developer.hashicorp.com/terraform/install");
    expect(r.stderr).toMatch(/unzip it into a directory on PATH/);
    expect(r.stdout).toBe("");
  });

  test("terraform 1.4.0: too old, names the binary and its version, exit 1", () => {
    const dir = pathOf("old", { terraform: 'echo "Terraform v1.4.0"; echo "on linux_amd64"' });
    const r = check(dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(`^setup: ${dir}/terraform is Terraform 1\\.4\\.0, too old; vm-install needs >= 1\\.5`),
    );
    expect(r.stderr).toContain("https://developer.hashicorp.com/terraform/install");
  });

  test("terraform that prints no version: says so, exit 1", () => {
    const r = check(pathOf("odd", { terraform: "echo hello; echo there" }));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/does not say its version \(`terraform version` printed hello there\)/);
  });

  test.each(["1.5.0", "1.11.4", "2.0.1"])("terraform %s: passes silently", (version) => {
    const r = check(pathOf("ok", { terraform: `echo "Terraform v${version}"` }));
    expect({ status: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual({ status: 0, stdout: "", stderr: "" });
  });

  test("the full bin/setup with an old terraform stops before apt-get, npm ci or anything else", () => {
    const dir = bareCheckout();
    const ran = path.join(tmp, "ran");
    const record = `echo "$0 $*" >> ${ran}`;
    const PATH = pathOf("fakes", {
      terraform: 'echo "Terraform v1.4.0"',
      ...Object.fromEntries(
        ["apt-get", "npm", "id", "sha256sum", "mkdir", "cat", "sort", "tr", "dirname"].map((t) => [t, record]),
      ),
    });
    const r = check(PATH, [], dir);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/too old/);
    expect(fs.existsSync(ran) ? fs.readFileSync(ran, "utf8") : "").toBe("");
  });
});
