// A check's would_change is the following run's changes: both are the same plan (plan.ts), a check only
// stops before applying it. Driven through the real handler and kit against a stateful double of the VM,
// from states a run meets (a new cluster, hand edits, narrowed settings), each ending where a check finds
// nothing left to do.

import { validateInput } from "../../handlers/common/handler-input";
import { runHandler } from "../../handlers/common/handler-kit";
import { osFromRelease } from "../../handlers/common/os-release";
import { Progress } from "../../handlers/common/progress";
import { postgresDefinition } from "../../handlers/install-postgres/definition";
import { handler } from "../../handlers/install-postgres/handler";
import { planPostgres } from "../../handlers/install-postgres/plan";
import { asKitPlan } from "../../handlers/install-postgres/plan-preview";
import { scramSecret } from "../../handlers/install-postgres/scram";
import { inspect } from "../../handlers/install-postgres/state";
import { SecretScrubber } from "../../lib/shared/secrets";
import { UBUNTU_2204 } from "./support/fixtures";
import { PG_HBA, type PgVmState, PostgresVm } from "./support/postgres-vm";
import { TEST_ENV } from "./support/run-scripted";

const PW = "correct horse 42";
const EVENT = {
  db_name: "myapp",
  db_user: "app_user",
  db_password: PW,
  listen_addresses: "*",
  allow_remote: true,
  allowed_cidrs: ["10.0.0.0/8", "192.168.1.0/24"],
};
type Event = typeof EVENT;

const STOCK_HBA =
  "local   all             postgres                                peer\n" +
  "host    all             all             127.0.0.1/32            scram-sha-256\n";

const newCluster = (): PgVmState => ({
  listen: "localhost",
  active: true,
  files: { [PG_HBA]: STOCK_HBA },
  roles: { postgres: { login: true, superuser: true, secret: null, marked: false } },
  databases: { postgres: { owner: "postgres" } },
});

async function job(vm: PostgresVm, event: object) {
  const result = await runHandler(handler, event, {
    env: TEST_ENV,
    connect: async () => vm,
    write: () => {},
    secrets: new SecretScrubber(),
  });
  return result;
}

interface Case {
  name: string;
  /** Hand edits on a VM a run with EVENT has set up (so is a new `event`); neither: a new cluster. */
  edit?: (s: PgVmState) => void;
  event?: Partial<Event>;
  /** Some of the words the plan must hold, so that the comparison is not of two empty lists. */
  says: RegExp[];
}

const CASES: Case[] = [
  {
    name: "a new cluster: role, database, listen_addresses and pg_hba.conf lines (a restart)",
    says: [/^role app_user created/, /^database myapp created/, /^listen_addresses 'localhost' -> '\*'/, /added$/],
  },
  {
    name: "database dropped and one of our pg_hba.conf lines removed by hand (a reload)",
    edit: (s) => {
      delete s.databases.myapp;
      s.files[PG_HBA] = s.files[PG_HBA].replace(/^.*192\.168\.1\.0\/24.*\n/m, "");
    },
    says: [/^database myapp created/, /^pg_hba\.conf: hostssl myapp app_user 192\.168\.1\.0\/24 scram-sha-256 added$/],
  },
  {
    name: "password changed and LOGIN taken by hand, the database handed to another owner",
    edit: (s) => {
      s.roles.app_user.secret = scramSecret("another one");
      s.roles.app_user.login = false;
      s.databases.myapp.owner = "postgres";
    },
    says: [/may log in now/, /^password of app_user updated$/, /owner changed from postgres to app_user$/],
  },
  {
    name: "settings narrowed: another db_user, one network fewer (LOGIN and a line taken back)",
    event: { db_user: "new_user", allowed_cidrs: ["10.0.0.0/8"] },
    says: [/^role new_user created/, /^revoked: role app_user may no longer log in/, /^revoked: pg_hba\.conf: /],
  },
  {
    name: "listen_addresses back to localhost (a restart)",
    event: { listen_addresses: "localhost" },
    says: [/^listen_addresses '\*' -> 'localhost'/],
  },
];

