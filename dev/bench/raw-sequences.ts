// The hand-made baselines: each installer's work as one plain root shell script with no checks, sent over
// one `ssh` session. The benchmarks compare the installers (and whole deploys) against these, so they do
// the same work: the same packages, the same `apt-get update`, the same service, group and SQL steps.
// Each step prints a marker with a timestamp on stderr, so a bench can set the raw steps' times beside
// the handler's timings_ms (the markers cost one `date` per step).
import type { Sandbox } from "../sandbox/index";
import { sshRun } from "../sandbox/index";

type Step = [name: string, ...lines: string[]];

/** The handlers' own apt-get command lines (handlers/common/apt.ts), output discarded: the same apt work. */
const UPDATE =
  "LC_ALL=C apt-get update -q >/dev/null && mkdir -p /var/lib/apt/periodic" +
  " && touch /var/lib/apt/periodic/update-success-stamp";
/**
 * How dpkg may skip its fsyncs (dev/bench/fast-install.ts measures whether that is worth an opt-in): "safe" is
 * what the handlers do; "unsafe-io" is dpkg's --force-unsafe-io; "eatmydata" runs apt under Debian's
 * eatmydata (an LD_PRELOAD that turns fsync into a no-op for apt, dpkg and the maintainer scripts).
 */
export type Fsync = "safe" | "unsafe-io" | "eatmydata";
const install = (pkgs: string, fsync: Fsync = "safe") =>
  `LC_MESSAGES=C LANGUAGE= ${fsync === "eatmydata" ? "eatmydata " : ""}apt-get install -y -q` +
  " -o DPkg::Lock::Timeout=30 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold" +
  `${fsync === "unsafe-io" ? " -o Dpkg::Options::=--force-unsafe-io" : ""} ${pkgs} >/dev/null`;

const MARK = "@@bench-step";

/** A `set -e` script of named steps, each preceded by a timestamp marker on stderr, and one at the end. */
function script(steps: Step[]): string {
  const lines = ["set -e", "export DEBIAN_FRONTEND=noninteractive"];
  for (const [name, ...body] of steps) lines.push(`echo "${MARK} ${name} $(date +%s%N)" >&2`, ...body);
  lines.push(`echo "${MARK} end $(date +%s%N)" >&2`);
  return `${lines.join("\n")}\n`;
}

/** apt-get update, then install `packages`, with the handlers' options. */
export function rawPackages(packages: string[], opts: { update?: boolean; fsync?: Fsync } = {}): string {
  return script([
    ...(opts.update === false ? [] : [["apt_update", UPDATE] as Step]),
    ["apt_install", install(packages.join(" "), opts.fsync)],
  ]);
}

/**
 * Two installers' apt work on one VM, one after the other: update, install `first`, install `second`.
 * With `overlap`, the second's .debs are fetched into apt's cache while the first one's dpkg runs: their
 * URIs from `apt-get install --print-uris` and curl, neither of which takes apt's locks (`apt-get
 * --download-only` would wait on the lock-frontend the running install holds). The second install then
 * finds them in /var/cache/apt/archives and checks their hashes as usual.
 */
export function rawTwoInstalls(first: string[], second: string[], opts: { overlap: boolean }): string {
  const fetch = [
    `apt-get install -y -qq --print-uris ${second.join(" ")}` +
      ` | sed -n "s/^'\\([^']*\\)' \\([^ ]*\\) .*/\\1 \\2/p" > /tmp/uris`,
    "( while read -r uri file; do curl -fsS -o /var/cache/apt/archives/partial/$file $uri &&" +
      " mv /var/cache/apt/archives/partial/$file /var/cache/apt/archives/$file; done < /tmp/uris ) &",
  ];
  return script([
    ["apt_update", UPDATE],
    ...(opts.overlap ? [["prefetch", ...fetch] as Step] : []),
    ["apt_install", install(first.join(" "))],
    ...(opts.overlap ? [["prefetch_wait", "wait"] as Step] : []),
    ["apt_install_next", install(second.join(" "))],
  ]);
}

/** The distribution's docker.io, started, `user` in the docker group, the daemon asked for its version. */
export function rawDockerDistro(user: string, opts: { update?: boolean } = {}): string {
  return script([
    ...(opts.update === false ? [] : [["apt_update", UPDATE] as Step]),
    ["apt_install", install("docker.io")],
    ["service", "systemctl enable --now docker.service"],
    ["users", `usermod -aG docker ${user}`],
    ["verify", "docker info --format '{{.ServerVersion}}' >/dev/null"],
  ]);
}

