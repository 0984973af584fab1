// The detached-step script (common/detached.ts) run for real by /bin/sh on this machine: without
// systemd here it takes the setsid path, which follows the same files. What matters: the follower gives
// the step's output and exit status as if it had run in the channel, a second start of a live step
// attaches to it instead of running it twice, "follow" never starts anything, and a step killed under
// its follower is reported as such.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { aptFailureReason } from "../../handlers/common/apt-output";
import { detachedScript, STALE_AFTER_MIN, STEP_DIED, STEP_NOT_STARTED, stepId } from "../../handlers/common/detached";

/**
 * Runs `script` in /bin/sh the way sudo runs it on the VM: its parent (sudo there, an outer sh here)
 * holds the login environment, `env`; its own environment is only PATH. No proxy of this machine leaks in.
 */
function sh(
  script: string,
  opts: { timeoutMs?: number; env?: Record<string, string> } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const login = Object.entries(opts.env ?? {}).map(([k, v]) => `${k}=${v}`);
  return new Promise((resolve) => {
    const child = execFile(
      "/usr/bin/env",
      [
        "-i",
        `PATH=${process.env.PATH}`,
        ...login,
        "/bin/sh",
        "-c",
        'env -i PATH="$PATH" /bin/sh -c "$1"; exit $?',
        "outer",
        script,
      ],
      { encoding: "utf8", timeout: opts.timeoutMs ?? 30_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

/** Resolves with the step's pid once its runner has written it (the step is running from then on). */
async function runningStep(stepDir: string): Promise<number> {
  const pidFile = path.join(stepDir, "pid");
  const deadline = Date.now() + 10_000;
  while (!(fs.existsSync(pidFile) && fs.readFileSync(pidFile, "utf8").trim())) {
    if (Date.now() > deadline) throw new Error(`${pidFile} did not appear within 10 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Number(fs.readFileSync(pidFile, "utf8"));
}

describe("detached steps", () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "vmi-steps-"));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("derives a stable, file-safe id from the job and the command", () => {
    expect(stepId("install-packages", "apt-get install jq")).toBe(stepId("install-packages", "apt-get install jq"));
    expect(stepId("install-packages", "apt-get install jq")).not.toBe(
      stepId("install-packages", "apt-get install git"),
    );
    expect(stepId("Install Docker!", "x")).toMatch(/^install-docker--[0-9a-f]{12}$/);
  });

  it("escapes the runner for systemd, which turns $$ into $ and expands $VAR in a unit's command line", () => {
    const script = detachedScript("job-z", "true", "start");
    const unitLine = script.split("\n").find((l) => l.includes("systemd-run --quiet"))!;
    expect(unitLine).toContain(`exec 9> "$$d/lock"`);
    expect(unitLine).toContain(`echo $$$$ > "$$d/pid.tmp"`);
    expect(unitLine).toContain(`x=$$(cat /proc/$$$$/stat)`);
    expect(unitLine).toContain("echo $$? >");
    // The proxies go in as --setenv=NAME: the value comes from systemd-run's environment, not its command line.
    expect(unitLine).toMatch(/--description="vm-install step job-z" "\$@" sh -c /);
    expect(script).toContain(`set -- "$@" "--setenv=$n"`);
    const setsidLine = script.split("\n").find((l) => l.includes("else setsid"))!;
    expect(setsidLine).toContain(`echo $$ > "$d/pid.tmp"`);
  });

  it("gives the step's stdout, stderr and exit status; follow reads a finished step again without re-running it", async () => {
    const count = path.join(dir, "count");
    const script = `echo run >> ${count}; echo 'it said '"'"'hi'"'"; echo oops >&2; exit 3`;
    const first = await sh(detachedScript("job-a", script, "start", dir));
    expect(first).toEqual({ code: 3, stdout: "it said 'hi'\n", stderr: "oops\n" });
    const again = await sh(detachedScript("job-a", script, "follow", dir));
    expect(again).toEqual(first);
    expect(fs.readFileSync(count, "utf8")).toBe("run\n");
  });

  it("a second start while the step runs attaches to it: one run, both see its result", async () => {
    const count = path.join(dir, "count");
    const script = `echo run >> ${count}; sleep 1; echo done`;
    const one = sh(detachedScript("job-b", script, "start", dir));
    await runningStep(path.join(dir, "job-b"));
    const two = await sh(detachedScript("job-b", script, "start", dir));
    expect(two.stdout).toBe("done\n");
    expect(two.stderr).toContain("attached to step job-b");
    expect((await one).stdout).toBe("done\n");
    expect(fs.readFileSync(count, "utf8")).toBe("run\n");
  });

  it("another step still running from an earlier run is waited for before this one starts", async () => {
    const order = path.join(dir, "order");
    const earlier = sh(detachedScript("job-c", `sleep 1; echo earlier >> ${order}`, "start", dir));
    await runningStep(path.join(dir, "job-c"));
    const later = await sh(detachedScript("job-d", `echo later >> ${order}`, "start", dir));
    expect(later.stderr).toContain("waiting for step job-c");
    await earlier;
    expect(fs.readFileSync(order, "utf8")).toBe("earlier\nlater\n");
  });

  it("the follower waits on the step's lock, not on what the step leaves running in the background", async () => {
    const started = Date.now();
    const bg = path.join(dir, "bg.pid");
    const r = await sh(
      detachedScript("job-g", `sleep 30 > /dev/null 2>&1 & echo $! > ${bg}; echo started`, "start", dir),
    );
    expect(r).toMatchObject({ code: 0, stdout: "started\n" });
    expect(Date.now() - started).toBeLessThan(5_000);
    process.kill(Number(fs.readFileSync(bg, "utf8")), "SIGKILL"); // the one process this test left behind
  });

  it("follow never starts a step; a step killed under its follower is reported, not taken for success", async () => {
    expect((await sh(detachedScript("job-e", "echo x", "follow", dir))).code).toBe(STEP_NOT_STARTED);
    const run = sh(detachedScript("job-f", "sleep 5", "start", dir));
    process.kill(await runningStep(path.join(dir, "job-f")), "SIGKILL");
    const r = await run;
    expect(r.code).toBe(STEP_DIED);
    expect(r.stderr).toContain("ended without an exit status");
  });

  // ---------------------------------------------------------------------------------------------------
  // A pid file outlives its process: after a step died without an exit status (the VM lost power in
  // the middle, its unit was killed), the kernel hands the pid to any later process. Such a step must
  // count as dead, whatever now runs under its pid.

  describe("a step whose runner is gone while its pid now names another, live process", () => {
    let other: ChildProcess;
    beforeEach(() => {
      other = spawn("sleep", ["60"], { stdio: "ignore" });
    });
    afterEach(() => {
      other.kill("SIGKILL");
    });

    /** A step directory as a runner that died leaves it, its pid file naming `pid`. */
    function deadStep(id: string, pid: number, start: string | undefined): string {
      const d = path.join(dir, id);
      fs.mkdirSync(d, { mode: 0o700 });
      fs.writeFileSync(path.join(d, "cmd"), "sleep 600\n");
      if (start !== undefined) fs.writeFileSync(path.join(d, "start"), `${start}\n`);
      fs.writeFileSync(path.join(d, "pid"), `${pid}\n`);
      return d;
    }

    /** Field 22 of /proc/<pid>/stat: what the runner records. */
    const startOf = (pid: number) =>
      fs
        .readFileSync(`/proc/${pid}/stat`, "utf8")
        .replace(/^.*\) /s, "")
        .split(" ")[19];

    it.each([
      ["recorded with another start time", () => String(Number(startOf(other.pid!)) - 1)],
      ["recorded without a start time (an older vm-install), not a runner of that step", () => undefined],
    ])("%s: a later step neither waits for it nor attaches to it, and a follower reports it died", async (_, start) => {
      deadStep("job-old", other.pid!, start());
      const later = await sh(detachedScript("job-new", "echo later", "start", dir), { timeoutMs: 10_000 });
      expect(later).toEqual({ code: 0, stdout: "later\n", stderr: "" });

      const followed = await sh(detachedScript("job-old", "sleep 600", "follow", dir), { timeoutMs: 10_000 });
      expect(followed.code).toBe(STEP_DIED);
      expect(followed.stderr).toContain("ended without an exit status");

      const again = await sh(detachedScript("job-old", "echo afresh", "start", dir), { timeoutMs: 10_000 });
      expect(again).toEqual({ code: 0, stdout: "afresh\n", stderr: "" });
    });

    it("the same process with its recorded start time still counts as running (waited for)", async () => {
      const d = deadStep("job-live", other.pid!, startOf(other.pid!));
      setTimeout(() => fs.writeFileSync(path.join(d, "rc"), "0\n"), 1500);
      const later = await sh(detachedScript("job-next", "echo next", "start", dir), { timeoutMs: 10_000 });
      expect(later.stderr).toContain("waiting for step job-live");
      expect(later.stdout).toBe("next\n");
    });
  });

  it("records the runner's start time beside its pid, as /proc/<pid>/stat has it", async () => {
    const r = await sh(detachedScript("job-s", `cat /proc/$PPID/stat`, "start", dir));
    expect(r.code).toBe(0);
    const field22 = r.stdout.replace(/^.*\) /s, "").split(" ")[19];
    expect(fs.readFileSync(path.join(dir, "job-s", "start"), "utf8")).toBe(`${field22}\n`);
  });

  it(
    `finished and dead steps older than ${STALE_AFTER_MIN} min are removed when a step starts; younger ones and ` +
      `running ones stay`,
    async () => {
      const make = (id: string, files: Record<string, string>, ageMin: number) => {
        const d = path.join(dir, id);
        fs.mkdirSync(d);
        for (const [f, c] of Object.entries(files)) fs.writeFileSync(path.join(d, f), c);
        const t = new Date(Date.now() - ageMin * 60_000);
        fs.utimesSync(d, t, t);
      };
      const old = STALE_AFTER_MIN + 30;
      make("old-finished", { pid: "1\n", start: "1\n", rc: "0\n" }, old);
      make("old-dead", { pid: "999999999\n", start: "5\n" }, old);
      make("old-never-started", {}, old);
      make("young-finished", { pid: "1\n", start: "1\n", rc: "0\n" }, 5);
      make("young-dead", { pid: "999999999\n", start: "5\n" }, 5);
      // A step that runs for longer than that is not stale: it is waited for, then stays until it is old.
      const long = sh(detachedScript("old-running", "sleep 1; echo long", "start", dir));
      await runningStep(path.join(dir, "old-running"));
      const t = new Date(Date.now() - old * 60_000);
      fs.utimesSync(path.join(dir, "old-running"), t, t);

      const r = await sh(detachedScript("job-now", "echo now", "start", dir));
      expect(r.stdout).toBe("now\n");
      expect((await long).stdout).toBe("long\n");
      expect(fs.readdirSync(dir).sort()).toEqual(["job-now", "old-running", "young-dead", "young-finished"]);
    },
  );

  // ---------------------------------------------------------------------------------------------------
  // Proxies: the setsid path here, the same collection as for systemd-run's --setenv (e2e covers that).

  describe("the proxy of the login environment reaches the step", () => {
    const probe = 'echo "http=${http_proxy-unset} https=${HTTPS_PROXY-unset} no=${no_proxy-unset}"';

    it("from the environment sudo was started with (the login session's), every variable, either case", async () => {
      const r = await sh(detachedScript("job-p", probe, "start", dir), {
        env: {
          http_proxy: "http://10.0.0.1:3128",
          HTTPS_PROXY: "http://u:p%40ss@[fd00::1]:3128/",
          no_proxy: "localhost,127.0.0.1,.corp,10.0.0.0/8",
        },
      });
      expect(r).toEqual({
        code: 0,
        stdout:
          "http=http://10.0.0.1:3128 https=http://u:p%40ss@[fd00::1]:3128/ no=localhost,127.0.0.1,.corp,10.0.0.0/8\n",
        stderr: "",
      });
      const said = fs.readFileSync(path.join(dir, "job-p", "proxy"), "utf8");
      expect(said).toMatch(/^with http_proxy=http:\/\/10\.0\.0\.1:3128 \(from the login environment\), /);
      // What a failed fetch reports goes into job messages: the proxy's credentials do not.
      expect(said).toContain("HTTPS_PROXY=http://[credentials]@[fd00::1]:3128/ (from the login environment)");
      expect(said).not.toContain("p%40ss");
    });

    it.each([
      ["a space and a command", "http://p:3128 $(touch PWNED)"],
      ["a quote", "http://p:3128'"],
      ["a backtick", "http://p`id`"],
      ["a newline", "http://p:3128\nx"],
    ])("a value with %s is left out, and said", async (_, bad) => {
      const r = await sh(detachedScript("job-q", probe, "start", dir), { env: { http_proxy: bad } });
      expect(r.stdout).toBe("http=unset https=unset no=unset\n");
      expect(r.stderr).toBe(
        "vm-install: http_proxy from the login environment left out of step job-q: not a URL or host list\n",
      );
      expect(fs.existsSync(path.join(dir, "PWNED"))).toBe(false);
    });

    it("a failed fetch names the proxy it went through; a failure that is not a fetch says nothing more", async () => {
      const env = { http_proxy: "http://10.0.0.1:3128" };
      const fetch = await sh(
        detachedScript(
          "job-f1",
          "echo 'E: Failed to fetch http://deb.debian.org/x  Could not connect to 10.0.0.1:3128' >&2; exit 100",
          "start",
          dir,
        ),
        { env },
      );
      expect(fetch.code).toBe(100);
      expect(fetch.stderr.trimEnd().split("\n").at(-1)).toBe(
        "vm-install: step job-f1 ran with http_proxy=http://10.0.0.1:3128 (from the login environment)",
      );
      const direct = await sh(
        detachedScript(
          "job-f2",
          "echo 'E: Failed to fetch http://x  Could not resolve deb.debian.org' >&2; exit 100",
          "start",
          dir,
        ),
      );
      expect(direct.stderr).toContain("vm-install: step job-f2 ran without a proxy in its environment");
      const other = await sh(
        detachedScript("job-f3", "echo 'E: Unable to locate package nope' >&2; exit 100", "start", dir),
        { env },
      );
      expect(other.stderr).toBe("E: Unable to locate package nope\n");
    });

    it("the note stays in an install's per-package reason, after apt's own errors however many", () => {
      const fetches = Array.from(
        { length: 8 },
        (_, i) => `E: Failed to fetch http://deb.debian.org/debian/pool/p${i}.deb  Could not connect to 10.0.0.1:3128`,
      );
      const note =
        "vm-install: step install-packages-0123456789ab ran with http_proxy=http://10.0.0.1:3128 (from " +
        "/etc/environment)";
      const reason = aptFailureReason({
        stdout: "Reading package lists...\n",
        stderr: `${fetches.join("\n")}\n${note}\n`,
      });
      expect(reason).toBe([...fetches.slice(0, 6), note].join("; "));
    });
  });
});