describe("install-postgres: a check's would_change is the following run's changes", () => {
  it.each(CASES)("$name", async ({ edit, event: over, says }) => {
    const vm = new PostgresVm(newCluster());
    if (edit || over) {
      const setUp = await job(vm, EVENT);
      expect(setUp.status).toBe("ok");
      edit?.(vm.state);
    }
    const event = { ...EVENT, ...over };
    const before = structuredClone(vm.state);
    vm.mutating.length = 0;

    const check = await job(vm, { ...event, check: true });
    expect(check).toMatchObject({ status: "ok", changed: false, changes: [] });
    expect(vm.mutating).toEqual([]);
    expect(vm.state).toEqual(before);
    for (const words of says) expect(check.would_change).toContainEqual(expect.stringMatching(words));

    const run = await job(vm, event);
    expect(run.changes).toEqual(check.would_change);
    expect(run.revoked).toEqual(check.revoked);
    expect(run.changed).toBe(true);

    const again = await job(vm, { ...event, check: true });
    expect(again).toMatchObject({ would_change: [], revoked: [], verified: { user: event.db_user } });
  });

  it("a stopped cluster: a check names the start and says it cannot look past it; a run starts it", async () => {
    const vm = new PostgresVm(newCluster());
    await job(vm, EVENT);
    vm.state.active = false;
    vm.state.databases = { postgres: { owner: "postgres" } };

    const check = await job(vm, { ...EVENT, check: true });
    expect(check.would_change).toEqual(["cluster 14/main started (was inactive)"]);
    expect(check.warnings).toEqual([
      expect.stringMatching(/^postgresql@14-main is inactive, so the role, the database/),
    ]);
    const run = await job(vm, EVENT);
    expect(run.changes).toEqual(["cluster 14/main started (was inactive)", "database myapp created (owner app_user)"]);
    expect(run.warnings).toEqual([]);
    expect((await job(vm, { ...EVENT, check: true })).would_change).toEqual([]);
  });

  it("a line foreseen past a change is said by that change's preview, not by the first change's", async () => {
    const vm = new PostgresVm(newCluster());
    await job(vm, EVENT);
    delete vm.state.databases.myapp;
    // listen_addresses back to localhost: a restart, after which a run warns that remote clients cannot connect.
    const { event } = validateInput(postgresDefinition, { ...EVENT, listen_addresses: "localhost" }, TEST_ENV);
    const ctx = {
      event,
      remote: vm,
      os: osFromRelease(UBUNTU_2204),
      progress: new Progress("install-postgres", { write: () => {} }),
      secrets: new SecretScrubber(),
    } as unknown as Parameters<typeof inspect>[0];
    const { changes } = asKitPlan(planPostgres(await inspect({ ...ctx, round: 0 }), event));
    const said = await Promise.all(
      changes.map(async (c) => [c.kind, ((await c.preview?.(ctx))?.notes ?? []).map((n) => n.line)]),
    );
    expect(said).toEqual([
      ["role-database", []],
      ["restart", [expect.stringMatching(/^allow_remote is true but listen_addresses 'localhost' accepts local/)]],
    ]);
  });

  it("a round that rebuilt the served PGDG key file and started the cluster: no second rebuild planned", async () => {
    const vm = new PostgresVm(newCluster());
    await job(vm, EVENT);
    vm.state.active = false;
    vm.state.legacyPgdgKeyring = true;
    const { event } = validateInput(postgresDefinition, EVENT, TEST_ENV);
    const ctx = {
      event,
      check: false,
      remote: vm,
      os: osFromRelease(UBUNTU_2204),
      progress: new Progress("install-postgres", { write: () => {} }),
      secrets: new SecretScrubber(),
    } as unknown as Parameters<typeof inspect>[0];
    const first = await inspect({ ...ctx, round: 0 });
    const changes = planPostgres(first, event).changes;
    expect(changes.map((c) => c.kind)).toEqual(["pgdg-keyring", "cluster-start"]);

    // As the kit hands the round over: the rebuild said its lines, the start the inventory it leaves.
    vm.state.active = true;
    const installation = { ...first.installation, units: { "postgresql@14-main": "active" } };
    const applied = [
      { change: changes[0], outcome: { what: ["PGDG repository: removed /etc/apt/keyrings/pgdg.asc"] } },
      { change: changes[1], outcome: { what: changes[1].what, installation } },
    ];
    const next = await inspect({ ...ctx, round: 1, previous: { state: first, applied } });
    expect(next.installation.legacyPgdgKeyring).toBeUndefined();
    expect(planPostgres(next, event).changes.map((c) => c.kind)).not.toContain("pgdg-keyring");
  });
});
