// bin/cdktf piped (a CI log, `| tee`, the demo capturing it) gives cdktf CI mode and no colour, so its
// output is plain lines instead of ink's spinner frames as raw escape sequences; on a terminal, and for a
// deploy that will ask for approval on one, cdktf keeps its UI. Checked against a stand-in cdktf that
// prints what it was given, in a copy of bin/ whose node_modules is this checkout's but for .bin/cdktf.
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { PROJECT_ROOT } from "../construct/entry-points";

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
  for (const entry of ["construct", "operator", "shared", "handlers", "package.json"])
    fs.symlinkSync(path.join(PROJECT_ROOT, entry), path.join(root, entry));
  for (const entry of fs.readdirSync(path.join(PROJECT_ROOT, "node_modules"))) {
    if (entry !== ".bin")
      fs.symlinkSync(path.join(PROJECT_ROOT, "node_modules", entry), path.join(root, "node_modules", entry));
  }
  fs.writeFileSync(
    path.join(root, "node_modules", ".bin", "cdktf"),
    '#!/bin/sh\necho "CI=${CI-unset} FORCE_COLOR=${FORCE_COLOR-unset} args=$*"\n',
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
  // No terminal to answer an approval prompt on: plain lines too.
  expect(piped(["deploy"])).toBe("CI=1 FORCE_COLOR=0 args=deploy");
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
