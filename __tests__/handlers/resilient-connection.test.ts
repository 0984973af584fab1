// The connection a handler works through (common/resilient-connection.ts): the job's time budget cuts
// every command's limit and running out is a timeout naming the step; a detached step whose connection
// drops is followed again on a new connection, never started twice.

import type { Connection } from "../../handlers/common/exec";
import { CommandError, type RunOptions, type RunResult } from "../../handlers/common/exec";
import { JobTimeoutError, ResilientConnection } from "../../handlers/common/resilient-connection";

class FakeConnection implements Connection {
  readonly target = "ubuntu@192.0.2.10:22";
  readonly hostKeySha256 = `SHA256:${"A".repeat(43)}`;
  readonly calls: { command: string; opts: RunOptions }[] = [];
  lost = false;
  constructor(
    private readonly answer: (command: string, opts: RunOptions) => Promise<RunResult> = async () => ({
      code: 0,
      stdout: "",
      stderr: "",
      durationMs: 0,
    }),
  ) {}
  run(command: string, opts: RunOptions = {}): Promise<RunResult> {
    this.calls.push({ command, opts });
    return this.answer(command, opts);
  }
  async close(): Promise<void> {}
}

const lostError = () =>
  new CommandError(
    "apt-get install gcc on ubuntu@192.0.2.10:22: the SSH connection was lost (connection closed)",
    "x",
    null,
    "",
    "",
    1,
  );

/** A budget that never runs out in these tests. */
const BUDGET = { started: 0, budgetSec: 3600, now: () => 0 };

describe("ResilientConnection", () => {
  it("a read lost with the session is read again once on a new one; a change lost with it is never repeated", async () => {
    const first = new FakeConnection(async () => {
      first.lost = true;
      throw lostError();
    });
    const second = new FakeConnection(async () => ({ code: 0, stdout: "ok\n", stderr: "", durationMs: 0 }));
    const rc = new ResilientConnection(first, async () => second, {
      job: "install-packages",
      budget: BUDGET,
      detach: false,
    });
    expect((await rc.run("cat /etc/os-release", { label: "reading /etc/os-release" })).stdout).toBe("ok\n");
    expect([first.calls.length, second.calls.length, rc.reconnects]).toEqual([1, 1, 1]);

    const third = new FakeConnection(async () => {
      third.lost = true;
      throw lostError();
    });
    const never = new FakeConnection();
    const changing = new ResilientConnection(third, async () => never, {
      job: "install-packages",
      budget: BUDGET,
      detach: false,
    });
    await expect(changing.run("rm -f /etc/apt/x", { mutates: true })).rejects.toThrow(/connection was lost/);
    expect(never.calls).toEqual([]);

    // Lost again on the new session: the second loss is the job's error (no loop of reconnects).
    const a = new FakeConnection(async () => {
      a.lost = true;
      throw lostError();
    });
    const b = new FakeConnection(async () => {
      b.lost = true;
      throw lostError();
    });
    const twice = new ResilientConnection(a, async () => b, { job: "install-packages", budget: BUDGET, detach: false });
    await expect(twice.run("cat /etc/os-release")).rejects.toThrow(/connection was lost/);
    expect([a.calls.length, b.calls.length]).toEqual([1, 1]);
  });

  it("cuts each command's limit to what is left of the job's budget", async () => {
    let t = 0;
    const conn = new FakeConnection();
    const rc = new ResilientConnection(conn, async () => conn, {
      job: "install-packages",
      budget: { started: 0, budgetSec: 100, now: () => t },
      detach: false,
    });
    t = 95_000;
    await rc.run("apt-cache policy jq", { timeoutMs: 60_000 });
    expect(conn.calls[0].opts.timeoutMs).toBe(5_000);
    await rc.run("true", { timeoutMs: 1_000 });
    expect(conn.calls[1].opts.timeoutMs).toBe(1_000);
  });

  it("running out is a timeout naming the step and the budget, before or during the command", async () => {
    let t = 0;
    const conn = new FakeConnection(async () => {
      throw new CommandError(
        "apt-get install gcc on x: timed out after 5.0s; the channel was closed",
        "x",
        null,
        "",
        "",
        5000,
      );
    });
    const rc = new ResilientConnection(conn, async () => conn, {
      job: "install-packages",
      budget: { started: 0, budgetSec: 100, now: () => t },
      detach: false,
    });
    t = 95_000;
    const during = await rc
      .run("apt-get install gcc", { label: "apt-get install gcc", timeoutMs: 600_000 })
      .catch((e) => e);
    expect(during).toBeInstanceOf(JobTimeoutError);
    expect(during.message).toMatch(
      /^timed out during "apt-get install gcc": the job's time budget \(time_budget_sec 100s/,
    );
    t = 101_000;
    const before = await rc.run("dpkg-query -W jq", { label: "dpkg-query" }).catch((e) => e);
    expect(before).toBeInstanceOf(JobTimeoutError);
    expect(conn.calls).toHaveLength(1);
  });

  it("a detached step whose connection drops: reconnects and follows the same step, never starts it again", async () => {
    const first = new FakeConnection(async () => {
      first.lost = true;
      throw lostError();
    });
    const second = new FakeConnection(async () => ({
      code: 0,
      stdout: "Setting up gcc ...\n",
      stderr: "",
      durationMs: 1,
    }));
    let reconnects = 0;
    const rc = new ResilientConnection(
      first,
      async () => {
        reconnects++;
        return second;
      },
      { job: "install-packages", budget: { started: 0, now: () => 0 }, detach: true },
    );
    const r = await rc.runDetached("apt-get install -y gcc", {
      label: "apt-get install gcc",
      env: { DEBIAN_FRONTEND: "noninteractive" },
    });
    expect(r.stdout).toBe("Setting up gcc ...\n");
    expect(reconnects).toBe(1);
    expect(first.calls[0].command).toContain("systemd-run");
    expect(first.calls[0].opts.sudo).toBe(true);
    expect(second.calls).toHaveLength(1);
    expect(second.calls[0].command).not.toContain("systemd-run");
    expect(second.calls[0].command).toContain("is not on the VM");
    // The step's env goes into its script, not onto the follower's command line.
    expect(first.calls[0].opts.env).toBeUndefined();
    expect(first.calls[0].command).toContain("export DEBIAN_FRONTEND=noninteractive");
  });

  it("without detach (a scripted or non-SSH transport) a long step is a plain sudo command", async () => {
    const conn = new FakeConnection();
    const rc = new ResilientConnection(conn, async () => conn, {
      job: "x",
      budget: { started: 0, now: () => 0 },
      detach: false,
    });
    await rc.runDetached("apt-get update -q", { env: { LC_ALL: "C" } });
    expect(conn.calls[0]).toMatchObject({ command: "apt-get update -q", opts: { env: { LC_ALL: "C" }, sudo: true } });
  });
});
