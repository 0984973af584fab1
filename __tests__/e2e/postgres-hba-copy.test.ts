// End-to-end (issue 32), one sandbox and one PostgreSQL, in order: parameters vm-install takes back give the
// admin's postgresql.conf values back (work_mem by a reload, max_connections by a restart), and `changes` say
// which value is in effect, from pg_settings; a pg_hba.conf line the admin copied verbatim, vm-install's
// marker included, stays when vm-install takes back its own line (a narrower run, then state absent), named
// in warnings, and shop_app still logs in over the copy with psql on the VM.
import type { Sandbox } from "../../dev/sandbox/index";
import { describeE2E, expectSucceeded, root, runInstaller, sandboxPerSuite } from "./support/e2e";
import { CLUSTER, CONF, remoteEvent, T } from "./support/postgres-e2e";
import { postgresByJob } from "./support/snapshots";

const PW = "hba-copy-test-password-1";
const HBA = `${CONF}/pg_hba.conf`;
const DROPIN = `${CONF}/conf.d/90-vm-install.conf`;
const UNIT = `postgresql@${CLUSTER.replace("/", "-")}`;
const NET_A = "10.200.0.0/16";
const MARKER = "# vm-install:install-postgres";
const line = (net: string) => `hostssl    shop    shop_app    ${net}    scram-sha-256    ${MARKER}`;
const entry = (net: string) => `hostssl shop shop_app ${net} scram-sha-256`;
const copyWarning = (net: string) =>
  `${HBA}: kept a copy of vm-install's line ${entry(net)}, marker included: vm-install took back its one line`;

describeE2E("what vm-install takes back gives the admin's own back: parameters, a copied pg_hba.conf line", () => {
  let sb: Sandbox;
  sandboxPerSuite((s) => (sb = s), T, postgresByJob);
  /** The sandbox's own address as a /32: a client on the VM connecting to it matches only these rules. */
  let VM_NET: string;
  const job = (over: Record<string, unknown>) =>
    runInstaller(sb, "install-postgres", { ...remoteEvent(PW), ...over }, { secrets: [PW] });
  const sql = async (q: string) =>
    (await root(sb, `cd / && runuser -u postgres -- psql -X -At -c ${JSON.stringify(q)}`)).trim();
  /** A reload reaches new sessions once the postmaster has read the files: looked at until it has. */
  const until = async (q: string, want: string) => {
    for (let i = 0; i < 200 && (await sql(q)) !== want; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await sql(q)).toBe(want);
  };
  /** shop_app over TCP from the VM to its own address, TLS required, the password on stdin. */
  const loginFromVm = async () =>
    sb.rootExec(
      "cd / && read -r PGPASSWORD && export PGPASSWORD && " +
        `psql -X -w -At "host=${sb.address} port=5432 user=shop_app dbname=shop sslmode=require" -c 'SELECT current_user'`,
      { input: `${PW}\n`, timeoutMs: 60_000 },
    );
  const hbaLines = async () =>
    (await root(sb, `cat ${HBA}`)).split("\n").filter((l) => l.includes("shop_app") || l.includes(MARKER));

  test(
    "the admin's postgresql.conf values, overridden by parameters, are in effect again once they are taken " +
      "back, and changes say so (work_mem by a reload, max_connections by a restart)",
    async () => {
      VM_NET = `${sb.address}/32`;
      expectSucceeded(await job({ allowed_cidrs: [VM_NET, NET_A] }));
      await root(
        sb,
        // In place: the file includes conf.d near its end, so a line after that would win over the drop-in.
        `sed -i -e 's/^max_connections = [0-9]*/max_connections = 120/' -e "s/^#work_mem = .*/work_mem = '8MB'/" ` +
          `${CONF}/postgresql.conf && systemctl restart ${UNIT}`,
      );
      expect([await sql("SHOW work_mem"), await sql("SHOW max_connections")]).toEqual(["8MB", "120"]);

      const ours = await job({
        allowed_cidrs: [VM_NET, NET_A],
        parameters: { work_mem: "64MB", max_connections: 150 },
      });
      expectSucceeded(ours);
      expect([await sql("SHOW work_mem"), await sql("SHOW max_connections")]).toEqual(["64MB", "150"]);

      const back = await job({ allowed_cidrs: [VM_NET, NET_A], parameters: {} });
      expectSucceeded(back);
      expect(back.result.changes).toEqual([
        `parameter max_connections '150' removed from ${DROPIN} (no longer in the settings; ` +
          "the server's other files or its default apply, restart)",
        `parameter work_mem '64MB' removed from ${DROPIN} (no longer in the settings; ` +
          "the server's other files or its default apply, reload)",
        `parameter max_connections: vm-install's '150' taken back; '120' from ${CONF}/postgresql.conf in effect`,
        `parameter work_mem: vm-install's '64MB' taken back; '8MB' from ${CONF}/postgresql.conf in effect`,
      ]);
      expect(back.result.restarted).toBe(true);
      await until("SHOW work_mem", "8MB");
      expect(await sql("SHOW max_connections")).toBe("120");
    },
    T,
  );

  test(
    "a copy of vm-install's line, marker included: a narrower run takes back its one line, the copy stays and " +
      "is named, and shop_app logs in over it from the VM",
    async () => {
      expect(await hbaLines()).toEqual([line(VM_NET), line(NET_A)]);
      expect((await loginFromVm()).stdout).toBe("shop_app\n");
      // The admin's copy, the very bytes, right below vm-install's line.
      await root(sb, `sed -i '\\|${VM_NET.replace(/\./g, "\\.")} .*${MARKER}$|p' ${HBA}`);
      expect(await hbaLines()).toEqual([line(VM_NET), line(VM_NET), line(NET_A)]);

      const narrower = await job({ allowed_cidrs: [NET_A] });
      expectSucceeded(narrower);
      expect(narrower.result.changes).toEqual([
        `revoked: pg_hba.conf: ${entry(VM_NET)} removed (written by vm-install, no longer in the settings)`,
      ]);
      expect(narrower.result.warnings).toEqual([copyWarning(VM_NET)]);
      expect(await hbaLines()).toEqual([line(VM_NET), line(NET_A)]);
      expect(JSON.parse(await root(sb, "cat /var/lib/vm-install/grants.json")).postgres.hba).toEqual({
        [HBA]: [entry(NET_A)],
      });
      expect((await loginFromVm()).stdout).toBe("shop_app\n");
    },
    T,
  );

  test(
    "state absent takes back its one line of a copied pair too: pg_hba.conf keeps both of the admin's copies",
    async () => {
      await root(sb, `sed -i '\\|${NET_A.replace(/\./g, "\\.")} .*${MARKER}$|p' ${HBA}`);
      const absent = await job({ allowed_cidrs: [NET_A], state: "absent" });
      expectSucceeded(absent);
      expect(absent.result.changes[0]).toBe(`revoked: pg_hba.conf: ${entry(NET_A)}`);
      expect(absent.result.warnings).toContain(copyWarning(NET_A));
      expect(await hbaLines()).toEqual([line(VM_NET), line(NET_A)]);
    },
    T,
  );
});
