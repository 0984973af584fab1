// bin/cdktf piped (a CI log, `| tee`, the demo capturing it) gives cdktf CI mode and no colour, so its
// output is plain lines instead of ink's spinner frames as raw escape sequences; on a terminal, and for a
// deploy that will ask for approval on one, cdktf keeps its UI. Checked against a stand-in cdktf that
// prints what it was given, in a copy of bin/ whose node_modules is this checkout's but for .bin/cdktf.
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { PROJECT_ROOT } from "../lib/entry-points";

const HAS_SCRIPT = spawnSync("sh", ["-c", "command -v script"]).status === 0;
const withPty = HAS_SCRIPT ? test : test.skip;

let tmp: string;
let project: string;
let wrapper: string;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "vmi-cdktf-wrapper-"));
  const root = path.join(tmp, "checkout");
  fs.mkdirSync(path.join(root, "node_modules", ".bin"), { recursive: true });
  fs.cpSync(path.join(PROJECT_ROOT, "bin"), path.join(root, "bin"), { recursive: true });
  for (const entry of ["lib", "handlers", "package.json"])
    fs.symlinkSync(path.join(PROJECT_ROOT, entry), path.join(root, entry));
  for (const entry of fs.readdirSync(path.join(PROJECT_ROOT, "node_modules"))) {
    if (entry !== ".bin")
      fs.symlinkSync(path.join(PROJECT_ROOT, "node_modules", entry), path.join(root, "node_modules", entry));
  }
  fs.writeFileSync(
    path.join(root, "node_modules", ".bin", "cdktf"),
    '#!/bin/sh\necho "CI=${CI-unset} FORCE_COLOR=${FORCE_COLOR-unset} args=$*"\n' +
      // The stack CA's key reaches no one through the environment (the app and the runner read its file).
      '! env | grep -q "PRIVATE KEY" || echo "a private key in cdktf\'s environment"\n',
    {
      mode: 0o755,
    },
  );
  project = path.join(tmp, "project");
  fs.mkdirSync(project);
  wrapper = path.join(root, "bin", "cdktf");
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** The environment without the caller's own CI and FORCE_COLOR (bin/test may run under CI=true). */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  for (const k of ["CI", "FORCE_COLOR"]) if (!(k in extra)) delete env[k];
  return env;
}

/** bin/cdktf with stdout and stdin piped (no terminal at all). */
function piped(args: string[], extra: Record<string, string> = {}): string {
  return execFileSync("bash", [wrapper, ...args], {
    cwd: project,
    encoding: "utf8",
    env: cleanEnv(extra),
    stdio: ["pipe", "pipe", "pipe"],
  }).trim();
}

/** `command` run by `script` on a pseudo-terminal: stdin and stdout are a terminal unless `command` pipes them. */
function onTerminal(command: string): string {
  const out = execFileSync("script", ["-qec", command, "/dev/null"], {
    cwd: project,
    encoding: "utf8",
    env: cleanEnv(),
  });
  return out.replace(/\r/g, "").trim();
}

test("piped: CI=1 and FORCE_COLOR=0 (cdktf's --no-color default), the arguments unchanged", () => {
  expect(piped(["synth"])).toBe("CI=1 FORCE_COLOR=0 args=synth");
  expect(piped(["deploy", "--auto-approve"])).toBe("CI=1 FORCE_COLOR=0 args=deploy --auto-approve");
  // A deploy with no terminal to approve on is refused before cdktf (bash-commands-usage.test.ts).
  expect(piped(["diff"])).toBe("CI=1 FORCE_COLOR=0 args=diff");
});

test("piped, a CI or FORCE_COLOR the caller set is kept", () => {
  expect(piped(["synth"], { CI: "true" })).toBe("CI=true FORCE_COLOR=0 args=synth");
  expect(piped(["synth"], { CI: "false", FORCE_COLOR: "1" })).toBe("CI=false FORCE_COLOR=1 args=synth");
});

