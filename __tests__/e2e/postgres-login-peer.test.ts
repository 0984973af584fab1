// End-to-end: the TCP login check sends the role's password (or any proof of it) only to the cluster's own
// postmaster (issue 30, finding 1). An unprivileged user takes 127.0.0.1 on the cluster's port while the
// server is down; the server comes back on ::1 only; the next run must fail naming that user's process,
// and the squatter (which asks for a cleartext password, as the finding's did) must record no password.
// Then the normal run logs in with SCRAM-SHA-256, and with TCP forwarding off the check is skipped, saying so.
// Passwords SASLprep changes (U+00A0, U+2168) are stored as PostgreSQL has them: libpq logs in with them too.
import type { Sandbox } from "../../dev/sandbox/index";
import { describeE2E, expectSucceeded, root, runInstaller, sandboxPerSuite, withoutFrames } from "./support/e2e";
import { FACTS } from "./support/release";
import { postgresByJob } from "./support/snapshots";

const T = 15 * 60_000;
const UNIT = `postgresql@${FACTS.pgMajor}-main`;
const PW = "Peer-proof-password-7";
const RECORD = "/home/squatter/record";

// Spins binding 127.0.0.1:5432 as the finding's user did (the port may be in TIME_WAIT from the first run's login).
// Answers every connection as a server would that wants a cleartext password: 'N' to an SSLRequest,
// AuthenticationCleartextPassword to the startup message, then records every byte the client sends.
const SQUATTER = `
import base64, socket, sys, time
while True:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", 5432))
        break
    except OSError:
        s.close()
        time.sleep(0.05)
s.listen(8)
print("listening", flush=True)
while True:
    c, _ = s.accept()
    c.settimeout(5)
    got = b""
    try:
        first = c.recv(8)
        got += first
        if first[4:8] == b"\\x04\\xd2\\x16\\x2f":
            c.sendall(b"N")
            got += c.recv(65536)
        c.sendall(b"R\\x00\\x00\\x00\\x08\\x00\\x00\\x00\\x03")
        while True:
            more = c.recv(65536)
            if not more:
                break
            got += more
    except Exception:
        pass
    with open("${RECORD}", "ab") as f:
        f.write(b"connection " + base64.b64encode(got) + b"\\n")
    c.close()
`;

