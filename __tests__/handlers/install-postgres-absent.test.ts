// install-postgres state absent (absent.ts): what it removes as root comes from root's inventories only. The
// postgres user writes a cluster's configuration, so the data directory pg_lsclusters shows for a cluster is
// its word: a purge never removes one outside the major's own directories, it names it as kept. And the look
// at the directories and the recorded pg_hba.conf files is one exec, each file's bytes its own.
import { ExecRemote, type Remote, type RunOptions } from "../../handlers/common/exec";
import { GRANTS_LOOK } from "../../handlers/common/grants";
import { INVENTORY_LOOK } from "../../handlers/common/package-inventory";
import { postgresTakeBack, takeBackLook } from "../../handlers/install-postgres/absent";
import { HBA_MARKER } from "../../handlers/install-postgres/pg";
import { answerLook, answerLookWith, isLook } from "./support/look-answers";
import { listingProbe } from "./support/postgres-listing";

const HBA = "/etc/postgresql/15/main/pg_hba.conf";
const OURS = "hostssl myapp app_user 10.0.0.0/8 scram-sha-256";
const cluster = (name: string, dataDir: string) =>
  `15  ${name}    5432 online postgres ${dataDir} /var/log/postgresql/postgresql-15-${name}.log\n`;

/** A VM where vm-install installed postgresql-15 and recorded its pg_hba.conf line; `files`: what exists. */
function vm(
  clusters: string,
  files: Record<string, string>,
  roles: { recorded: string[]; server: Record<string, object> } = { recorded: [], server: {} },
): Remote & { sent: string[] } {
  const sent: string[] = [];
  const grants = { version: 1, postgres: { hba: { [HBA]: [OURS] }, roles: { "15/main": roles.recorded } } };
  const packages = { version: 1, installers: { postgres: { packages: ["postgresql-15"], groups: [], users: [] } } };
  const answer = (command: string): string => {
    if (command === GRANTS_LOOK.script) return answerLook(command, { grants: JSON.stringify(grants) });
    if (command === INVENTORY_LOOK.script)
      return answerLook(command, { "inventory.packages": JSON.stringify(packages) });
    // The server's own answer on the recorded roles (sql.ts recordedRolesSql), as psql -At prints it.
    if (command.includes("psql -X")) return `${JSON.stringify({ recorded_roles: roles.server })}\n`;
    if (!isLook(command)) throw new Error(`absent test: a command this double does not know: ${command}`);
    return answerLookWith(command, (probe) => {
      const listed = listingProbe(probe, { packages: "", clusters, units: {} });
      if (listed) return listed;
      const [, verb, path] = /^(\[ -e|cat) '?([^' \]]+)'?/.exec(probe) ?? [];
      if (!path) throw new Error(`absent test: a probe this double does not know: ${probe}`);
      const text = verb === "cat" ? (files[path] ?? "") : "";
      return { stdout: text, code: files[path] === undefined ? 1 : 0 };
    });
  };
  const exec = (command: string, opts?: RunOptions) => {
    sent.push(command);
    const stdout = answer(command);
    const remote = new ExecRemote(async () => ({ code: 0, stdout: Buffer.from(stdout), stderr: Buffer.from("") }), {
      target: "ubuntu@192.0.2.10:22",
      user: "ubuntu",
    });
    return remote.run(command, opts);
  };
  return { run: exec, sent };
}

const inspect = (remote: Remote, purge: boolean) =>
  postgresTakeBack.inspect({ remote, event: { purge_data: purge } } as never);

const DIRS = { "/var/lib/postgresql/15": "", "/etc/postgresql/15": "" };

describe("install-postgres absent: what a purge removes", () => {
  it.each([["/etc"], ["/root"], ["/var/lib/vm-install"], ["/home/app/data"]])(
    "a cluster whose configuration puts its data at %s: not removed, named as kept",
    async (elsewhere) => {
      const remote = vm(cluster("main", "/var/lib/postgresql/15/main") + cluster("x", elsewhere), {
        ...DIRS,
        [elsewhere]: "",
      });
      const seen = await inspect(remote, true);
      const purge = postgresTakeBack.after?.(seen) ?? [];
      expect(purge.flatMap((c) => c.what)).toEqual([
        "removed /var/lib/postgresql/15 (purgeData)",
        "removed /etc/postgresql/15 (purgeData)",
      ]);
      expect(postgresTakeBack.report?.(seen, true)).toEqual({ data_kept: [elsewhere] });
      expect(postgresTakeBack.warnings?.(seen)).toEqual([expect.stringMatching(new RegExp(`^${elsewhere} kept: `))]);
    },
  );

  it("without purgeData every directory is kept and named, and the recorded line is revoked", async () => {
    const hba = `local all postgres peer\n${OURS.split(" ").join("    ")}    ${HBA_MARKER}\n`;
    const remote = vm(cluster("main", "/srv/pg/15/main"), { ...DIRS, "/srv/pg/15/main": "", [HBA]: hba });
    const seen = await inspect(remote, false);
    expect(postgresTakeBack.report?.(seen, true)).toEqual({
      data_kept: ["/var/lib/postgresql/15", "/etc/postgresql/15", "/srv/pg/15/main"],
    });
    expect(seen.hba).toEqual([{ file: HBA, entries: [OURS], content: "local all postgres peer\n", copies: [] }]);
    // grants, package inventory, packages and clusters, then one look at the directories and the file.
    expect(remote.sent).toHaveLength(4);
  });

  it("the look: an existence test per directory and the file's bytes, each the postgres user's to write", () => {
    const look = takeBackLook(["/var/lib/postgresql/15"], [HBA]);
    expect(look.probes).toEqual([
      expect.objectContaining({ name: "dir:0", command: "[ -e /var/lib/postgresql/15 ]", writer: "service" }),
      expect.objectContaining({ name: "hba:0", command: `cat ${HBA}`, writer: "service" }),
    ]);
    const forged = `${OURS}\n--- x\nhba:0 AAAA\n`;
    const text = look.parse(
      answerLookWith(look.script, (p) => ({ stdout: p.startsWith("cat") ? forged : "", code: 0 })),
    );
    expect(text.get("hba:0").text).toBe(forged);
  });

  it(
    "a recorded role the admin dropped and made again (no vm-install mark) keeps LOGIN and is named; a dropped " +
      "one is not claimed as revoked; only the marked one is taken back",
    async () => {
      const mark = { login: true, superuser: false, bootstrap: false, marked: true };
      const remote = vm(
        cluster("main", "/var/lib/postgresql/15/main"),
        { ...DIRS, [HBA]: "local all postgres peer\n" },
        {
          recorded: ["app_user", "remade", "dropped"],
          server: { app_user: mark, remade: { ...mark, marked: false } },
        },
      );
      const seen = await inspect(remote, false);
      expect(seen.roles).toEqual([{ port: 5432, cluster: "15/main", roles: ["app_user"] }]);
      expect(postgresTakeBack.revoked?.(seen)).toEqual(["role app_user: LOGIN"]);
      expect(postgresTakeBack.plan(seen).flatMap((c) => c.what)).toEqual([
        "revoked: role app_user: LOGIN (cluster 15/main)",
      ]);
      expect(postgresTakeBack.warnings?.(seen)).toEqual([
        expect.stringMatching(
          /^LOGIN of role "remade" not taken back .* carries no vm-install mark.*\(cluster 15\/main\)$/,
        ),
      ]);
    },
  );
});
