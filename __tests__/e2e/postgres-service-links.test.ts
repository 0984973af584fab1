// End-to-end (issue 30, the class around finding 2): files the postgres user controls are read as postgres,
// so a link it plants at their path reaches nothing of root's. The cluster's log becomes a link to a root-only
// file whose line looks like the server's (a failed start's error is built from the log's FATAL lines), and
// pg_hba.conf a link to a root-only file carrying vm-install's line (absent writes the file back without it,
// as postgres): root's words reach neither the job's message nor a file postgres can read. The log swapped for
// such a link after a restart that held: the bind check after the restart reads it as postgres too.
import type { Sandbox } from "../../dev/sandbox/index";
import { describeE2E, expectSucceeded, root, runInstaller, sandboxPerSuite, withoutFrames } from "./support/e2e";
import { remoteEvent } from "./support/postgres-e2e";
import { FACTS } from "./support/release";
import { postgresByJob } from "./support/snapshots";

const T = 15 * 60_000;
const PG = FACTS.pgMajor;
const UNIT = `postgresql@${PG}-main`;
const LOG = `/var/log/postgresql/postgresql-${PG}-main.log`;
const HBA = `/etc/postgresql/${PG}/main/pg_hba.conf`;
const SECRET = "root-only-words-5f1c";
const PW = "Links-test-password-3";

describeE2E("install-postgres reads the postgres user's files as postgres", () => {
  let sb: Sandbox;
  sandboxPerSuite(
    (s) => {
      sb = s;
    },
    T,
    postgresByJob,
  );
  const event = remoteEvent(PW);
  const job = (ev: Record<string, unknown>) => runInstaller(sb, "install-postgres", ev, { secrets: [PW] });
  const asPostgres = (command: string) => root(sb, `runuser -u postgres -- sh -c '${command}'`);

  it(
    "the cluster's log a link to a root-only file: the failed start's error carries none of it",
    async () => {
      expectSucceeded(await job(event));
      await root(sb, `printf '2026-01-01 00:00:00 UTC [1] FATAL:  ${SECRET}\\n' > /root/secret.log`);
      await root(sb, "chmod 600 /root/secret.log");
      await asPostgres(`rm -f ${LOG} && ln -s /root/secret.log ${LOG}`);

      // Parsed fine, refused at start: the job reads the log's tail for the server's words.
      const stop = await job({ ...event, parameters: { max_connections: 2 } });
      expect(stop.phase).toBe("Failed");
      expect(withoutFrames(stop.message)).toContain("max_connections");
      expect(stop.message).not.toContain(SECRET);
      expect(stop.lines.join("\n")).not.toContain(SECRET);

      // The log back as the package made it: the settings' own run serves again.
      await root(sb, `rm -f ${LOG} && install -o postgres -g adm -m 0640 /dev/null ${LOG}`);
      const back = await job(event);
      expectSucceeded(back);
      expect((await root(sb, `systemctl is-active ${UNIT}`)).trim()).toBe("active");
    },
    T,
  );

  it(
    "the log swapped for a link after a restart that held: the bind check reads none of root's file",
    async () => {
      // What the postgres user can do the moment the server is up, done by an ExecStartPost run as postgres: the
      // log becomes a link to a root-only file, longer than the log was, whose last line reads as a bind failure.
      expectSucceeded(await job(event)); // installed and running: the swap below happens at the restart only
      const dropIn = `/etc/systemd/system/${UNIT}.service.d`;
      const swap = `mv ${LOG} ${LOG}.real && ln -s /root/bind.log ${LOG}`;
      await root(
        sb,
        `{ head -c 2000000 /dev/zero | tr '\\0' x; printf '\\nLOG:  could not bind IPv4 address ${SECRET}\\n'; } ` +
          `> /root/bind.log && chmod 600 /root/bind.log && mkdir -p ${dropIn} && ` +
          `printf '[Service]\\nExecStartPost=/usr/sbin/runuser -u postgres -- sh -c "${swap}"\\n' > ${dropIn}/swap.conf` +
          " && systemctl daemon-reload",
      );
      const restarted = await job({ ...event, parameters: { max_connections: 110 } });
      expect(restarted.lines.join("\n")).not.toContain(SECRET);
      expectSucceeded(restarted);
      expect((await root(sb, `readlink ${LOG}`)).trim()).toBe("/root/bind.log");

      await root(sb, `rm -r ${dropIn} && systemctl daemon-reload && rm ${LOG} && mv ${LOG}.real ${LOG}`);
    },
    T,
  );

  it(
    "pg_hba.conf a link to a root-only file with vm-install's line: absent writes nothing of it, and says so",
    async () => {
      expect(await root(sb, `grep -c vm-install ${HBA}`)).toBe("1\n");
      await root(sb, `cp ${HBA} /root/hba && echo '# ${SECRET}' >> /root/hba && chmod 600 /root/hba`);
      await asPostgres(`mv ${HBA} ${HBA}.mine && ln -s /root/hba ${HBA}`);

      const absent = await job({ ...event, state: "absent" });
      expectSucceeded(absent);
      // The link is as postgres left it, and nothing postgres can read holds root's line.
      expect((await root(sb, `readlink ${HBA}`)).trim()).toBe("/root/hba");
      expect(await root(sb, `grep -rl ${SECRET} /etc/postgresql /var/lib/postgresql /tmp; true`)).toBe("");
      expect(await root(sb, `grep -c ${SECRET} /root/hba`)).toBe("1\n");
      expect(absent.result.warnings).toEqual(
        expect.arrayContaining([expect.stringContaining(`${HBA} could not be read as postgres`)]),
      );
    },
    T,
  );
});
