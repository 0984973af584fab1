// install-postgres' looks at the VM (issue 30): the postgres user owns /etc/postgresql/<major>/, so it names
// cluster directories, and pg_lsclusters prints those names. No name, whatever bytes it holds, may set another
// fact of the look: the legacy PGDG keyring (which leads to a root action: PGDG set up again), the units'
// states, the count of unreadable directories. And a rerun costs few round trips.
import * as fs from "node:fs";
import * as path from "node:path";
import type { Connection, RunOptions } from "../../handlers/common/exec";
import { runHandler } from "../../handlers/common/handler-kit";
import type { RootFact } from "../../handlers/common/vm-facts";
import { rebuildPgdgKeyring } from "../../handlers/install-postgres/apply";
import { handler } from "../../handlers/install-postgres/handler";
import { POSTGRES_LOOKS } from "../../handlers/install-postgres/looks";
import { LEGACY_PGDG_KEYRING } from "../../handlers/install-postgres/pgdg";
import type { Run } from "../../handlers/install-postgres/run";
import { SecretScrubber } from "../../lib/shared/secrets";
import { rng } from "../support/seeded-random";
import { pgpKey } from "./support/pgp-fixtures";
import { installedVm, newCluster, pgJob } from "./support/postgres-jobs";
import { PostgresVm } from "./support/postgres-vm";
import { TEST_ENV } from "./support/run-scripted";

const EVENT = { db_name: "myapp", db_user: "app_user", db_password: "correct horse 42", listen_addresses: "*" };
const MAIN = "main 5432 online postgres /var/lib/postgresql/14/main /var/log/postgresql/postgresql-14-main.log";
const PIECES = [
  "--- clusters\n",
  "--- units\n",
  "--- hidden\n",
  "--- legacy keyring\n",
  "present\n",
  "hidden\n",
  "postgresql@14-main active\n",
  "postgresql@14-main inactive\n",
  `${MAIN}\n`,
  "\n",
  " ",
  "x",
];

/** Cluster directory names made of the look's old markers and answers, as the postgres user may name one. */
function hostileNames(seed: number, count: number): string[] {
  const next = rng(seed);
  const names = [
    `${MAIN}\n--- units\npostgresql@14-main active\n--- legacy keyring\npresent\n--- legacy keyring\nx`,
    "x\n--- legacy keyring\npresent\n--- legacy keyring\n",
  ];
  while (names.length < count) {
    const parts = Array.from({ length: 2 + Math.floor(next() * 8) }, () => PIECES[Math.floor(next() * PIECES.length)]);
    names.push(`x${parts.join("")}`);
  }
  return names;
}

describe("install-postgres: the installation look", () => {
  it("no cluster directory's name sets the legacy keyring: a check on a VM without it plans no PGDG work", async () => {
    const vm = await installedVm(EVENT);
    for (const name of hostileNames(30, 40)) {
      vm.state.clusterDirs = [name];
      const outcome = await pgJob(vm, { ...EVENT, check: true }).then(
        (r) => ({ wouldChange: r.would_change as string[], error: undefined }),
        (e: Error) => ({ wouldChange: [], error: e.message }),
      );
      expect({ name, wouldChange: outcome.wouldChange }).toEqual({ name, wouldChange: [] });
      // A name with blanks or line breaks: the listing cannot be trusted, so the job stops before any change.
      expect({ name, error: outcome.error }).toEqual({ name, error: expect.stringContaining("Nothing was changed") });
    }
  });

  it("the keyring that is there is found: a check foresees PGDG set up again in the run's lines, and nothing else", async () => {
    const vm = await installedVm(EVENT);
    // What an earlier version left: the served key file, and a source that names it.
    vm.state.files[LEGACY_PGDG_KEYRING] = pgpKey("pgdg.asc").toString("latin1");
    vm.state.files["/etc/apt/sources.list.d/pgdg.list"] =
      `deb [signed-by=${LEGACY_PGDG_KEYRING}] https://apt.postgresql.org/pub/repos/apt jammy-pgdg main\n`;
    const before = vm.mutating.length;
    const check = await pgJob(vm, { ...EVENT, check: true });
    expect(vm.mutating.slice(before)).toEqual([]);
    const run = await pgJob(vm, EVENT);
    expect(check.would_change).toEqual([
      `PGDG repository: wrote /etc/apt/keyrings/pgdg.gpg (replaces ${LEGACY_PGDG_KEYRING})`,
      "PGDG repository: wrote /etc/apt/sources.list.d/pgdg.list (line differed)",
      `PGDG repository: removed ${LEGACY_PGDG_KEYRING}`,
    ]);
    expect(run.changes).toEqual(check.would_change);
    expect((await pgJob(vm, { ...EVENT, check: true })).would_change).toEqual([]);
  });
});

