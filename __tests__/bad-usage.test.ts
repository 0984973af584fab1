// Every command the docs document ends bad usage the same way (docs/exit-codes.md): exit 64, the usage on
// stderr, nothing on stdout, nothing done; and --help prints the usage on stdout with exit 0. Real child
// processes, as npm runs them, in an empty folder: no project, sandbox or deploy is needed to get this far.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ENTRY_POINTS, PROJECT_ROOT } from "../lib/entry-points";
import { EXIT } from "../lib/operator/exit-codes";

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "bad-usage-"));
afterAll(() => fs.rmSync(cwd, { recursive: true, force: true }));

function run(script: string, args: string[]): Promise<Ran> {
  const argv = ["-r", ENTRY_POINTS.tsRegister, path.join(PROJECT_ROOT, script), ...args];
  // Not npm's lifecycle: a command must not take INIT_CWD (the project this test runs in) as its project.
  const env = { ...process.env, npm_lifecycle_event: "", INIT_CWD: "" };
  const child = spawn(process.execPath, argv, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  return new Promise((resolve) => {
    child.on("error", (err) => resolve({ code: null, stdout, stderr: `${stderr}spawn failed: ${err.message}` }));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** [command, script, bad arguments, what its usage says, and where given how it names the flag or argument]. */
const BAD: [string, string, string[], string, string?][] = [
  ["check", "bin/check.ts", ["--no-such-flag"], "usage: npm run check"],
  ["check", "bin/check.ts", ["--junit"], "usage: npm run check"],
  ["status", "bin/status.ts", ["--no-such-flag"], "usage: npm run status"],
  ["status", "bin/status.ts", ["--json", "extra"], "usage: npm run status"],
  ["rerun", "bin/rerun.ts", [], "usage: npm run rerun -- <vm name>"],
  ["rerun", "bin/rerun.ts", ["--no-such-flag"], "usage: npm run rerun -- <vm name>"],
  ["trust", "bin/trust.ts", [], "usage: npm run trust -- <vm name>"],
  ["trust", "bin/trust.ts", ["web", "not-a-fingerprint"], "usage: npm run trust -- <vm name>"],
  ["faults", "bin/faults.ts", ["--no-such-flag"], "usage: npm run faults"],
  ["docs", "bin/docs.ts", ["--no-such-flag"], "usage: npm run docs"],
  ["invoke", "bin/invoke.ts", ["--no-such-flag"], "usage: npm run invoke"],
  ["invoke", "bin/invoke.ts", [], "usage: npm run invoke"],
  ["sandbox", "dev/sandbox/cli.ts", ["up", "--no-such-flag"], "usage: npm run sandbox"],
  ["sandbox", "dev/sandbox/cli.ts", ["list", "extra"], "usage: npm run sandbox"],
  // Not every sandbox on the machine for a forgotten name.
  ["sandbox", "dev/sandbox/cli.ts", ["down"], "pass --all for every one"],
  ["sandbox", "dev/sandbox/cli.ts", ["down", "--all", "demo"], "usage: npm run sandbox"],
  // No terminal to approve on (stdin is not one here): said before anything runs, not Terraform's EOF.
  ["rerun", "bin/rerun.ts", ["web"], "pass the approval in advance, as in `npm run rerun -- web -auto-approve`"],
  ["trust", "bin/trust.ts", ["web"], "as in `npm run trust -- web SHA256:<fingerprint> -auto-approve`"],
  ["providers", "providers/generate.ts", ["--no-such-flag"], "usage: npm run providers"],
  ["demo", "dev/demo/demo.ts", ["sideways"], "usage: npm run demo"],
  ["bench:report", "dev/bench/report.ts", ["--no-such-flag"], "usage: npm run bench:report"],
  ["twin", "dev/twin/install.ts", [], "usage: npm run twin -- install"],
  ["twin", "dev/twin/install.ts", ["install", "--dir"], "usage: npm run twin -- install"],
  ["twin", "dev/twin/install.ts", ["install", "extra"], "usage: npm run twin -- install"],
  ["test:times", "bin/test-report.ts", ["a", "b"], "usage: npm run test:times"],
  ["bench:synth", "dev/bench/synth.ts", ["2"], "usage: node -r ./bin/ts-register.js dev/bench/synth.ts"],
  ["bench:synth", "dev/bench/synth.ts", ["5", "extra"], "usage: node -r ./bin/ts-register.js dev/bench/synth.ts"],
  // Every command's options go through its parseArgs table: an unknown flag, a flag missing its value (or given
  // one it takes none of) is named.
  ["check", "bin/check.ts", ["--junit"], "usage: npm run check", "check: --junit needs a value (FILE)"],
  ["status", "bin/status.ts", ["--junit"], "usage: npm run status", "status: --junit needs a value (FILE)"],
  ["status", "bin/status.ts", ["--jsn"], "usage: npm run status", "status: unknown option --jsn"],
  ["faults", "bin/faults.ts", ["--print=yes"], "usage: npm run faults", "faults: --print takes no value"],
  ["docs", "bin/docs.ts", ["--check=yes"], "usage: npm run docs", "docs: --check takes no value"],
  ["invoke", "bin/invoke.ts", ["--event"], "usage: npm run invoke", "--event"],
  ["sandbox", "dev/sandbox/cli.ts", ["up", "--user-data"], "usage: npm run sandbox", "up: --user-data needs a value"],
  ["sandbox", "dev/sandbox/cli.ts", ["image", "--bogus"], "usage: npm run sandbox", "image: unknown option --bogus"],
  ["sandbox", "dev/sandbox/cli.ts", ["down", "--bogus"], "usage: npm run sandbox", "down: unknown option --bogus"],
  ["twin", "dev/twin/install.ts", ["install", "--bogus"], "usage: npm run twin", "twin: unknown option --bogus"],
  ["twin", "dev/twin/install.ts", ["install", "--dir"], "usage: npm run twin", "twin: --dir needs a value (DIR)"],
  ["providers", "providers/generate.ts", ["a", "b"], "usage: npm run providers", "providers: unexpected b"],
  ["demo", "dev/demo/demo.ts", ["--bogus"], "usage: npm run demo", "demo: unknown option --bogus"],
  ["bench:report", "dev/bench/report.ts", ["--check=yes"], "usage: npm run bench:report", "--check takes no value"],
  ["test:times", "bin/test-report.ts", ["--bogus"], "usage: npm run test:times", "unknown option --bogus"],
  ["bench:synth", "dev/bench/synth.ts", ["--bogus"], "usage: node -r ./bin/ts-register.js", "unknown option --bogus"],
];

/** [command, script, arguments asking for help, what its usage says]. */
const HELP: [string, string, string[], string][] = [
  ["check", "bin/check.ts", ["--help"], "usage: npm run check"],
  ["status", "bin/status.ts", ["-h"], "usage: npm run status"],
  ["rerun", "bin/rerun.ts", ["--help"], "usage: npm run rerun"],
  ["trust", "bin/trust.ts", ["-h"], "usage: npm run trust"],
  ["faults", "bin/faults.ts", ["--help"], "usage: npm run faults"],
  ["docs", "bin/docs.ts", ["--help"], "usage: npm run docs"],
  ["invoke", "bin/invoke.ts", ["--help"], `Exit code: 0 Succeeded, 1 Failed, ${EXIT.usage} bad usage.`],
  ["sandbox", "dev/sandbox/cli.ts", ["--help"], "usage: npm run sandbox"],
  ["twin", "dev/twin/install.ts", ["--help"], "usage: npm run twin -- install"],
  ["test:times", "bin/test-report.ts", ["--help"], "usage: npm run test:times"],
  ["bench:synth", "dev/bench/synth.ts", ["--help"], "usage: node -r ./bin/ts-register.js dev/bench/synth.ts"],
  ["providers", "providers/generate.ts", ["--help"], "usage: npm run providers"],
  ["demo", "dev/demo/demo.ts", ["--help"], "usage: npm run demo"],
  ["bench:report", "dev/bench/report.ts", ["-h"], "usage: npm run bench:report"],
];

// All at once: each is a Node start and a transpile, and none waits on another.
const bad = Promise.all(BAD.map(([, script, args]) => run(script, args)));
const help = Promise.all(HELP.map(([, script, args]) => run(script, args)));

describe("bad usage: exit 64, the usage on stderr, nothing on stdout", () => {
  test.each(BAD.map((c, i) => [c[0], c[2].join(" ") || "(no arguments)", i] as const))(
    "npm run %s -- %s",
    async (_name, _args, i) => {
      const r = (await bad)[i];
      expect({ code: r.code, stdout: r.stdout }).toEqual({ code: EXIT.usage, stdout: "" });
      expect(r.stderr).toContain(BAD[i][3]);
      expect(r.stderr).toContain(BAD[i][4] ?? "");
      expect(r.stderr).not.toContain("internal error");
    },
    60_000,
  );
});

describe("--help: the usage on stdout, exit 0", () => {
  test.each(HELP.map((c, i) => [c[0], c[2].join(" "), i] as const))(
    "npm run %s -- %s",
    async (_name, _args, i) => {
      const r = (await help)[i];
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: EXIT.ok, stderr: "" });
      expect(r.stdout).toContain(HELP[i][3]);
    },
    60_000,
  );
});

test("nothing was written where the commands ran", async () => {
  await Promise.all([bad, help]);
  expect(fs.readdirSync(cwd)).toEqual([]);
});
