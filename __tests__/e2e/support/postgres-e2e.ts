// What the install-postgres end-to-end suites share: the release's cluster, passwords whose quoting shows,
// the host's own psql against the sandbox, the target's logs, SQL as postgres on the target.
import { execFile } from "node:child_process";
import type { Sandbox } from "../../../dev/sandbox/index";
import type { InstallerRun } from "./e2e";
import { FACTS } from "./release";

export const T = 15 * 60_000;
/** The distribution's PostgreSQL major on this run's release ("15" on Debian 12, "17" on Debian 13), and its cluster. */
export const PG = FACTS.pgMajor;
export const CLUSTER = `${PG}/main`;
export const CONF = `/etc/postgresql/${PG}/main`;

/** Each password carries a unique token, so any quoting of it still shows the token. */
export const PW1 = `Pg1tok 'single' "double" $HOME \\back\\\\slash  two  spaces`;
export const PW2 = `Pg2tok it's "new" $(id) \\ \`x\` end `;
export const PW3 = `Pg3tok пароль «ü» 'q' \\ $x`;
export const TOKENS = ["Pg1tok", "Pg2tok", "Pg3tok"];

/** shop and shop_app, listening everywhere, one remote network allowed: a pg_hba line of vm-install's to take back. */
export const remoteEvent = (password: string) => ({
  db_name: "shop",
  db_user: "shop_app",
  db_password: password,
  listen_addresses: "*",
  allow_remote: true,
  allowed_cidrs: ["10.200.0.0/16"],
});

/** Nothing the job let out holds a password, and the runner's own last-line scrubbing had nothing to do. */
export function expectNoSecretsOut(run: InstallerRun): void {
  const out = [run.message, ...run.lines].join("\n");
  for (const t of [...TOKENS, PW1, PW2, PW3]) expect(out).not.toContain(t);
  // "[redacted]" alone is the runner's marker: the handler's own is "[redacted:<label>]".
  expect(out).not.toMatch(/\[redacted\](?!:)/);
  expect(out).not.toContain("SCRAM-SHA-256$");
}

/** The host's psql (PostgreSQL 15 client; libpq talks to newer servers too) against the sandbox, the password in this child's env only. */
export function hostPsql(
  sb: Sandbox,
  user: string,
  db: string,
  password: string,
  sql = "SELECT current_user || '|' || host(inet_client_addr())",
  sslmode = "require",
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      "psql",
      ["-X", "-w", "-At", "-h", sb.address, "-p", "5432", "-U", user, "-d", db, "-c", sql],
      {
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          PGPASSWORD: password,
          PGCONNECT_TIMEOUT: "10",
          PGSSLMODE: sslmode,
          LC_ALL: "C",
        },
        timeout: 30_000,
        encoding: "utf8",
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout: stdout.trim(), stderr }),
    );
  });
}

/** Everything the server and the system logged, as root on the target. */
export async function targetLogs(sb: Sandbox): Promise<string> {
  const r = await sb.rootExec(
    "cat /var/log/postgresql/*.log; echo '--- journal'; journalctl --no-pager -o cat 2>/dev/null | tail -n 5000",
    {
      timeoutMs: 60_000,
    },
  );
  return r.stdout;
}

/** SQL as postgres on the target, given on stdin (test set-up only). */
export async function asPostgres(sb: Sandbox, sql: string): Promise<string> {
  const r = await sb.rootExec("cd / && runuser -u postgres -- psql -X -q -At -v ON_ERROR_STOP=1 -f -", {
    input: sql,
    timeoutMs: 60_000,
  });
  if (r.code !== 0) throw new Error(`psql on the target failed: ${r.stderr}`);
  return r.stdout;
}

/** Polls `check` every 100 ms until it holds, for at most 20 s. */
export async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
