// Proof that it works: the role logs in over TCP with the password, as a client would, to a peer that
// proves itself twice: the listener is the cluster's postmaster (listener.ts, before anything is sent),
// and the server shows it holds the role's SCRAM verifier (pg-wire.ts). The job speaks the protocol
// itself through an SSH channel, so nothing of the password is ever written on the VM.

import { TunnelRefused } from "../common/exec";
import { lookAtListener, proveListener } from "./listener";
import { shortServerVersion, verifyHost } from "./pg";
import { ServerRefused, scramLogin, type WireAnswer, type WireLogin } from "./pg-wire";
import type { Run } from "./run";
import { postgresSaslprep } from "./saslprep";
import type { ListenerSeen } from "./server-look";

export interface LoginProof {
  host: string;
  serverVersion: string;
}

/** The login was not tried because the VM's sshd opens no TCP channels; the reason, as a warning. */
export interface LoginSkipped {
  host: string;
  warning: string;
}

/**
 * The login as `event.db_user` to `event.db_name` at the address the server listens on. Throws, with
 * nothing sent, when another process listens there; a refusal throws with the server's reason and a hint.
 * With TCP forwarding off for the login, nothing is sent and the result says so (LoginSkipped).
 */
export async function verifyLogin(
  run: Run,
  login: { port: number; listen: string; hbaFile: string; unit: string },
  opts: { reloaded: boolean; resolved: Record<string, string[]>; listener?: ListenerSeen },
): Promise<LoginProof | LoginSkipped> {
  const { event, remote, progress } = run;
  const { db_name: db, db_user: user } = event;
  const { port, unit, hbaFile } = login;
  const host = verifyHost(login.listen, opts.resolved);
  const where = `${host.includes(":") ? `[${host}]` : host}:${port}`;
  const tunnel = remote.tunnel?.bind(remote);
  if (!tunnel)
    return { host, warning: `the TCP login check was not run: this connection to the VM opens no TCP channels` };
  // The server look's answer when nothing changed since it was read; else a look now.
  const seen = opts.listener?.port === port && opts.listener.unit === unit ? opts.listener : undefined;
  const target = { host, port, unit };
  const pid = seen
    ? proveListener(seen, target)
    : await progress.step(
        `proving ${where} is ${unit}'s own listener`,
        async () => proveListener(await lookAtListener(remote, port, unit), target),
        "verify_listener",
      );
  const attempt = (tls: WireLogin["tls"]) => () =>
    loginPrepared(event.db_password, async (prepared) =>
      scramLogin(await tunnel(host, port, { timeoutMs: 30_000 }), {
        user,
        database: db,
        prepared,
        tls,
        timeoutMs: 60_000,
      }),
    );
  let answer: WireAnswer;
  try {
    answer = await progress.step(
      `logging in as ${user} to ${db} over TCP (${where}, SCRAM-SHA-256, postmaster pid ${pid})`,
      () => withRetries(attempt, isLoopback(host) ? "off" : "prefer", opts.reloaded),
      "verify_login",
    );
  } catch (err) {
    if (err instanceof TunnelRefused && err.forwarding) return { host, warning: forwardingOff(err, user, db, where) };
    const why = (err as Error).message;
    const hint =
      err instanceof ServerRefused
        ? loginHint(err.sqlstate, why, host, hbaFile)
        : err instanceof TunnelRefused
          ? `is the server listening on ${where}?`
          : undefined;
    throw new Error(`${user} could not log in to ${db} over TCP at ${where}: ${why}${hint ? ` (${hint})` : ""}`);
  }
  if (answer.sessionUser !== user)
    throw new Error(`the TCP login check ran as ${JSON.stringify(answer.sessionUser)}, not ${user}`);
  return { host, serverVersion: shortServerVersion(answer.serverVersion) };
}

/**
 * `login` with the password as PostgreSQL's SASLprep leaves it; where that is one of two strings (saslprep.ts),
 * with the other after the server refused the first.
 */
export async function loginPrepared(
  password: string,
  login: (prepared: string) => Promise<WireAnswer>,
): Promise<WireAnswer> {
  const [likely, other] = postgresSaslprep(password);
  try {
    return await login(likely);
  } catch (err) {
    if (other === undefined || !(err instanceof ServerRefused) || err.sqlstate !== "28P01") throw err;
    return login(other);
  }
}

const isLoopback = (host: string) => host === "::1" || host.startsWith("127.");

/**
 * The login, once more when it can only be the moment: after a reload, which the postmaster handles a
 * moment later; and with TLS when plain was tried on loopback and the server's rules ask for encryption
 * (an admin's hostssl line for it: the stock rules take both).
 */
async function withRetries(
  login: (tls: WireLogin["tls"]) => () => Promise<WireAnswer>,
  tls: WireLogin["tls"],
  reloaded: boolean,
): Promise<WireAnswer> {
  try {
    return await login(tls)();
  } catch (err) {
    if (!(err instanceof ServerRefused)) throw err;
    if (tls === "off" && err.sqlstate === "28000" && /no encryption/.test(err.message)) return login("prefer")();
    if (!reloaded) throw err;
    await new Promise((res) => setTimeout(res, 1000));
    return login(tls)();
  }
}

/**
 * Why a VM with forwarding off gets a warning, not a failure: hardening guides (CIS) set AllowTcpForwarding
 * no, and the role, its password and pg_hba.conf are already in place and checked server-side; the only
 * thing missing is the end-to-end proof, and nothing of the password left the job.
 */
function forwardingOff(err: TunnelRefused, user: string, db: string, where: string): string {
  return (
    `the TCP login check (${user} to ${db} at ${where}) was not run, and nothing of the password was sent: ` +
    `${err.message}. The check speaks SCRAM-SHA-256 from the job itself through such a channel, since psql ` +
    "on the VM cannot refuse to send a cleartext password to whatever listens there. To have it, allow " +
    "local forwarding for the SSH user (e.g. `Match User <ssh user>` with `AllowTcpForwarding local` in sshd_config)"
  );
}

/** What to look at when the server refused the login, from its SQLSTATE and words. */
function loginHint(sqlstate: string, why: string, host: string, hbaFile: string): string | undefined {
  const loopback = host === "127.0.0.1" || host === "::1";
  if (sqlstate === "28000" && /pg_hba\.conf/.test(why)) {
    return loopback
      ? `pg_hba.conf (${hbaFile}) has no host rule for ${host}: ` +
          "the stock rules for 127.0.0.1/32 and ::1/128 were removed? Put one back"
      : `pg_hba.conf (${hbaFile}) has no host rule for ${host}: ` +
          "add a network covering it to allowed_cidrs (with allow_remote), or add localhost to listen_addresses";
  }
  if (sqlstate === "28P01")
    return "the password stored for the role does not match (was it changed while the job ran?)";
  return undefined;
}