export interface RawPostgres {
  db: string;
  user: string;
  /** A test value: it goes into the script as a SQL literal. */
  password: string;
  /** pg_hba entry for this network, with listen_addresses '*'; none when omitted. */
  remoteCidr?: string;
  update?: boolean;
  fsync?: Fsync;
  /**
   * Again on a VM this script already set up: role and database created, the pg_hba line added only where
   * missing, no restart (what a hand-written rerun does, and what the handler's rerun does: nothing).
   */
  rerun?: boolean;
}

const hba = (o: RawPostgres) => `host ${o.db} ${o.user} ${o.remoteCidr} scram-sha-256`;

/** Debian 12's PostgreSQL 15: role, database, optional remote access, restart, a TCP login. Prints 1. */
export function rawPostgres(o: RawPostgres): string {
  const sqlPw = o.password.replace(/'/g, "''");
  const pgpass = `127.0.0.1:5432:${o.db}:${o.user}:${o.password.replace(/\\/g, "\\\\").replace(/:/g, "\\:")}`;
  return script([
    ...(o.update === false ? [] : [["apt_update", UPDATE] as Step]),
    ["apt_install", install("postgresql", o.fsync)],
    [
      "role_db",
      "cd /",
      "runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 <<'SQL'",
      ...(o.rerun
        ? [
            `SELECT format('CREATE ROLE %I LOGIN PASSWORD %L', '${o.user}', '${sqlPw}')` +
              ` WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${o.user}') \\gexec`,
            `SELECT format('CREATE DATABASE %I OWNER %I', '${o.db}', '${o.user}')` +
              ` WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '${o.db}') \\gexec`,
          ]
        : [`CREATE ROLE ${o.user} LOGIN PASSWORD '${sqlPw}';`, `CREATE DATABASE ${o.db} OWNER ${o.user};`]),
      "SQL",
    ],
    ...(o.remoteCidr && o.rerun
      ? [
          [
            "config",
            `grep -qxF "${hba(o)}" /etc/postgresql/15/main/pg_hba.conf ||` +
              ` { echo "${hba(o)}" >> /etc/postgresql/15/main/pg_hba.conf; systemctl reload postgresql@15-main; }`,
          ] as Step,
        ]
      : []),
    ...(o.remoteCidr && !o.rerun
      ? [
          [
            "restart",
            "echo \"listen_addresses = '*'\" > /etc/postgresql/15/main/conf.d/90-bench.conf",
            `echo "${hba(o)}" >> /etc/postgresql/15/main/pg_hba.conf`,
            "systemctl restart postgresql@15-main",
          ] as Step,
        ]
      : []),
    [
      "verify",
      `printf '%s\\n' '${pgpass.replace(/'/g, "'\\''")}' > /root/.pgpass && chmod 600 /root/.pgpass`,
      `PGPASSFILE=/root/.pgpass psql -X -w -At -h 127.0.0.1 -U ${o.user} -d ${o.db} -c 'SELECT 1'`,
    ],
  ]);
}

/** Milliseconds per step, from the markers a script printed on stderr. */
function stepTimes(stderr: string): Record<string, number> {
  const marks = [...stderr.matchAll(new RegExp(`^${MARK} (\\S+) (\\d+)$`, "gm"))].map((m) => ({
    name: m[1],
    ns: BigInt(m[2]),
  }));
  const out: Record<string, number> = {};
  for (let i = 0; i + 1 < marks.length; i++) out[marks[i].name] = Number((marks[i + 1].ns - marks[i].ns) / 1_000_000n);
  return out;
}

export interface RawTiming {
  /** Wall time of the `ssh` process, spawn to exit. */
  ms: number;
  /** Each step's time on the VM; `outside` is the rest (ssh process, connect, auth, sudo, exit). */
  steps: Record<string, number>;
}

/** Runs `script` as root over one ssh session; its wall time and step times. Throws with stderr when it fails. */
export async function timeRawSteps(sb: Sandbox, script: string, what: string): Promise<RawTiming> {
  const r = await sshRun(sb, "sudo -n sh -s", { stdin: script });
  if (r.code !== 0) throw new Error(`raw ${what} failed on ${sb.name}: exit ${r.code}\n${r.stderr.slice(-1500)}`);
  const steps = stepTimes(r.stderr);
  const inside = Object.values(steps).reduce((a, b) => a + b, 0);
  return { ms: r.ms, steps: { ...steps, outside: Math.round(r.ms - inside) } };
}

/** Runs `script` as root over one ssh session; its wall time. Throws with stderr when it fails. */
export async function timeRawScript(sb: Sandbox, script: string, what: string): Promise<number> {
  return (await timeRawSteps(sb, script, what)).ms;
}
