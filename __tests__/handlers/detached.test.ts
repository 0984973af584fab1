// The detached-step script (common/detached.ts) run for real by /bin/sh on this machine: without
// systemd here it takes the setsid path, which follows the same files. What matters: the follower gives
// the step's output and exit status as if it had run in the channel, a second start of a live step
// attaches to it instead of running it twice, "follow" never starts anything, and a step killed under
// its follower is reported as such.
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { detachedScript, STEP_DIED, STEP_NOT_STARTED, stepId } from "../../handlers/common/detached";

function sh(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile("/bin/sh", ["-c", script], { encoding: "utf8", timeout: 30_000 }, (err, stdout, stderr) =>
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
    expect(stepId("install-packages", "apt-get install jq")).not.toBe(stepId("install-packages", "apt-get install git"));
    expect(stepId("Install Docker!", "x")).toMatch(/^install-docker--[0-9a-f]{12}$/);
  });

  it("escapes the runner for systemd, which turns $$ into $ and expands $VAR in a unit's command line", () => {
    const script = detachedScript("job-z", "true", "start");
    const unitLine = script.split("\n").find((l) => l.includes("systemd-run --quiet"))!;
    expect(unitLine).toContain(`exec 9> "$$1/lock"`);
    expect(unitLine).toContain(`echo $$$$ > "$$1/pid.tmp"`);
    expect(unitLine).toContain("echo $$? >");
    const setsidLine = script.split("\n").find((l) => l.includes("else setsid"))!;
    expect(setsidLine).toContain(`echo $$ > "$1/pid.tmp"`);
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
    const r = await sh(detachedScript("job-g", `sleep 30 > /dev/null 2>&1 & echo $! > ${bg}; echo started`, "start", dir));
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
});
