// The hand-made baselines: each installer's work as one plain root shell script with no checks, sent over
// one `ssh` session. The benchmarks compare the installers (and whole deploys) against these.
import type { Sandbox } from "../sandbox";
import { sshRun } from "../sandbox";

/** apt-get update, then install `packages`. */
export function rawPackages(packages: string[]): string {
  return ["set -e", "export DEBIAN_FRONTEND=noninteractive", "apt-get update -q >/dev/null", `apt-get install -y -q ${packages.join(" ")} >/dev/null`].join("\n") + "\n";
}

/** The distribution's docker.io, started, `user` in the docker group, the daemon asked for its version. */
export function rawDockerDistro(user: string, opts: { update?: boolean } = {}): string {
  return [
    "set -e",
    "export DEBIAN_FRONTEND=noninteractive",
    ...(opts.update === false ? [] : ["apt-get update -q >/dev/null"]),
    "apt-get install -y -q docker.io >/dev/null",
    "systemctl enable --now docker.service",
    `usermod -aG docker ${user}`,
    "docker info --format '{{.ServerVersion}}' >/dev/null",
  ].join("\n") + "\n";
}

export interface RawPostgres {
  db: string;
  user: string;
  /** A test value: it goes into the script as a SQL literal. */
  password: string;
  /** pg_hba entry for this network, with listen_addresses '*'; none when omitted. */
  remoteCidr?: string;
  update?: boolean;
}

/** Debian 12's PostgreSQL 15: role, database, optional remote access, restart, a TCP login. Prints 1. */
export function rawPostgres(o: RawPostgres): string {
  const sqlPw = o.password.replace(/'/g, "''");
  const pgpass = `127.0.0.1:5432:${o.db}:${o.user}:${o.password.replace(/\\/g, "\\\\").replace(/:/g, "\\:")}`;
  return [
    "set -e",
    "export DEBIAN_FRONTEND=noninteractive",
    ...(o.update === false ? [] : ["apt-get update -q >/dev/null"]),
    "apt-get install -y -q postgresql >/dev/null",
    "cd /",
    "runuser -u postgres -- psql -X -q -v ON_ERROR_STOP=1 <<'SQL'",
    `CREATE ROLE ${o.user} LOGIN PASSWORD '${sqlPw}';`,
    `CREATE DATABASE ${o.db} OWNER ${o.user};`,
    "SQL",
    ...(o.remoteCidr
      ? [
          "echo \"listen_addresses = '*'\" > /etc/postgresql/15/main/conf.d/90-bench.conf",
          `echo "host ${o.db} ${o.user} ${o.remoteCidr} scram-sha-256" >> /etc/postgresql/15/main/pg_hba.conf`,
          "systemctl restart postgresql@15-main",
        ]
      : []),
    `printf '%s\\n' '${pgpass.replace(/'/g, "'\\''")}' > /root/.pgpass && chmod 600 /root/.pgpass`,
    `PGPASSFILE=/root/.pgpass psql -X -w -At -h 127.0.0.1 -U ${o.user} -d ${o.db} -c 'SELECT 1'`,
  ].join("\n") + "\n";
}

/** Runs `script` as root over one ssh session; its wall time. Throws with stderr when it fails. */
export async function timeRawScript(sb: Sandbox, script: string, what: string): Promise<number> {
  const r = await sshRun(sb, "sudo -n sh -s", { stdin: script });
  if (r.code !== 0) throw new Error(`raw ${what} failed on ${sb.name}: exit ${r.code}\n${r.stderr.slice(-1500)}`);
  return r.ms;
}
