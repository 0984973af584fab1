// The CLI as a user runs it: a separate process, with the transpile-only loader, from the project root.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_ROOT } from "../../lib/entry-points";
import { JOB_ENV_VARS } from "../../lib/jobs/invoke-args";
import { cleanupFixtures, jobDir, tempDir } from "./fixtures";

afterAll(cleanupFixtures);

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  lines: string[];
  /** The last stdout line as JSON; absent when it is not JSON. */
  last: { phase: string; message: string };
}

function cli(args: string[], opts: { env?: Record<string, string | undefined>; stdin?: string } = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of JOB_ENV_VARS) delete env[name];
    Object.assign(env, opts.env);
    const child = spawn(process.execPath, ["-r", "./bin/ts-register.js", "bin/invoke.ts", ...args], {
      cwd: PROJECT_ROOT,
      env,
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c) => (stdout += c));
    child.stderr.on("data", (c) => (stderr += c));
    child.on("error", reject);
    child.on("close", (code) => {
      const lines = stdout.split("\n").filter((l, i, all) => l !== "" || i < all.length - 1);
      let last: CliRun["last"];
      try {
        last = JSON.parse(lines[lines.length - 1] ?? "");
      } catch {
        last = undefined as never; // a test reading it then fails on the missing field, naming it
      }
      resolve({ code, stdout, stderr, lines, last });
    });
    child.stdin.on("error", () => undefined); // it may exit before reading: EPIPE is not its outcome
    child.stdin.end(opts.stdin ?? "");
  });
}

const ECHO = `exports.install = async (event) => {
  console.log("step 1");
  console.error("step 2 (stderr)");
  console.log(JSON.stringify({ phase: "Failed", message: "not the real result" }));
  return { event, env: { VM_IP: process.env.VM_IP ?? null, SSH_PORT: process.env.SSH_PORT ?? null, FOO: process.env.FOO ?? null } };
};`;

