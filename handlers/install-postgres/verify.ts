// Proof that it works: the role logs in over TCP with the password, as a client would.

import { parsePsqlJson, shortServerVersion, verifyHost } from "./pg";
import type { Run } from "./run";
import { tcpLogin } from "./server";

/**
 * The login as `event.db_user` to `event.db_name` at the address the server listens on; a refusal
 * throws with psql's reason and a hint.
 */
export async function verifyLogin(
  run: Run,
  port: number,
  listen: string,
  hbaFile: string,
  opts: { reloaded: boolean; resolved: Record<string, string[]> },
): Promise<{ host: string; serverVersion: string }> {
  const { event, remote, progress } = run;
  const { db_name: db, db_user: user } = event;
  const host = verifyHost(listen, opts.resolved);
  const target = { host, port, db, user, password: event.db_password };
  const login = await progress.step(
    `logging in as ${user} to ${db} over TCP (${host}:${port})`,
    async () => {
      const first = await tcpLogin(remote, target);
      // A reload is a signal the postmaster handles a moment later: allow it that moment once.
      if (first.code === 0 || !opts.reloaded) return first;
      await new Promise((res) => setTimeout(res, 1000));
      return tcpLogin(remote, target);
    },
    "verify_login",
  );
  if (login.code !== 0) {
    const why = login.stderr.trim().split("\n").slice(-3).join(" ") || `psql exit ${login.code}`;
    throw new Error(
      `${user} could not log in to ${db} over TCP at ${host}:${port}: ${why} (${loginHint(why, host, port, hbaFile)})`,
    );
  }
  const who = parsePsqlJson<{ user: string; database: string; server_version: string }>(
    login.stdout,
    "the TCP login check",
  );
  if (who.user !== user || who.database !== db)
    throw new Error(`the TCP login check ran as ${who.user} in ${who.database}, not ${user} in ${db}`);
  return { host, serverVersion: shortServerVersion(who.server_version) };
}

/** What to look at when the login check fails, from psql's own words. */
function loginHint(why: string, host: string, port: number, hbaFile: string): string {
  const loopback = host === "127.0.0.1" || host === "::1";
  if (/no pg_hba\.conf entry/.test(why)) {
    return loopback
      ? `pg_hba.conf (${hbaFile}) has no host rule for ${host}: ` +
          "the stock rules for 127.0.0.1/32 and ::1/128 were removed? Put one back"
      : `pg_hba.conf (${hbaFile}) has no host rule for ${host}: ` +
          "add a network covering it to allowed_cidrs (with allow_remote), or add localhost to listen_addresses";
  }
  if (/password authentication failed/.test(why))
    return "the password stored for the role does not match (was it changed while the job ran?)";
  return `is the server listening on ${host}:${port}?`;
}
