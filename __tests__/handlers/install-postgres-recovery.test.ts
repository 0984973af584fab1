// install-postgres when a setting stops the server (handlers/install-postgres/recovery.ts): a restart
// that does not come back is rolled back to the previous drop-in and the cluster restarted on it, the
// error names the value and the server's own words; a cluster found stopped by our drop-in is started
// with the wanted value.
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Progress } from "../../handlers/common/progress";
import type { Cluster } from "../../handlers/install-postgres/pg";
import {
  clusterDropIn,
  failureLook,
  restartOrRollBack,
  startFixingDropIn,
} from "../../handlers/install-postgres/recovery";
import type { Run } from "../../handlers/install-postgres/run";
import { clusterServiceCommand } from "../../handlers/install-postgres/server";
import { SecretScrubber } from "../../lib/shared/secrets";
import { answerLookWith } from "./support/look-answers";
import { renameOf } from "./support/remote-writes";
import { ScriptedRemote, type Step } from "./support/scripted-remote";

const CLUSTER: Cluster = {
  major: "15",
  name: "main",
  port: 5432,
  status: "down",
  owner: "postgres",
  dataDir: "/var/lib/postgresql/15/main",
  logFile: "/var/log/postgresql/postgresql-15-main.log",
};
const DROPIN = "/etc/postgresql/15/main/conf.d/90-vm-install.conf";
const LOG =
  '2026-12-03 08:00:00.000 UTC [123] LOG:  could not bind IPv4 address "192.0.2.77": Cannot assign requested ' +
  "address\n" +
  '2026-12-03 08:00:00.000 UTC [123] WARNING:  could not create listen socket for "192.0.2.77"\n' +
  "2026-12-03 08:00:00.000 UTC [123] FATAL:  could not create any TCP/IP sockets\n";

/**
 * The look at a cluster that did not start (recovery.ts failureLook), answered: its log's tail, its journal
 * (empty), and our drop-in when `dropIn` is given (the start's retry reads it too).
 */
function failureStep(answers: { dropIn?: string; log?: string }, match = "journalctl -u postgresql@15-main"): Step {
  const look = failureLook(CLUSTER, answers.dropIn === undefined ? undefined : DROPIN);
  const stdout = answerLookWith(look.script, (c) => {
    if (c.startsWith("cat ")) return { stdout: answers.dropIn ?? "", code: 0 };
    return { stdout: c.startsWith("tail ") ? (answers.log ?? "") : "", code: 0 };
  });
  return { match, sudo: true, stdout, check: (cmd) => expect(cmd).toBe(look.script) };
}

function runOn(steps: Step[], listen = "localhost"): { run: Run; remote: ScriptedRemote; lines: string[] } {
  const remote = new ScriptedRemote(steps);
  const lines: string[] = [];
  const run = {
    event: { listen_addresses: listen },
    remote,
    progress: new Progress("install-postgres", { write: (l) => lines.push(l) }),
    secrets: new SecretScrubber(),
    changes: [],
    warnings: [],
    revoked: [],
  } as unknown as Run;
  return { run, remote, lines };
}