withPty("on a terminal: cdktf's own UI, nothing set", () => {
  expect(onTerminal(`bash ${wrapper} synth`)).toBe("CI=unset FORCE_COLOR=unset args=synth");
});

withPty(
  "piped but asking for approval on a terminal: the UI stays (under CI its prompt would never be printed)",
  () => {
    expect(onTerminal(`bash ${wrapper} deploy | cat`)).toBe("CI=unset FORCE_COLOR=unset args=deploy");
    expect(onTerminal(`bash ${wrapper} destroy my-stack | cat`)).toBe(
      "CI=unset FORCE_COLOR=unset args=destroy my-stack",
    );
    expect(onTerminal(`bash ${wrapper} deploy --auto-approve | cat`)).toBe(
      "CI=1 FORCE_COLOR=0 args=deploy --auto-approve",
    );
  },
);

describe("before cdktf: one Node start writes the project's files and hands on its variables and arguments", () => {
  const context = {
    stackName: "wrapped",
    jobTarget: "local",
    parallelism: 3,
    vms: [{ name: "db", kind: "existing", address: "192.0.2.1", privateKeyPath: "id" }],
    installers: { postgres: { enabled: true, passwordVariable: "pg_password", tls: "stack-ca" } },
  };
  const projectWith = (name: string) => {
    const dir = path.join(tmp, name);
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, "cdktf.json"), JSON.stringify({ app: "true", context: { vmInstall: context } }));
    return dir;
  };

  test("the stack CA is written and its key not exported, the parallelism setting added, cdktf.out made owner-only", () => {
    const dir = projectWith("prepared");
    fs.mkdirSync(path.join(dir, "cdktf.out"));
    fs.writeFileSync(path.join(dir, "cdktf.out", "wide"), "", { mode: 0o644 });
    const run = spawnSync("bash", [wrapper, "deploy", "--auto-approve"], {
      cwd: dir,
      encoding: "utf8",
      env: cleanEnv({ TF_VAR_pg_password: "a password" }),
    });
    expect(run.status).toBe(0);
    expect(run.stdout.trim().split("\n")).toEqual([
      "CI=1 FORCE_COLOR=0 args=deploy --auto-approve --terraform-parallelism=3",
    ]);
    expect(fs.statSync(path.join(dir, ".vm-install", "wrapped", "postgres-ca.json")).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(dir, "cdktf.out", "wide")).mode & 0o777).toBe(0o600);
    expect(run.stderr).toContain("cdktf.out/wide was mode 0644");
  });

  test("a project file it cannot write: bin/cdktf exits 1 with its reason, and cdktf never runs", () => {
    const dir = projectWith("unwritable");
    fs.writeFileSync(path.join(dir, ".vm-install"), "a file where the results folder belongs");
    const run = spawnSync("bash", [wrapper, "deploy", "--auto-approve"], {
      cwd: dir,
      encoding: "utf8",
      env: cleanEnv(),
    });
    expect(run.status).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^vm-install: .*\.vm-install/m);
  });

  test("a deploy or destroy without an installer's secret variable: exit 1 naming it, before cdktf", () => {
    const dir = projectWith("unset");
    for (const command of ["deploy", "destroy"]) {
      const run = spawnSync("bash", [wrapper, command, "--auto-approve"], {
        cwd: dir,
        encoding: "utf8",
        env: cleanEnv(),
      });
      expect(run.status).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr).toContain(`vm-install: cdktf ${command} needs TF_VAR_pg_password set`);
    }
    // synth asks for no variable: it runs.
    const synth = spawnSync("bash", [wrapper, "synth"], { cwd: dir, encoding: "utf8", env: cleanEnv() });
    expect(synth.status).toBe(0);
    expect(synth.stdout.split("\n")[0]).toBe("CI=1 FORCE_COLOR=0 args=synth");
  });
});