describe("install-postgres: its looks, listed for the audit table (looks.ts)", () => {
  const dir = path.join(__dirname, "../../handlers/install-postgres");
  const declared = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".ts"))
    .flatMap((f) =>
      [...fs.readFileSync(path.join(dir, f), "utf8").matchAll(/defineLook\(\s*"([^"]+)"/g)].map((m) => m[1]),
    );

  it("lists every defineLook of install-postgres, once", () => {
    expect(declared.length).toBeGreaterThanOrEqual(4);
    expect(POSTGRES_LOOKS.map((l) => l.what).sort()).toEqual([...declared].sort());
  });

  it("says who writes what each probe reads: root for dpkg, systemd, the resolver, the kernel and /etc/apt", () => {
    const writers = Object.fromEntries(
      POSTGRES_LOOKS.flatMap((l) => l.probes.map((p) => [`${l.what}: ${p.name}`, p.writer])),
    );
    expect(writers).toMatchObject({
      "the look at PostgreSQL's packages and clusters: packages": "root",
      "the look at PostgreSQL's packages and clusters: clusters": "service",
      "the look at PostgreSQL's packages and clusters: units": "root",
      "the look at PostgreSQL's packages and clusters: hidden": "service",
      "the look at PostgreSQL's packages and clusters: legacy_keyring": "root",
      "the look at PostgreSQL's packages and clusters: name:0": "root",
      "the look at PostgreSQL's packages and clusters: own": "root",
    });
    for (const l of POSTGRES_LOOKS) for (const p of l.probes) expect(p.use.length).toBeGreaterThan(10);
  });
});

describe("install-postgres: the legacy keyring's decision", () => {
  it("takes root's fact only: a service user's is refused before anything is set up", async () => {
    const run = { progress: { info: () => {} } } as unknown as Run;
    const forged = { name: "legacy_keyring", writer: "service", code: 0, text: "" } as unknown as RootFact;
    await expect(rebuildPgdgKeyring(run, forged)).rejects.toThrow(/can be written by a service user: refused/);
  });
});

/** Every SSH exec of one job on `vm`, by its label. */
async function execsOf(vm: PostgresVm, event: object): Promise<string[]> {
  const sent: string[] = [];
  const counting: Connection = {
    target: vm.target,
    hostKeySha256: vm.hostKeySha256,
    run: (command: string, opts?: RunOptions) => {
      sent.push(opts?.label ?? command);
      return vm.run(command, opts);
    },
    close: () => vm.close(),
    tunnel: () => vm.tunnel(),
  };
  const result = await runHandler(handler, event, {
    env: TEST_ENV,
    connect: async () => counting,
    write: () => {},
    secrets: new SecretScrubber(),
  });
  expect(result.changed).toBe(false);
  return sent;
}

describe("install-postgres: round trips", () => {
  it("a rerun that changes nothing: 1 SSH exec (2 before, 8 before the facts layer): the first look reads the packages, the clusters and, through sudo -n, the server look (grants, psql, listeners)", async () => {
    // The login itself is no exec: it goes through a TCP channel of the same connection (pg-wire.ts).
    const vm = await installedVm(EVENT);
    const sent = await execsOf(vm, EVENT);
    expect(sent).toEqual(["reading /etc/os-release, cloud-init's state and the apt proxy file"]);
    const first = vm.commands.at(-1)?.command ?? "";
    expect(first).toContain("pg_lsclusters -h");
    expect(first).toContain("timeout -k 2 20 sudo -n sh -c ");
    for (const probe of ["grants", "state", "listeners", "main_pid"])
      expect(first).toContain(`'\\''%s '\\'' ${probe};`);
    expect(vm.commands.at(-1)?.sudo).toBeFalsy();
  });

  it("with a listen_addresses name: still 1, the name resolved in the first look", async () => {
    const vm = new PostgresVm({ ...newCluster(), hosts: { "db.internal": ["10.0.0.5"] } });
    const event = { ...EVENT, listen_addresses: "db.internal" };
    await pgJob(vm, event);
    const before = vm.channels.length;
    const sent = await execsOf(vm, event);
    expect(sent).toHaveLength(1);
    expect(vm.commands.at(-1)?.command).toContain("printf '%s ' name:");
    expect(vm.channels.length - before).toBe(1);
  });
});