describe("install-postgres: a listen_addresses the server cannot bind", () => {
  it(
    "restart fails: the drop-in is put back, the cluster restarted on it, the error names the value and the " +
      "server's error",
    async () => {
      const previous = "# Written by vm-install\nlisten_addresses = 'localhost'\n";
      const { run, remote } = runOn([
        {
          match: "(systemctl restart postgresql@15-main & p=$!",
          sudo: true,
          code: 1,
          stderr: "Job for postgresql@15-main.service failed.\n",
        },
        failureStep({ log: LOG }, "tail -n 40 /var/log/postgresql/postgresql-15-main.log"),
        { match: renameOf(DROPIN), check: (_c, o) => expect([o.user, o.stdin]).toEqual(["postgres", previous]) },
        { match: "(systemctl start postgresql@15-main & p=$!", sudo: true },
      ]);
      const err = await restartOrRollBack(run, CLUSTER, DROPIN, "192.0.2.77", {
        text: previous,
        listen: "localhost",
      }).catch((e) => e);
      expect(remote.done).toBe(true);
      expect(err.message).toContain("listen_addresses '192.0.2.77' stopped PostgreSQL 15/main");
      expect(err.message).toContain('could not bind IPv4 address "192.0.2.77": Cannot assign requested address');
      expect(err.message).toContain("FATAL: could not create any TCP/IP sockets");
      expect(err.message).toContain(
        `Rolled back: ${DROPIN} put back as it was and the cluster restarted on its previous settings ` +
          "(listen_addresses 'localhost'), serving again",
      );
    },
  );

  it(
    "a server that comes up without one of the addresses (it only logs that): rolled back as well, naming what " +
      "it logged",
    async () => {
      const { run, remote } = runOn([
        {
          match: "systemctl stop postgresql@15-main; wait $p; echo",
          sudo: true,
          stdout: LOG.split("\n").slice(0, 2).join("\n"),
        },
        { match: `rm -f ${DROPIN}` },
        { match: "systemctl restart postgresql@15-main", sudo: true },
      ]);
      const err = await restartOrRollBack(run, CLUSTER, DROPIN, "localhost,192.0.2.77", {
        text: null,
        listen: "localhost",
      }).catch((e) => e);
      expect(remote.done).toBe(true);
      expect(err.message).toContain(
        "listen_addresses 'localhost,192.0.2.77' could not be bound by PostgreSQL 15/main (it started without " +
          "those addresses)",
      );
      expect(err.message).toContain('could not bind IPv4 address "192.0.2.77": Cannot assign requested address');
      expect(err.message).toContain("Rolled back");
    },
  );

  it("no drop-in before: it is removed again", async () => {
    const { run, remote } = runOn([
      { match: "systemctl restart ", code: 1 },
      failureStep({ log: LOG }),
      { match: `rm -f ${DROPIN}`, check: (_c, o) => expect(o.user).toBe("postgres") },
      { match: "systemctl start ", sudo: true },
    ]);
    const err = await restartOrRollBack(run, CLUSTER, DROPIN, "192.0.2.77", { text: null, listen: "localhost" }).catch(
      (e) => e,
    );
    expect(remote.done).toBe(true);
    expect(err.message).toContain(`Rolled back: ${DROPIN} removed`);
  });

  it("a restart that comes back: nothing else runs", async () => {
    const { run, remote } = runOn([{ match: "systemctl restart postgresql@15-main", sudo: true }]);
    await restartOrRollBack(run, CLUSTER, DROPIN, "*", { text: null, listen: "localhost" });
    expect(remote.done).toBe(true);
  });

  it("a cluster stopped by our drop-in's value starts with the wanted one; changes says so", async () => {
    expect(clusterDropIn(CLUSTER)).toBe(DROPIN);
    const { run, remote } = runOn(
      [
        { match: "(systemctl start postgresql@15-main &", sudo: true, code: 1, stderr: "Job failed.\n" },
        failureStep({ dropIn: "listen_addresses = '192.0.2.77'\n", log: LOG }),
        { match: renameOf(DROPIN), check: (_c, o) => expect(o.stdin).toContain("listen_addresses = 'localhost'") },
        { match: "(systemctl start postgresql@15-main &", sudo: true },
        { match: /^systemctl is-active postgresql@15-main$/, stdout: "active\n" },
      ],
      "localhost",
    );
    // The line for changes (the run puts it there, before "cluster ... started").
    const line = await startFixingDropIn(run, CLUSTER);
    expect(remote.done).toBe(true);
    expect(line).toMatch(
      /^postgresql@15-main would not start with listen_addresses '192\.0\.2\.77' in .*rewritten to 'localhost', started$/,
    );
  });

  it("rewrites only the listen_addresses line: the drop-in's parameters stay", async () => {
    const text =
      "# Written by vm-install\nlisten_addresses = '192.0.2.77'\nwork_mem = '64MB'\nmax_connections = '150'\n";
    const { run, remote } = runOn(
      [
        { match: "(systemctl start postgresql@15-main &", sudo: true, code: 1, stderr: "Job failed.\n" },
        failureStep({ dropIn: text, log: LOG }),
        {
          match: renameOf(DROPIN),
          check: (_c, o) => expect(o.stdin).toBe(text.replace("'192.0.2.77'", "'localhost'")),
        },
        { match: "(systemctl start postgresql@15-main &", sudo: true },
        { match: /^systemctl is-active postgresql@15-main$/, stdout: "active\n" },
      ],
      "localhost",
    );
    await startFixingDropIn(run, CLUSTER);
    expect(remote.done).toBe(true);
  });

  it("a cluster that does not start for another reason: the start's own error stands, nothing rewritten", async () => {
    const { run, remote } = runOn([
      { match: "(systemctl start ", code: 1, stderr: "Job failed.\n" },
      failureStep({ dropIn: "listen_addresses = 'localhost'\n" }),
    ]);
    await expect(startFixingDropIn(run, CLUSTER)).rejects.toThrow(/see `journalctl -u postgresql@15-main`/);
    expect(remote.done).toBe(true);
  });
});

describe("a cluster's start that hangs", () => {
  // A stand-in systemctl on PATH: "restart" waits like systemd waiting for a pid file that never comes
  // (the unit activating, no start command left), until "stop" ends that wait.
  const FAKE = `#!/bin/sh
d=$(dirname "$0")
case "$1" in
  restart|start) echo $$ > "$d/waiting"; echo "$1" >> "$d/log"
    while [ ! -e "$d/stopped" ]; do sleep 0.05; done; exit 1 ;;
  is-active) [ -e "$d/stopped" ] && echo failed || echo "$(cat "$d/state")" ;;
  show) echo 0 ;;
  stop) echo stop >> "$d/log"; touch "$d/stopped" ;;
esac
`;

  function runWith(state: string, command: string): Promise<{ code: number; stderr: string; log: string }> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vmi-systemctl-"));
    fs.writeFileSync(path.join(dir, "systemctl"), FAKE, { mode: 0o755 });
    fs.writeFileSync(path.join(dir, "state"), state);
    return new Promise((resolve) => {
      execFile(
        "/bin/sh",
        ["-c", command],
        { env: { PATH: `${dir}:/usr/bin:/bin` }, timeout: 30_000, encoding: "utf8" },
        (err, _out, stderr) => {
          const log = fs.existsSync(path.join(dir, "log")) ? fs.readFileSync(path.join(dir, "log"), "utf8") : "";
          fs.rmSync(dir, { recursive: true, force: true });
          resolve({
            code: err ? Number((err as { code?: number }).code ?? 1) : 0,
            stderr,
            log,
          });
        },
      );
    });
  }

  it(
    "activating with no start command left for 2 s: the unit is stopped and the command fails, instead of " +
      "waiting forever",
    async () => {
      const r = await runWith("activating", clusterServiceCommand("restart", "postgresql@15-main"));
      expect(r.code).toBe(3);
      expect(r.stderr).toContain("postgresql@15-main: the server did not come up");
      // The end came from the command's own watch (exit 3, the unit stopped), not from execFile's 30 s
      // timeout: no wall-clock bound here, which a loaded machine would break.
      expect(r.log).toBe("restart\nstop\n");
    },
  );
});
