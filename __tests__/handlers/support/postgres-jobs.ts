// install-postgres run against the stateful double (postgres-vm.ts) the way the TLS suites drive it: a fresh
// cluster, one job, and check -> run -> check (the check foresees exactly what the run does, then nothing).
import { runHandler } from "../../../handlers/common/handler-kit";
import { handler } from "../../../handlers/install-postgres/handler";
import { SecretScrubber } from "../../../shared/secrets";
import { PG_HBA, type PgVmState, type PostgresVm } from "./postgres-vm";
import { TEST_ENV } from "./run-scripted";

/** A cluster as apt leaves it: local only, running, the postgres role and database. */
export const newCluster = (): PgVmState => ({
  listen: "localhost",
  active: true,
  files: { [PG_HBA]: "local all postgres peer\n" },
  roles: { postgres: { login: true, superuser: true, secret: null, marked: false } },
  databases: { postgres: { owner: "postgres" } },
});

/** One install-postgres job on `vm`. */
export const pgJob = (vm: PostgresVm, event: object) =>
  runHandler(handler, event, {
    env: TEST_ENV,
    connect: async () => vm,
    write: () => {},
    secrets: new SecretScrubber(),
  });

/** Check, run, check again: the check changes nothing, the run does what it said, then nothing is left. */
export async function checkThenRun(vm: PostgresVm, event: object): Promise<string[]> {
  const before = structuredClone(vm.state);
  vm.mutating.length = 0;
  const check = await pgJob(vm, { ...event, check: true });
  expect(check).toMatchObject({ status: "ok", changed: false });
  expect(vm.mutating).toEqual([]);
  expect(vm.state).toEqual(before);
  const run = await pgJob(vm, event);
  expect(run.changes).toEqual(check.would_change);
  expect((await pgJob(vm, { ...event, check: true })).would_change).toEqual([]);
  return check.would_change as string[];
}
