// install-postgres reads a running cluster's grants, state and listeners inside the kit's first look, as root
// through `sudo -n`, once per cluster pg_lsclusters lists (issue 30: a rerun in one exec). The cluster lines
// are the postgres user's to write: a name or port that is not one postgresql-common makes reaches no
// command, and an answer the job cannot match to the chosen cluster, whole, is not used: the look is made
// on its own, as before.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { serverLook, serverLooksProbe } from "../../handlers/install-postgres/server-look";
import { installedVm, pgJob } from "./support/postgres-jobs";
import type { PostgresVm } from "./support/postgres-vm";

const EVENT = { db_name: "myapp", db_user: "app_user", db_password: "correct horse 42" };

/** The script sudo runs, unquoted from the probe's command. */
function sudoScript(): string {
  const { command } = serverLooksProbe(EVENT);
  const prefix = "timeout -k 2 20 sudo -n sh -c ";
  expect(command.startsWith(prefix)).toBe(true);
  return command.slice(prefix.length).slice(1, -1).replace(/'\\''/g, "'");
}

/** Runs the script with stand-ins for pg_lsclusters, systemctl, psql, ss and runuser; its output and the units asked. */
function runWithFakes(clusters: string): { out: string; units: string[]; dir: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "server-looks-"));
  const bin = path.join(dir, "bin");
  fs.mkdirSync(bin);
  fs.writeFileSync(path.join(dir, "clusters"), clusters);
  const fake = (name: string, body: string) =>
    fs.writeFileSync(path.join(bin, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  fake("pg_lsclusters", `cat ${dir}/clusters`);
  fake("systemctl", `echo "$*" >> ${dir}/units; case "$*" in *down*) exit 3 ;; *show*) echo 812 ;; esac`);
  fake("psql", 'cat >/dev/null; echo "{\\"port\\": $VMI_PORT}"');
  fake("ss", "exit 0");
  fake("runuser", `echo "$2 $4" >> ${dir}/runuser; shift 3; exec "$@"`);
  fake("id", "echo 0");
  const out = execFileSync("sh", ["-c", sudoScript()], {
    env: { PATH: `${bin}:/usr/bin:/bin`, HOME: dir },
    encoding: "utf8",
  });
  const units = fs.existsSync(`${dir}/units`) ? fs.readFileSync(`${dir}/units`, "utf8").trim().split("\n") : [];
  return { out, units, dir };
}

const line = (v: string, n: string, p: string) =>
  `${v} ${n} ${p} online postgres /var/lib/postgresql/${v}/x /var/log/x.log\n`;

describe("the first look's server looks (the script sudo runs)", () => {
  it("one line per running cluster postgresql-common could make, its look framed; hostile lines reach no command", () => {
    const pwned = path.join(os.tmpdir(), `server-looks-pwned-${process.pid}`);
    const hostile = [
      ["15", `x$(touch${"${IFS}"}${pwned})`, "5433"],
      ["15", "x;touch", "5434"],
      ["15", "x`id`", "5435"],
      ["15", "..", "5436"],
      ["15", "main", "54x"],
      ["15", "main", "5432;id"],
      ["1e", "main", "5437"],
      ["15$(id)", "main", "5438"],
      ["99.9", "main", "5439"],
    ];
    const clusters =
      line("15", "main", "5432") +
      hostile.map(([v, n, p]) => line(v, n, p)).join("") +
      line("16", "down", "5440") +
      line("9.6", "a-b.c_D", "5441");
    const { out, units, dir } = runWithFakes(clusters);
    expect(fs.existsSync(pwned)).toBe(false);
    // The postgres user's files are read with its rights: pg_lsclusters and psql run as postgres.
    expect(fs.readFileSync(path.join(dir, "runuser"), "utf8")).toMatch(/^postgres pg_lsclusters\n(postgres sh\n){2}$/);
    const keys = out
      .trimEnd()
      .split("\n")
      .map((l) => l.split(" ")[0]);
    expect(keys).toEqual(["15/main:5432", "9.6/a-b.c_D:5441"]);
    // systemd was asked about no unit named from a refused line.
    expect(units.filter((u) => u.startsWith("is-active"))).toEqual([
      "is-active -q postgresql@15-main",
      "is-active -q postgresql@16-down",
      "is-active -q postgresql@9.6-a-b.c_D",
    ]);
    const look = serverLook(EVENT);
    const [, payload] = out.split("\n")[0].split(" ");
    const facts = look.parse(Buffer.from(payload, "base64").toString("utf8"));
    expect(facts.get("state").text).toBe('{"port": 5432}\n');
    expect(facts.get("main_pid").text).toBe("812\n");
  });

  it("no pg_lsclusters (no PostgreSQL yet): nothing, and exit 0", () => {
    const script = sudoScript();
    const out = execFileSync("/bin/sh", ["-c", script], { env: { PATH: "/nonexistent" }, encoding: "utf8" });
    expect(out).toBe("");
  });
});

/** The commands one job sends, and its result. */
async function job(vm: PostgresVm) {
  const before = vm.commands.length;
  const result = await pgJob(vm, EVENT);
  return { result, sent: vm.commands.slice(before).map((c) => c.command) };
}

describe("install-postgres: a rerun reads the server in the first look", () => {
  it("one exec when sudo answers; the same result from the look on its own when it does not", async () => {
    const vm = await installedVm(EVENT);
    const folded = await job(vm);
    expect(folded.sent).toHaveLength(1);
    vm.serverLooksAnswer = () => ({ stdout: "", code: 1 });
    const alone = await job(vm);
    expect(alone.sent).toHaveLength(2);
    const { timings_ms: _a, ...aloneResult } = alone.result as unknown as Record<string, unknown>;
    const { timings_ms: _f, ...foldedResult } = folded.result as unknown as Record<string, unknown>;
    expect(aloneResult).toEqual(foldedResult);
    expect(alone.result).toMatchObject({ status: "ok", changed: false });
  });

  const unusable: [string, (real: { stdout: string; code: number }) => { stdout: string; code: number }][] = [
    ["sudo asked for a password (exit 1)", () => ({ stdout: "", code: 1 })],
    ["cut short by its 20 s (timeout's 124), the line whole", (r) => ({ ...r, code: 124 })],
    ["only another cluster's line", (r) => ({ ...r, stdout: r.stdout.replace("14/main:5432", "14/other:5433") })],
    ["the cluster's line on another port", (r) => ({ ...r, stdout: r.stdout.replace(":5432 ", ":5433 ") })],
    ["the cluster's line twice", (r) => ({ ...r, stdout: r.stdout + r.stdout })],
    [
      "a payload that is not the look's frames",
      (r) => ({ ...r, stdout: `14/main:5432 ${Buffer.from("grants x\n").toString("base64")}\n` }),
    ],
    [
      "a payload missing its last frame",
      (r) => {
        const framed = Buffer.from(r.stdout.split(" ")[1], "base64")
          .toString("utf8")
          .split("\n")
          .slice(0, -2)
          .join("\n");
        return { ...r, stdout: `14/main:5432 ${Buffer.from(`${framed}\n`).toString("base64")}\n` };
      },
    ],
  ];
  it.each(unusable)("%s: not used; the look is made on its own", async (_what, answer) => {
    const vm = await installedVm(EVENT);
    vm.serverLooksAnswer = answer;
    const { result, sent } = await job(vm);
    expect(result).toMatchObject({ status: "ok", changed: false });
    expect(sent).toHaveLength(2);
    expect(sent[1]).toContain("printf '%s ' grants;");
  });

  it("a squatter seen in the first look fails the job naming its pid; no channel is opened", async () => {
    const vm = await installedVm(EVENT);
    const channels = vm.channels.length;
    vm.serverLooksAnswer = (r) => {
      const framed = Buffer.from(r.stdout.split(" ")[1], "base64").toString("utf8");
      const ss = 'LISTEN 0 5 127.0.0.1:5432 0.0.0.0:* users:(("python3",pid=4321,fd=3))\n';
      const forged = framed.replace(/^listeners .*$/m, `listeners ${Buffer.from(`${ss}\n0`).toString("base64")}`);
      return { ...r, stdout: `14/main:5432 ${Buffer.from(forged).toString("base64")}\n` };
    };
    await expect(pgJob(vm, EVENT)).rejects.toThrow(/127\.0\.0\.1:5432 is not held by the cluster's server: pid 4321/);
    expect(vm.channels.length).toBe(channels);
  });
});
