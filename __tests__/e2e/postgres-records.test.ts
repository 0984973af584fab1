// End-to-end: what install-postgres records (pg_hba.conf lines, roles given LOGIN, extensions) stays true, on
// one sandbox VM and one PostgreSQL reused by every case, in order (issue 32): a record the admin only removed
// is granted and recorded again; one the admin removed and made again by hand is theirs, kept by a narrower
// run and by state absent, the role named in warnings; after absent the VM is pristine plus the admin's doing.
import type { Sandbox } from "../../dev/sandbox/index";
import { absentThrice, expectPackagesBack, noWork, vmState } from "./support/absent-e2e";
import { describeE2E, expectSucceeded, root, runInstaller, sandboxPerSuite } from "./support/e2e";
import { CLUSTER, CONF, remoteEvent, T } from "./support/postgres-e2e";

const PW = "records-test-password-1";
const HBA = `${CONF}/pg_hba.conf`;
const [NET_A, NET_B, NET_C] = ["10.200.0.0/16", "10.201.0.0/16", "10.202.0.0/16"];
const MARKER = "# vm-install:install-postgres";
const entry = (user: string, net: string) => `hostssl shop ${user} ${net} scram-sha-256`;
/** The line as an admin writes it: the same fields, no vm-install marker. */
const adminLine = (user: string, net: string) => `hostssl    shop    ${user}    ${net}    scram-sha-256`;

const E1 = { ...remoteEvent(PW), allowed_cidrs: [NET_A, NET_B], extensions: ["pg_trgm"] };
/** No longer shop_app, NET_B or pg_trgm. */
const E2 = { ...remoteEvent(PW), db_user: "shop_owner", allowed_cidrs: [NET_A], extensions: [] };
const E3 = { ...E2, allowed_cidrs: [NET_A, NET_C], extensions: ["hstore"] };

/** SQL as postgres in `db`, on stdin. */
async function sql(sb: Sandbox, text: string, db = "postgres"): Promise<string> {
  const r = await sb.rootExec(`cd / && runuser -u postgres -- psql -X -q -At -v ON_ERROR_STOP=1 -d ${db} -f -`, {
    input: text,
    timeoutMs: 60_000,
  });
  if (r.code !== 0) throw new Error(`psql on the target failed: ${r.stderr}`);
  return r.stdout;
}
const grants = async (sb: Sandbox) => JSON.parse(await root(sb, "cat /var/lib/vm-install/grants.json")).postgres;
/** "name login mark": whether each role may log in, and whether it carries vm-install's mark ("created" or "-"). */
const roles = (sb: Sandbox) =>
  sql(
    sb,
    "SELECT rolname || ' ' || rolcanlogin || ' ' || CASE WHEN shobj_description(oid, 'pg_authid') LIKE " +
      "'vm-install: created by install-postgres;%' THEN 'created' ELSE '-' END FROM pg_roles WHERE rolname IN ('shop_app', 'shop_owner') ORDER BY 1;",
  );
const extensions = async (sb: Sandbox) =>
  (await sql(sb, "SELECT extname FROM pg_extension ORDER BY 1;", "shop")).trim().split("\n");
/** The admin's hand: `user`'s marked line for `net` deleted, and (remake) the same line appended, theirs. */
const editHba = (sb: Sandbox, user: string, net: string, remake: boolean) =>
  root(
    sb,
    `sed -i '/^hostssl *shop *${user} *${net.replace("/", "\\/")} .*${MARKER}$/d' ${HBA} && ` +
      `${remake ? `echo '${adminLine(user, net)}' >> ${HBA} && ` : ""}systemctl reload postgresql@${CLUSTER.replace("/", "-")}`,
  );
/** The admin drops `user` (the database handed to postgres meanwhile) and, with remake, creates it again. */
const dropRole = (user: string, remake: boolean) =>
  `ALTER DATABASE shop OWNER TO postgres; DROP ROLE ${user};` +
  (remake ? ` CREATE ROLE ${user} LOGIN; ALTER DATABASE shop OWNER TO ${user};` : "");

/** The clusters' trees of a vmState (not postgresql-common's), without the files inside the data directory. */
const outsideData = (tree: string) =>
  tree
    .split("\n")
    .filter((l) => /^\/(etc|var\/lib)\/postgresql[/ ]/.test(l) && !l.startsWith(`/var/lib/postgresql/${CLUSTER}/`))
    .join("\n");

