// What install-postgres reads of the VM and decides from it without a VM (pg.ts): dpkg's and pg_lsclusters'
// output, pg_hba.conf planned so only lines vm-install wrote and recorded are ever removed, listen_addresses
// compared and checked for an override read later, and values quoted for psql variables.
import {
  HBA_MARKER,
  hbaEntry,
  hbaFields,
  hbaLine,
  listenOverride,
  normalizeListen,
  parseClusters,
  parseServerPackages,
  planHba,
  psqlMetaQuote,
  verifyHost,
} from "../../handlers/install-postgres/pg";
import { PG14_PKG, STOCK_HBA } from "./support/postgres-steps";

describe("install-postgres: pure parts (pg.ts)", () => {
  it("dpkg and pg_lsclusters output", () => {
    expect(
      parseServerPackages(
        `${PG14_PKG}postgresql-14-postgis-3\tinstall ok installed\t3.2\npostgresql-16\tdeinstall ok ` +
          `config-files\t16.1\n`,
      ),
    ).toEqual([{ major: "14", version: "14.11-0ubuntu0.22.04.1" }]);
    expect(
      parseClusters(
        "15 main 5432 down postgres /var/lib/postgresql/15/main /var/log/postgresql/postgresql-15-main.log\n16 " +
          "other 5433 online postgres /srv/pg <unknown>\n",
      ).clusters,
    ).toEqual([
      {
        major: "15",
        name: "main",
        port: 5432,
        status: "down",
        owner: "postgres",
        dataDir: "/var/lib/postgresql/15/main",
        logFile: "/var/log/postgresql/postgresql-15-main.log",
      },
      { major: "16", name: "other", port: 5433, status: "online", owner: "postgres", dataDir: "/srv/pg" },
    ]);
  });

  it("pg_hba.conf planning: add, keep, remove only our own lines", () => {
    const e = (c: string, type: "host" | "hostssl" = "hostssl", db = "myapp", user = "app_user") =>
      hbaEntry(type, db, user, c);
    const ours = (c: string, type: "host" | "hostssl" = "hostssl") => hbaLine(type, "myapp", "app_user", c);
    const p1 = planHba(STOCK_HBA, [e("10.0.0.0/8")], undefined);
    expect(p1).toEqual({
      content: `${STOCK_HBA + ours("10.0.0.0/8")}\n`,
      added: [e("10.0.0.0/8")],
      removed: [],
      duplicates: [],
      owned: [e("10.0.0.0/8")],
      copies: [],
    });
    expect(planHba(p1.content, [e("10.0.0.0/8")], [e("10.0.0.0/8")])).toMatchObject({
      content: p1.content,
      added: [],
      removed: [],
      owned: [e("10.0.0.0/8")],
    });
    // allow_remote off: our recorded line goes, the admin's identical-looking line without the marker stays.
    const mixed = `${p1.content}hostssl myapp app_user 172.16.0.0/12 scram-sha-256\n`;
    expect(planHba(mixed, [], [e("10.0.0.0/8")])).toMatchObject({
      content: `${STOCK_HBA}hostssl myapp app_user 172.16.0.0/12 scram-sha-256\n`,
      added: [],
      removed: [e("10.0.0.0/8")],
      owned: [],
    });
    // The admin's line with the wanted fields counts as present and is not ours (not recorded).
    expect(
      planHba(`${STOCK_HBA}hostssl myapp app_user 10.0.0.0/8 scram-sha-256\n`, [e("10.0.0.0/8")], []),
    ).toMatchObject({ added: [], owned: [] });
    // Another database's or role's line of ours goes once the inventory lists it (dbName or dbUser changed)...
    const other = `${STOCK_HBA}hostssl    olddb    olduser    10.0.0.0/8    scram-sha-256    ${HBA_MARKER}\n`;
    expect(planHba(other, [e("10.0.0.0/8")], [e("10.0.0.0/8", "hostssl", "olddb", "olduser")])).toMatchObject({
      content: `${STOCK_HBA + ours("10.0.0.0/8")}\n`,
      removed: [e("10.0.0.0/8", "hostssl", "olddb", "olduser")],
    });
    // ...but a marked line the inventory does not list is left alone once there is an inventory.
    expect(planHba(other, [e("10.0.0.0/8")], [])).toMatchObject({
      content: `${other + ours("10.0.0.0/8")}\n`,
      removed: [],
    });
    // Before any inventory (the previous version's host lines): the marker alone makes them ours, so they
    // are replaced by hostssl.
    const old = `${STOCK_HBA}${ours("10.0.0.0/8", "host")}\n`;
    expect(planHba(old, [e("10.0.0.0/8")], undefined)).toMatchObject({
      content: `${STOCK_HBA + ours("10.0.0.0/8")}\n`,
      added: [e("10.0.0.0/8")],
      removed: [e("10.0.0.0/8", "host")],
    });
    // Before any inventory a second marked copy is dropped, not revoked; with one, the inventory's one line per
    // entry makes the other the admin's copy, which stays (install-postgres-hba-copy.test.ts).
    const twice = `${STOCK_HBA + ours("10.0.0.0/8")}\n${ours("10.0.0.0/8")}\n`;
    expect(planHba(twice, [e("10.0.0.0/8")], undefined)).toMatchObject({
      content: p1.content,
      duplicates: [e("10.0.0.0/8")],
      removed: [],
    });
    expect(planHba(twice, [e("10.0.0.0/8")], [e("10.0.0.0/8")])).toMatchObject({ content: twice, duplicates: [] });
    // A file without a final newline gets one.
    expect(planHba("local all all peer", [hbaEntry("host", "db", "u", "::1/128")], undefined).content).toBe(
      `local all all peer\nhost    db    u    ::1/128    scram-sha-256    ${HBA_MARKER}\n`,
    );
    expect(hbaFields(`host "my db" all 10.0.0.0/8 md5 # x`)).toEqual(["host", `"my db"`, "all", "10.0.0.0/8", "md5"]);
  });

  it("listen_addresses: comparison, override detection, where to verify", () => {
    expect(normalizeListen(" localhost , 10.0.0.5,")).toBe("localhost,10.0.0.5");
    expect(
      listenOverride(
        [
          { file: "/a/postgresql.conf", line: 60, setting: "localhost", error: null },
          { file: "/a/conf.d/90-vm-install.conf", line: 2, setting: "*", error: "setting could not be applied" },
        ],
        "/a/conf.d/90-vm-install.conf",
      ),
    ).toBeUndefined();
    expect(
      listenOverride(
        [
          { file: "/a/conf.d/90-vm-install.conf", line: 2, setting: "*", error: null },
          { file: "/d/postgresql.auto.conf", line: 3, setting: "x", error: null },
        ],
        "/a/conf.d/90-vm-install.conf",
      )?.file,
    ).toBe("/d/postgresql.auto.conf");
    expect(verifyHost("*")).toBe("127.0.0.1");
    expect(verifyHost("localhost,10.0.0.5")).toBe("127.0.0.1");
    expect(verifyHost("::1")).toBe("::1");
    expect(verifyHost("10.0.0.5, 10.0.0.6")).toBe("10.0.0.5");
  });

  it("quoting for psql variables", () => {
    expect(psqlMetaQuote(`a'b\\c`)).toBe(`'a''b\\\\c'`);
  });
});
