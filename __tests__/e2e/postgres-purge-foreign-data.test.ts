// Issue 32 finding 2 end to end: what purgeData deletes comes from vm-install's record (the majors it
// installed), never from what the postgres user writes. Here the postgres user adds a cluster whose
// postgresql.conf names the admin's /srv/admin-data, and links another admin directory into the major's
// own; state absent with purgeData removes the major's directories, keeps both admin directories and
// names the foreign data directory in data_kept.
import type { Sandbox } from "../../dev/sandbox/index";
import { describeE2E, expectSucceeded, root, runInstaller, sandboxPerSuite } from "./support/e2e";
import { T } from "./support/postgres-e2e";
import { postgresByJob } from "./support/snapshots";

const PW = "purge-foreign-data-pw-1";
const ADMIN = ["/srv/admin-data", "/srv/admin-linked"];

describeE2E("install-postgres state absent with purgeData: what the postgres user names is kept", () => {
  let sb: Sandbox;
  sandboxPerSuite((s) => (sb = s), T, postgresByJob);

  test(
    "a cluster the postgres user configured on /srv/admin-data and a link to an admin directory: both kept",
    async () => {
      for (const d of ADMIN) await root(sb, `mkdir -m 700 ${d} && echo precious > ${d}/keep.txt`);
      const event = { db_name: "shop", db_user: "shop_app", db_password: PW };
      const install = await runInstaller(sb, "install-postgres", event, { secrets: [PW] });
      expectSucceeded(install);
      const major = (install.result.cluster as string).split("/")[0];

      // All the postgres user's to write: /etc/postgresql/<major> and /var/lib/postgresql/<major> are its.
      await root(
        sb,
        `runuser -u postgres -- sh -c "mkdir /etc/postgresql/${major}/evil && ` +
          `echo \\"data_directory = '${ADMIN[0]}'\\" > /etc/postgresql/${major}/evil/postgresql.conf && ` +
          `ln -s ${ADMIN[1]} /var/lib/postgresql/${major}/linked"`,
      );
      expect(await root(sb, "pg_lsclusters -h 2>/dev/null; true")).toContain(ADMIN[0]);

      const absent = await runInstaller(
        sb,
        "install-postgres",
        { ...event, state: "absent", purge_data: true },
        { secrets: [PW] },
      );
      expectSucceeded(absent);
      expect(absent.result.changes).toEqual(
        expect.arrayContaining([
          `removed /var/lib/postgresql/${major} (purgeData)`,
          `removed /etc/postgresql/${major} (purgeData)`,
        ]),
      );
      expect(absent.result.changes.join("\n")).not.toContain("/srv/");
      expect(absent.result.data_kept).toEqual([ADMIN[0]]);
      expect(absent.result.warnings).toEqual(expect.arrayContaining([expect.stringMatching(`^${ADMIN[0]} kept: `)]));
      for (const d of ADMIN)
        expect(await root(sb, `stat -c '%U %a' ${d}; cat ${d}/keep.txt`)).toBe("root 700\nprecious\n");
      expect(await root(sb, `ls -d /etc/postgresql/${major} /var/lib/postgresql/${major} 2>&1; true`)).toMatch(
        /No such file or directory[\s\S]*No such file or directory/,
      );
    },
    T,
  );
});