describe("bin/invoke.ts", () => {
  test("--dir runs the job: progress first, the last stdout line is the result, exit 0", async () => {
    const r = await cli(["--dir", jobDir(ECHO), "--event", '{"packages":["git"]}'], {
      env: { VM_IP: "10.0.0.5", SSH_PORT: "2222", FOO: "leak" },
    });
    expect(r.code).toBe(0);
    // stdout and stderr are separate pipes: order holds within each, not between them.
    expect(r.lines.slice(0, 3).sort()).toEqual(
      ["step 1", "step 2 (stderr)", JSON.stringify({ phase: "Failed", message: "not the real result" })].sort(),
    );
    expect(r.lines.indexOf("step 1")).toBeLessThan(
      r.lines.indexOf(JSON.stringify({ phase: "Failed", message: "not the real result" })),
    );
    expect(r.lines).toHaveLength(4);
    expect(Object.keys(r.last)).toEqual(["phase", "message"]);
    expect(r.last.phase).toBe("Succeeded");
    expect(JSON.parse(r.last.message)).toEqual({
      event: { packages: ["git"] },
      env: { VM_IP: "10.0.0.5", SSH_PORT: "2222", FOO: null },
    });
    expect(r.stdout.endsWith("\n")).toBe(true);
  });

  test("a failing job prints phase Failed last and exits 1", async () => {
    const r = await cli([
      "--dir",
      jobDir(
        `exports.install = async () => { console.log("{\\"phase\\":\\"Succeeded\\"}"); throw new Error("no route to 10.0.0.5"); };`,
      ),
    ]);
    expect(r.code).toBe(1);
    expect(r.last.phase).toBe("Failed");
    expect(r.last.message).toMatch(/^no route to 10\.0\.0\.5/);
  });

  test("--timeout kills a hanging job: Failed, exit 1", async () => {
    const r = await cli([
      "--dir",
      jobDir(`exports.install = () => new Promise(() => setInterval(() => {}, 1000));`),
      "--timeout",
      "1",
    ]);
    expect(r.code).toBe(1);
    expect(r.last).toEqual({ phase: "Failed", message: "timed out after 1 s; the handler printed nothing" });
  });

  test("--event-file reads a file, and - reads stdin", async () => {
    const dir = jobDir(ECHO);
    const file = path.join(tempDir(), "event.json");
    fs.writeFileSync(file, '{"from":"file"}');
    const fromFile = await cli(["--dir", dir, "--event-file", file]);
    expect(fromFile.code).toBe(0);
    expect(JSON.parse(fromFile.last.message).event).toEqual({ from: "file" });
    const fromStdin = await cli(["--dir", dir, "--event-file", "-"], { stdin: '{"from":"stdin"}' });
    expect(fromStdin.code).toBe(0);
    expect(JSON.parse(fromStdin.last.message).event).toEqual({ from: "stdin" });
    const none = await cli(["--dir", dir]);
    expect(JSON.parse(none.last.message).event).toEqual({});
  });

  test("--log-dir keeps each run's progress and outcome in a 0600 file, secrets scrubbed, the last 5 runs per job", async () => {
    const logs = path.join(tempDir(), "logs");
    const dir = jobDir(
      `exports.install = async (e) => { console.log("step one"); console.log("pw " + e.db_password); return { ok: true }; };`,
    );
    const run = () =>
      cli([
        "--dir",
        dir,
        "--name",
        "vm1-install-x",
        "--log-dir",
        logs,
        "--event",
        '{"db_password":"a-password-of-sorts"}',
      ]);
    const first = await run();
    expect(first.code).toBe(0);
    const [file] = fs.readdirSync(logs);
    expect(file).toMatch(/^vm1-install-x-\d{8}T\d{9}Z\.log$/);
    expect(fs.statSync(path.join(logs, file)).mode & 0o777).toBe(0o600);
    expect(fs.statSync(logs).mode & 0o777).toBe(0o700);
    const text = fs.readFileSync(path.join(logs, file), "utf8");
    expect(text.split("\n")).toEqual(["[vm1-install-x] starting", "step one", "pw [redacted]", first.lines.at(-1), ""]);
    expect(text).not.toContain("a-password-of-sorts");
    for (let i = 0; i < 6; i++) expect((await run()).code).toBe(0);
    const kept = fs.readdirSync(logs).sort();
    expect(kept).toHaveLength(5);
    expect(kept).not.toContain(file); // the oldest went first
  }, 60000);

  test("--ssh-key-file readable by group or others is refused as OpenSSH refuses it, before the job starts", async () => {
    const keyFile = path.join(tempDir(), "vm_key");
    fs.writeFileSync(keyFile, "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n", {
      mode: 0o644,
    });
    fs.chmodSync(keyFile, 0o644); // whatever the umask
    const dir = jobDir(
      `exports.install = async () => { require("fs").writeFileSync(${JSON.stringify(path.join(tempDir(), "ran"))}, "x"); return {}; };`,
    );
    const r = await cli(["--dir", dir, "--ssh-key-file", keyFile]);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain(`UNPROTECTED PRIVATE KEY FILE! Permissions 0644 for '${keyFile}' are too open.`);
    expect(r.stderr).toContain("This private key will be ignored.");
    expect(r.stderr).toContain(`chmod 600 '${keyFile}'`);
    fs.chmodSync(keyFile, 0o600);
    expect((await cli(["--dir", dir, "--ssh-key-file", keyFile])).code).toBe(0);
  });

  test("--ssh-key-file puts the key in SSH_KEY, over the environment's, and scrubs it from output", async () => {
    const key =
      "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n";
    const keyFile = path.join(tempDir(), "vm_key");
    fs.writeFileSync(keyFile, key, { mode: 0o600 });
    const dir = jobDir(`exports.install = async () => {
      console.log("using key " + process.env.SSH_KEY);
      return { sha256: require("crypto").createHash("sha256").update(process.env.SSH_KEY).digest("hex"), key: process.env.SSH_KEY };
    };`);
    const r = await cli(["--dir", dir, "--ssh-key-file", keyFile], { env: { SSH_KEY: "from-the-environment" } });
    expect(r.code).toBe(0);
    const result = JSON.parse(r.last.message);
    expect(result.sha256).toBe(require("node:crypto").createHash("sha256").update(key).digest("hex"));
    expect(result.key).toBe("[redacted]");
    expect(r.stdout).not.toContain("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW");
  });

  test("password-like event fields are scrubbed from output", async () => {
    const r = await cli([
      "--dir",
      jobDir(`exports.install = async (e) => { console.log("password is " + e.db.db_password); return e; };`),
      "--event",
      '{"db":{"db_password":"Tr0ub4dor&3-horse"}}',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain("Tr0ub4dor&3-horse");
    expect(r.lines[0]).toBe("password is [redacted]");
  });

  test("--result-file gets the same JSON object, written atomically", async () => {
    const out = tempDir();
    const file = path.join(out, "result.json");
    const r = await cli(["--dir", jobDir(ECHO), "--result-file", file]);
    expect(r.code).toBe(0);
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual(r.last);
    expect(fs.readdirSync(out)).toEqual(["result.json"]);
  });

  test("--event-env reads the event from a variable; --secret-env adds a field from another, scrubbed", async () => {
    const r = await cli(
      [
        "--dir",
        jobDir(
          `exports.install = async (e) => { console.log("pw " + e.db_password); return { keys: Object.keys(e).sort(), pw: e.db_password }; };`,
        ),
        "--event-env",
        "JOB_EVENT",
        "--secret-env",
        "db_password=TF_VAR_pg_pw",
        "--name",
        "h1-install-postgres",
      ],
      { env: { JOB_EVENT: '{"db_name":"myapp"}', TF_VAR_pg_pw: "s3cr3t 'q' $x" } },
    );
    expect(r.code).toBe(0);
    expect(r.lines[0]).toBe("[h1-install-postgres] starting");
    expect(r.lines).toContain("pw [redacted]");
    expect(JSON.parse(r.last.message)).toEqual({ keys: ["db_name", "db_password"], pw: "[redacted]" });
    expect(r.stdout).not.toContain("s3cr3t");
  });

  test("--secret-env naming an unset variable is a usage error that says what to export", async () => {
    const r = await cli(["--dir", jobDir(ECHO), "--secret-env", "db_password=TF_VAR_missing_pw"]);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain(
      "TF_VAR_missing_pw is not set; export TF_VAR_missing_pw=... before running (it holds the event's db_password)",
    );
  });

  test("--result-tfstate writes the outcome as state outputs phase and message; a failure also says which job on stderr", async () => {
    const out = tempDir();
    const file = path.join(out, "nested", "job.tfstate");
    const ok = await cli(["--dir", jobDir(ECHO), "--event", '{"a":1}', "--result-tfstate", file]);
    expect(ok.code).toBe(0);
    const state = JSON.parse(fs.readFileSync(file, "utf8"));
    expect(state).toMatchObject({
      version: 4,
      outputs: { phase: { value: "Succeeded", type: "string" }, message: { value: ok.last.message, type: "string" } },
      resources: [],
    });
    const bad = await cli([
      "--dir",
      jobDir(`exports.install = async () => { throw new Error("no candidate for nosuchpkg"); };`),
      "--result-tfstate",
      file,
      "--name",
      "h1-install-packages",
    ]);
    expect(bad.code).toBe(1);
    expect(JSON.parse(fs.readFileSync(file, "utf8")).outputs.phase.value).toBe("Failed");
    expect(bad.stderr).toContain("[h1-install-packages] Failed: no candidate for nosuchpkg");
  });

  test("an installer name is bundled from the handlers folder and run", async () => {
    const handlersDir = tempDir("runner-handlers-");
    const name = `runner-fixture-${process.pid}`;
    fs.mkdirSync(path.join(handlersDir, name));
    fs.writeFileSync(
      path.join(handlersDir, name, "handler.ts"),
      `export async function install(event: { n: number }): Promise<{ doubled: number; bundled: boolean }> {
         return { doubled: event.n * 2, bundled: !require("fs").existsSync(__dirname + "/handler.ts") };
       }\n`,
    );
    const cache = path.join(PROJECT_ROOT, ".cache", "bundles");
    try {
      const r = await cli([name, "--handlers-dir", handlersDir, "--event", '{"n":21}']);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.last.message)).toEqual({ doubled: 42, bundled: true });
    } finally {
      for (const d of fs.existsSync(cache) ? fs.readdirSync(cache) : []) {
        if (d.startsWith(`${name}-`)) fs.rmSync(path.join(cache, d), { recursive: true, force: true });
      }
    }
  });

  test("a handler that does not compile is Failed with esbuild's error, exit 1", async () => {
    const handlersDir = tempDir("runner-handlers-");
    fs.mkdirSync(path.join(handlersDir, "broken"));
    fs.writeFileSync(path.join(handlersDir, "broken", "handler.ts"), `export async function install( {\n`);
    const r = await cli(["broken", "--handlers-dir", handlersDir]);
    expect(r.code).toBe(1);
    expect(r.last.phase).toBe("Failed");
    expect(r.last.message).toMatch(/bundling broken with esbuild failed/);
  });

  test.each([
    [[], /name an installer .* or pass --dir DIR/],
    [["--dir", "/nonexistent/dir"], /--dir \/nonexistent\/dir: no such directory/],
    [["no-such-installer"], /unknown installer "no-such-installer"/],
    [["a", "b"], /one installer at a time/],
    [["install-packages", "--dir", "/tmp"], /not both/],
    [["--dir", "/tmp", "--event", "{not json"], /--event is not valid JSON .*pass one JSON object/],
    [["--dir", "/tmp", "--event", "[1]"], /--event must be a JSON object \(got an array\)/],
    [["--dir", "/tmp", "--event", "{}", "--event-file", "x"], /give one of --event, --event-file, --event-env/],
    [
      ["--dir", "/tmp", "--event-file", "/nonexistent/event.json"],
      /--event-file \/nonexistent\/event.json: cannot read it/,
    ],
    [["--dir", "/tmp", "--timeout", "soon"], /--timeout soon: expected a positive number/],
    [
      ["--dir", "/tmp", "--ssh-key-file", "/nonexistent/key"],
      /--ssh-key-file \/nonexistent\/key: \/nonexistent\/key does not exist; make it with ssh-keygen/,
    ],
    [["--dir", "/tmp", "--result-file", "/nonexistent/dir/r.json"], /--result-file .*does not exist/],
    [["--dir", "/tmp", "--entrypoint", "../x.install"], /--entrypoint: entrypoint "..\/x.install" is invalid/],
    [["--dir", "/tmp", "--bogus"], /Unknown option '--bogus'/],
  ])("bad usage %j exits 64 naming the problem", async (args, why) => {
    const r = await cli(args as string[]);
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(why as RegExp);
    expect(r.stderr).toContain("usage: npm run invoke");
    expect(r.stdout).toBe("");
  });

  test("--event-file - with bad JSON on stdin names stdin", async () => {
    const r = await cli(["--dir", "/tmp", "--event-file", "-"], { stdin: "oops" });
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(/the event on stdin \(--event-file -\) is not valid JSON/);
  });

  test("--help prints the options and exits 0", async () => {
    const r = await cli(["--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("--ssh-key-file PATH");
  });
});
