// install-postgres run against the stateful double (postgres-vm.ts) the way the TLS suites drive it: a fresh
// cluster, one job, and check -> run -> check (the check foresees exactly what the run does, then nothing).

import { handler } from "../../../handlers/install-postgres/handler";
import type { TlsEvent } from "../../../handlers/install-postgres/tls";
import type { StackCa } from "../../../lib/construct/postgres-ca";
import { PG_HBA, type PgVmState, PostgresVm } from "./postgres-vm";
import { jobOn } from "./run-scripted";

/** A cluster as apt leaves it: local only, running, the postgres role and database. */
export const newCluster = (): PgVmState => ({
  listen: "localhost",
  active: true,
  files: { [PG_HBA]: "local all postgres peer\n" },
  roles: { postgres: { login: true, superuser: true, secret: null, marked: false } },
  databases: { postgres: { owner: "postgres" } },
});

/** One install-postgres job on `vm`. */
export const pgJob = (vm: PostgresVm, event: object) => jobOn(handler, vm, event);

/** A VM where install-postgres already ran once with `event`. */
export async function installedVm(event: object): Promise<PostgresVm> {
  const vm = new PostgresVm(newCluster());
  await pgJob(vm, event);
  return vm;
}

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

/** The TLS part of an event, issuing from `ca` unless `over` says otherwise. */
export const tlsEventFrom = (ca: StackCa, over: Partial<TlsEvent> = {}): TlsEvent => ({
  tls: "stack-ca",
  tls_names: ["db.example.test"],
  tls_renew_days: 30,
  tls_valid_days: 365,
  tls_ca_cert: ca.cert,
  tls_ca_key: ca.key,
  tls_cert: "",
  tls_key: "",
  listen_addresses: "*",
  ...over,
});

/** An install-postgres event open to 10.0.0.0/8 on every address, its certificate from `ca` (stack-ca). */
export const remoteTlsEvent = (ca: StackCa, over: object = {}) => ({
  db_name: "myapp",
  db_user: "app_user",
  db_password: "correct horse 42",
  listen_addresses: "*",
  allow_remote: true,
  allowed_cidrs: ["10.0.0.0/8"],
  tls: "stack-ca",
  tls_ca_cert: ca.cert,
  tls_ca_key: ca.key,
  ...over,
});