describeE2E("install-postgres' records on a sandbox VM: re-checked against the VM, the admin's never taken", () => {
  let sb: Sandbox;
  let pristine: Record<string, string>;
  /** pg_hba.conf as the package made it: the first run's file without vm-install's lines. */
  let stock: string;
  sandboxPerSuite((s) => (sb = s), T);

  test(
    "a line, a role and an extension the admin only removed: the next run with the same settings grants each " +
      "again, and the record is true again",
    async () => {
      pristine = await vmState(sb);
      expectSucceeded(await runInstaller(sb, "install-postgres", E1, { secrets: [PW] }));
      const first = await grants(sb);
      expect(first).toEqual({
        hba: { [HBA]: [entry("shop_app", NET_A), entry("shop_app", NET_B)] },
        roles: { [CLUSTER]: ["shop_app"] },
        extensions: { [`${CLUSTER}:shop`]: ["pg_trgm"] },
      });
      const text = await root(sb, `cat ${HBA}`);
      stock = text.replace(new RegExp(`^.*${MARKER}\\n`, "gm"), "");

      await editHba(sb, "shop_app", NET_B, false);
      await sql(sb, "DROP EXTENSION pg_trgm;", "shop");
      await sql(sb, dropRole("shop_app", false));
      const again = await runInstaller(sb, "install-postgres", E1, { secrets: [PW] });
      expectSucceeded(again);
      expect(again.result.changes).toEqual(
        expect.arrayContaining([
          "role shop_app created (LOGIN, password set)",
          `pg_hba.conf: ${entry("shop_app", NET_B)} added`,
          "extension pg_trgm created in database shop",
        ]),
      );
      expect(await grants(sb)).toEqual(first);
      expect(await root(sb, `grep -c '${NET_B}.*${MARKER}$' ${HBA}`)).toBe("1\n");
      expect(await roles(sb)).toBe("shop_app true created\n");
      expect(await extensions(sb)).toContain("pg_trgm");
    },
    T,
  );

  test(
    "made again by the admin: a run whose settings no longer grant them keeps the admin's line, role and " +
      "extension, names the role, takes back only its own line",
    async () => {
      await editHba(sb, "shop_app", NET_B, true);
      await sql(sb, dropRole("shop_app", true));
      await sql(sb, "DROP EXTENSION pg_trgm; CREATE EXTENSION pg_trgm;", "shop");
      const narrower = await runInstaller(sb, "install-postgres", E2, { secrets: [PW] });
      expectSucceeded(narrower);
      expect(narrower.result.revoked).toEqual([`pg_hba.conf: ${entry("shop_app", NET_A)}`]);
      expect(narrower.result.warnings).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^LOGIN of role "shop_app" not taken back .* carries no vm-install mark/),
          expect.stringMatching(/^extension pg_trgm in database shop is no longer in the settings: left in place/),
        ]),
      );
      const hba = await root(sb, `cat ${HBA}`);
      expect(hba).toContain(`\n${adminLine("shop_app", NET_B)}\n`);
      expect(hba).not.toMatch(/shop_app.*10\.200\.0\.0/);
      expect(await roles(sb)).toBe("shop_app true -\nshop_owner true created\n");
      expect(await extensions(sb)).toContain("pg_trgm");
      expect(await grants(sb)).toEqual({
        hba: { [HBA]: [entry("shop_owner", NET_A)] },
        roles: { [CLUSTER]: ["shop_owner"] },
      });
    },
    T,
  );

  test(
    "state absent after the admin made a recorded line, role and extension again: only vm-install's own line is " +
      "taken back, the role is named; the VM is pristine plus the admin's doing, with and without purgeData",
    async () => {
      expectSucceeded(await runInstaller(sb, "install-postgres", E3, { secrets: [PW] }));
      expect(await grants(sb)).toMatchObject({ extensions: { [`${CLUSTER}:shop`]: ["hstore"] } });
      await editHba(sb, "shop_owner", NET_C, true);
      await sql(sb, dropRole("shop_owner", true));
      await sql(sb, "DROP EXTENSION hstore; CREATE EXTENSION hstore;", "shop");
      // The admin's own file beside the package's, outside any cluster: a purge must leave it.
      await root(sb, "echo '# the admin' > /etc/postgresql-common/admin-notes.conf");
      const installed = await vmState(sb);

      const keep = await absentThrice(sb, "install-postgres", E3, [PW]);
      expect(keep.real.revoked).toEqual([`pg_hba.conf: ${entry("shop_owner", NET_A)}`]);
      expect(keep.real.changes).not.toContainEqual(expect.stringMatching(/role/));
      expect(keep.real.warnings).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^LOGIN of role "shop_owner" not taken back .* carries no vm-install mark/),
        ]),
      );
      expect(noWork(keep.again)).toEqual({ changes: [], changed: false });
      // Pristine plus the admin's doing: the package's pg_hba.conf and the admin's two lines, in their order.
      expect(await root(sb, `cat ${HBA}`)).toBe(
        `${stock}${adminLine("shop_app", NET_B)}\n${adminLine("shop_owner", NET_C)}\n`,
      );
      const kept = await vmState(sb);
      expect({ apt: kept.apt, daemonJson: kept.daemonJson, grants: kept.grants }).toEqual({
        apt: pristine.apt,
        daemonJson: pristine.daemonJson,
        grants: pristine.grants,
      });
      expectPackagesBack(pristine.packages, installed.packages, kept.packages);
      // Without purgeData no path of the clusters' trees moves, nor changes owner (the data directory's files
      // aside: the server stopped with its package); the admin's file beside postgresql-common's stays.
      expect(outsideData(kept.postgres)).toBe(outsideData(installed.postgres));
      expect(kept.postgres).toContain("/etc/postgresql-common/admin-notes.conf root:root\n");

      // The server back (the job installs the package again): the admin's roles may log in, unmarked, and their
      // extensions are there; this run gives no LOGIN (none was taken).
      const back = await runInstaller(sb, "install-postgres", E3, { secrets: [PW] });
      expectSucceeded(back);
      expect(back.result.changes).not.toContainEqual(expect.stringMatching(/LOGIN/));
      expect(await roles(sb)).toBe("shop_app true -\nshop_owner true -\n");
      expect(await extensions(sb)).toEqual(expect.arrayContaining(["hstore", "pg_trgm"]));

      const purge = await absentThrice(sb, "install-postgres", { ...E3, purge_data: true }, [PW]);
      expect(noWork(purge.again)).toEqual({ changes: [], changed: false });
      const adminFile = "/etc/postgresql-common root:root\n/etc/postgresql-common/admin-notes.conf root:root\n";
      expect(await vmState(sb)).toEqual({ ...pristine, postgres: `${pristine.postgres}${adminFile}` });
    },
    T,
  );
});
