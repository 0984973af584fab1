// Every way a secret leaves install-postgres (issue 30: a secret goes only to a peer that proved itself),
// on the stateful double over a whole TLS install: the role's password never reaches the VM (a SCRAM
// verifier for ALTER ROLE; the login check proves it on an SSH channel, to a server that proves itself in
// turn), and the server's TLS key is written only as postgres, 0600 from creation, replacing a link at its
// path rather than following it into a directory.

import { storedPasswordState } from "../../handlers/install-postgres/scram";
import { generateCa } from "../../lib/construct/postgres-ca";
import { newCluster, pgJob, remoteTlsEvent } from "./support/postgres-jobs";
import { PostgresVm, TLS_KEY } from "./support/postgres-vm";
import { renameOf, writtenFiles } from "./support/remote-writes";

const PW = "correct horse 42";

test("the password and the TLS key leave the job only as they should", async () => {
  const ca = await generateCa("ca");
  const vm = new PostgresVm(newCluster());
  const result = await pgJob(vm, remoteTlsEvent(ca, { db_password: PW }));
  expect(result).toMatchObject({ status: "ok", verified: { host: "127.0.0.1", auth: "scram-sha-256" } });

  // The password: in no command, no stdin, no exported variable; the role holds a verifier of it.
  for (const c of vm.commands) expect(`${c.command}\n${c.stdin}`).not.toContain(PW);
  expect(storedPasswordState(vm.state.roles.app_user.secret, PW, "app_user")).toBe("same");
  // The login check: one channel, a valid proof, and not a byte of the password on it.
  expect(vm.channels.map((ch) => ch.proofAccepted)).toEqual([true]);
  expect(vm.channels[0].received().toString("latin1")).not.toContain(PW);

  // The key: one write (remote-file.ts), as postgres, 0600 given (not kept), moved onto its path with -T.
  const keyWrites = vm.commands.filter((c) => c.stdin.includes("PRIVATE KEY"));
  expect(keyWrites).toHaveLength(1);
  expect(keyWrites[0]).toMatchObject({ user: "postgres" });
  expect(keyWrites[0].command).toMatch(/^\{ m=0600; /);
  expect(keyWrites[0].command).toContain(renameOf(TLS_KEY));
  // Every other write of the cluster's files is postgres' too, never root's.
  const clusterWrites = vm.commands.filter((c) =>
    writtenFiles(c.command, c.stdin).some((f) => f.path.startsWith("/etc/postgresql/")),
  );
  expect(clusterWrites.length).toBeGreaterThan(1);
  for (const c of clusterWrites) expect(c.user).toBe("postgres");
});
