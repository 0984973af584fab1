import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  CommandError,
  ExecRemote,
  type RawExec,
  type RawExecResult,
  tail,
  wrapCommand,
} from "../../handlers/common/exec";
import { SecretScrubber } from "../../lib/shared/secrets";

/** A RawExec that records the line sent and answers with `result`. */
function recorder(result: Partial<RawExecResult> | Error) {
  const sent: { line: string; stdin?: Buffer; timeoutMs: number }[] = [];
  const exec: RawExec = async (line, opts) => {
    sent.push({ line, ...opts });
    if (result instanceof Error) throw result;
    return { code: 0, stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), ...result };
  };
  return { exec, sent };
}

const remote = (exec: RawExec, secrets = new SecretScrubber()) =>
  new ExecRemote(exec, { target: "ubuntu@192.0.2.10:22", user: "ubuntu", secrets });

describe("wrapCommand", () => {
  it("sends a privileged command to one sudo -n sh -c, quoted as a whole", () => {
    expect(wrapCommand("apt-get update && touch /x", { sudo: true })).toBe(
      "sudo -n sh -c 'apt-get update && touch /x'",
    );
    expect(wrapCommand("echo 'hi'", { sudo: true })).toBe("sudo -n sh -c 'echo '\\''hi'\\'''");
  });

  it("exports env variables inside the sudo shell (sudo would reset them outside)", () => {
    expect(wrapCommand("apt-get install -y git", { sudo: true, env: { DEBIAN_FRONTEND: "noninteractive" } })).toBe(
      "sudo -n sh -c 'export DEBIAN_FRONTEND=noninteractive; apt-get install -y git'",
    );
    expect(wrapCommand("locale", { env: { LANGUAGE: "" } })).toBe("export LANGUAGE=''; locale");
  });

  it("runs as another user through sudo -u, checking the name", () => {
    expect(wrapCommand("psql -f -", { user: "postgres" })).toBe("sudo -n -u postgres sh -c 'psql -f -'");
    expect(() => wrapCommand("x", { user: "root; id" })).toThrow(/not a Unix user name/);
  });

  it("leaves an unprivileged command as it is", () => {
    expect(wrapCommand("cat /etc/os-release")).toBe("cat /etc/os-release");
  });

  it("rejects a bad variable name instead of building a broken line", () => {
    expect(() => wrapCommand("x", { env: { "A;B": "1" } })).toThrow(/not a variable name/);
  });

  it("runs every part of a compound command privileged (the sudo A && B gotcha), in a real shell", () => {
    // A fake sudo that marks what it runs as privileged.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fake-sudo-"));
    fs.writeFileSync(path.join(dir, "sudo"), '#!/bin/sh\n[ "$1" = "-n" ] && shift\nPRIV=yes exec "$@"\n', {
      mode: 0o755,
    });
    const run = (line: string) =>
      execFileSync("sh", ["-c", line], { env: { PATH: `${dir}:${process.env.PATH}` }, encoding: "utf8" });
    const compound = 'echo "A=$PRIV" && echo "B=$PRIV"';
    expect(run(`sudo sh -c 'echo "A=$PRIV"' && echo "B=$PRIV"`)).toBe("A=yes\nB=\n"); // the trap
    expect(run(wrapCommand(compound, { sudo: true }))).toBe("A=yes\nB=yes\n");
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe("ExecRemote", () => {
  it("returns code, output and duration, and sends stdin as bytes", async () => {
    const { exec, sent } = recorder({ code: 0, stdout: Buffer.from("out"), stderr: Buffer.from("err") });
    const result = await remote(exec).run("psql -f -", { stdin: "SELECT 1;", sudo: true, timeoutMs: 5000 });
    expect(result).toMatchObject({ code: 0, stdout: "out", stderr: "err" });
    expect(typeof result.durationMs).toBe("number");
    expect(sent[0].line).toBe("sudo -n sh -c 'psql -f -'");
    expect(sent[0].stdin?.toString()).toBe("SELECT 1;");
    expect(sent[0].timeoutMs).toBe(5000);
  });

  it("throws CommandError on a non-zero exit, naming the command, the VM, the exit and stderr", async () => {
    const { exec } = recorder({ code: 100, stderr: Buffer.from("E: Unable to locate package nope\n") });
    const err = await remote(exec)
      .run("apt-get install -y nope", { sudo: true })
      .catch((e) => e);
    expect(err).toBeInstanceOf(CommandError);
    expect(err.message).toBe(
      "apt-get install -y nope failed on ubuntu@192.0.2.10:22 (exit 100):\nE: Unable to locate package nope",
    );
    expect(err.code).toBe(100);
  });

  it("returns a non-zero exit with check: false", async () => {
    const { exec } = recorder({ code: 1, stdout: Buffer.from("partial") });
    await expect(remote(exec).run("dpkg-query -W x", { check: false })).resolves.toMatchObject({
      code: 1,
      stdout: "partial",
    });
  });

  it("treats an exit without a status as failure, even with check: false", async () => {
    const { exec } = recorder({ code: null });
    await expect(remote(exec).run("sleep 100", { check: false })).rejects.toThrow(
      /did not finish: the SSH channel closed without an exit status/,
    );
    const killed = recorder({ code: null, signal: "KILL" });
    await expect(remote(killed.exec).run("sleep 100", { label: "sleeping" })).rejects.toThrow(
      /sleeping on ubuntu@192.0.2.10:22 did not finish: it was killed by signal KILL/,
    );
  });

  it("turns a transport failure (lost connection, timeout) into a CommandError with no exit code", async () => {
    const { exec } = recorder(new Error("the SSH connection was lost (Keepalive timeout)"));
    const err = await remote(exec)
      .run("apt-get update", { label: "apt-get update" })
      .catch((e) => e);
    expect(err).toBeInstanceOf(CommandError);
    expect(err.code).toBeNull();
    expect(err.message).toBe("apt-get update on ubuntu@192.0.2.10:22: the SSH connection was lost (Keepalive timeout)");
  });

  it("scrubs secrets from output and from error text", async () => {
    const secrets = new SecretScrubber();
    secrets.add("Sup3r-Secret!", "db_password");
    const ok = recorder({ stdout: Buffer.from("ALTER ROLE app PASSWORD 'Sup3r-Secret!'") });
    expect((await remote(ok.exec, secrets).run("psql")).stdout).toBe(
      "ALTER ROLE app PASSWORD '[redacted:db_password]'",
    );
    const bad = recorder({ code: 1, stderr: Buffer.from("ERROR near Sup3r-Secret!") });
    const err = await remote(bad.exec, secrets)
      .run("psql")
      .catch((e) => e);
    expect(err.message).not.toContain("Sup3r-Secret!");
    expect(err.stderr).toBe("ERROR near [redacted:db_password]");
  });

  it("explains a sudo that wants a password", async () => {
    const { exec } = recorder({ code: 1, stderr: Buffer.from("sudo: a password is required\n") });
    await expect(remote(exec).run("true", { sudo: true })).rejects.toThrow(
      /ubuntu needs passwordless sudo on the VM: add "ubuntu ALL=\(ALL\) NOPASSWD:ALL"/,
    );
  });
});

describe("tail", () => {
  it("keeps the last lines and marks the cut", () => {
    expect(tail("a\nb\n\nc\nd\n", 2)).toBe("...\nc\nd");
    expect(tail("a\n", 2)).toBe("a");
  });
});