describeE2E("install-postgres: the login check proves its peer before sending anything", () => {
  let sb: Sandbox;
  sandboxPerSuite(
    (s) => {
      sb = s;
    },
    T,
    postgresByJob,
  );
  const event = { db_name: "shop", db_user: "shop_app" };
  const job = () => runInstaller(sb, "install-postgres", event, { secretEnv: { db_password: PW } });
  const listeners = async () => root(sb, "ss -Hltnp 'sport = :5432'");

  it(
    "a squatter on 127.0.0.1 while the server listens on ::1: named, sent nothing; a normal run logs in with SCRAM",
    async () => {
      expectSucceeded(await job());

      // As the finding: the server is down a moment (a restart), an unprivileged user takes 127.0.0.1.
      await root(sb, `useradd -m squatter && systemctl stop ${UNIT}`);
      await root(
        sb,
        `install -o squatter -m 0644 /dev/null /home/squatter/squat.py && cat > /home/squatter/squat.py <<'EOF'\n${SQUATTER}\nEOF`,
      );
      const squatter = sb.rootSpawn("runuser -u squatter -- python3 /home/squatter/squat.py");
      let ended: string | undefined;
      squatter.done.then(
        (r) => {
          ended = `exit ${r.code}: ${r.stdout}${r.stderr}`;
        },
        (e: Error) => {
          ended = e.message;
        },
      );
      await until(async () => {
        if (ended !== undefined) throw new Error(`the squatter ended before it listened (${ended})`);
        return (await listeners()).includes("127.0.0.1:5432");
      });
      await root(sb, `systemctl start ${UNIT}`);
      const held = await listeners();
      expect(held).toMatch(/\[::1\]:5432 .*postgres/);
      expect(held).toMatch(/127\.0\.0\.1:5432 .*python3/);
      const pid = /127\.0\.0\.1:5432 .*pid=([0-9]+)/.exec(held)?.[1];

      const refused = await job();
      // Nothing reached the squatter: no connection at all, so no password and no proof of it.
      const record = (await root(sb, `cat ${RECORD} 2>/dev/null; true`)).trim();
      const received = record
        .split("\n")
        .filter(Boolean)
        .map((l) => Buffer.from(l.replace(/^connection /, ""), "base64").toString("latin1"));
      for (const bytes of received) expect(bytes).not.toContain(PW);
      expect(received).toEqual([]);
      expect(refused.phase).toBe("Failed");
      const message = withoutFrames(refused.message);
      expect(message).toMatch(
        new RegExp(
          `127\\.0\\.0\\.1:5432 is not held by the cluster's server: pid ${pid}, user squatter: python3 /home/squatter/squat\\.py listens there, not ${UNIT} \\(MainPID [0-9]+\\); nothing was sent to it`,
        ),
      );
      expect(message).toContain(`kill ${pid}`);

      // The squatter gone and the server restarted: the same run succeeds, the login proven by SCRAM.
      squatter.kill();
      await root(sb, `pkill -u squatter python3; systemctl restart ${UNIT}`);
      await until(async () => (await listeners()).includes("127.0.0.1:5432"));
      const normal = await job();
      expectSucceeded(normal);
      expect(normal.result.changes).toEqual([]);
      expect(normal.result.verified).toEqual({
        host: "127.0.0.1",
        port: 5432,
        user: "shop_app",
        database: "shop",
        auth: "scram-sha-256",
      });
      const said =
        /logging in as shop_app to shop over TCP \(127\.0\.0\.1:5432, SCRAM-SHA-256, postmaster pid [0-9]+\)/;
      expect(normal.lines.some((l) => said.test(l))).toBe(true);
    },
    T,
  );

  it(
    "TCP forwarding off for the SSH user: nothing is sent, the run succeeds with a warning saying why",
    async () => {
      await root(
        sb,
        "printf 'AllowTcpForwarding no\\n' > /etc/ssh/sshd_config.d/10-no-forwarding.conf && systemctl reload ssh",
      );
      const run = await job();
      expectSucceeded(run);
      expect(run.result.verified).toBeNull();
      expect(run.result.warnings).toEqual([
        expect.stringMatching(
          /^the TCP login check \(shop_app to shop at 127\.0\.0\.1:5432\) was not run, and nothing of the password was sent: the VM's sshd refused a TCP channel .*AllowTcpForwarding/,
        ),
      ]);
      await root(sb, "rm /etc/ssh/sshd_config.d/10-no-forwarding.conf && systemctl reload ssh");
    },
    T,
  );

  it(
    "passwords with U+00A0 and U+2168: stored as PostgreSQL's SASLprep has it, libpq and the check log in with SCRAM",
    async () => {
      // U+00A0 alone: one form (a space), the secret made in the job; with U+2168 (NFKC: "IX") the server hashes.
      for (const password of ["vm\u00a0install-7", "vm\u00a0install\u2168-7"]) {
        const run = () => runInstaller(sb, "install-postgres", event, { secretEnv: { db_password: password } });
        const set = await run();
        expectSucceeded(set);
        expect(set.result.verified).toMatchObject({ user: "shop_app", auth: "scram-sha-256" });
        const again = await run();
        expectSucceeded(again);
        expect(again.result.changes).toEqual([]);
        // libpq's own SASLprep and SCRAM, as an application would log in.
        const sql = "psql -h 127.0.0.1 -U shop_app -d shop -Atc 'select current_user'";
        const libpq = await root(sb, `PGPASSWORD='${password}' ${sql}`);
        expect(libpq.trim()).toBe("shop_app");
      }
    },
    T,
  );
});

/** Polls the VM every 100 ms until `check` holds; the case's own time limit bounds it (no deadline of its own,
 * which a loaded machine overran: the VM's progress decides). */
async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 100));
}
