// End-to-end: install-postgres against values read from the VM and hand edits on it, on a sandbox of its
// own (install-postgres.test.ts has the install's own life; the two run side by side).
import * as net from "node:net";
import type { Sandbox } from "../../dev/sandbox/index";
import { describeE2E, expectSucceeded, root, runInstaller, sandboxPerSuite, vmFingerprint } from "./support/e2e";
import { asPostgres, CLUSTER, expectNoSecretsOut, hostPsql, PG, PW1, T, until } from "./support/postgres-e2e";
import { postgresByJob } from "./support/snapshots";

// Values read from the VM and hand edits on it, attacked as the VM's own users would (issue 17): a
// database superuser renaming a cluster's directory, the application's role setting its own verifier, a
// hand edit of the root-only inventory or of /etc/hosts. A sandbox of its own, made from the postgresByJob
// snapshot, so each test runs alone too (-t): the first one to need the server runs this suite's event.
describeE2E("install-postgres on a sandbox VM: values read from the VM and hand edits", () => {
  let sb: Sandbox;
  sandboxPerSuite(
    (s) => {
      sb = s;
    },
    T,
    postgresByJob,
  );
  const event = (over: Record<string, unknown> = {}) => ({
    db_name: "shop",
    db_user: "shop_app",
    db_password: PW1,
    listen_addresses: "*",
    allow_remote: true,
    allowed_cidrs: [`${sb.hostAddress}/32`],
    ...over,
  });
  const job = (ev: Record<string, unknown>, timeoutSec?: number) =>
    runInstaller(sb, "install-postgres", ev, { secrets: [String(ev.db_password)], timeoutSec });
  let installed: Promise<void> | undefined;
  /** The distribution's PostgreSQL with the role and database in place (once per sandbox). */
  const ready = () =>
    (installed ??= (async () => {
      expectSucceeded(await job(event()));
    })());
  /** Files a command substitution run as root would have left (the cluster directories themselves aside). */
  const markers = async () =>
    (await root(sb, "find / -xdev -path /etc/postgresql -prune -o -name '*pwned*' -print 2>/dev/null; true")).trim();
  /** Renames, copies or removes a cluster directory by its bytes (blanks, $, ; or a newline in it): python, the name on stdin. */
  const clusterDir = (op: "rename" | "copy" | "back" | "remove", name: string) =>
    sb
      .rootExec(
        `python3 -c 'import os, shutil, sys
n = sys.stdin.read(); d = "/etc/postgresql/${PG}/"
op = sys.argv[1]
if op == "rename": os.rename(d + "main", d + n)
elif op == "back": os.rename(d + n, d + "main")
elif op == "copy": shutil.copytree(d + "main", d + n, symlinks=True)
else: shutil.rmtree(d + n)' ${op}`,
        { input: name, timeoutMs: 60_000 },
      )
      .then((r) => expect({ op, name, code: r.code, stderr: r.stderr }).toEqual({ op, name, code: 0, stderr: "" }));

  test(
    "a cluster directory renamed to x$(touch pwned), with blanks, a newline (forging a line) or ; : refused, naming it; beside main: skipped or refused; no marker ever",
    async () => {
      await ready();
      // A directory name cannot hold "/", so the markers are relative: touched in whatever directory a
      // command substitution would run in, and looked for on the whole file system.
      const unreadable = [
        "x$(touch pwned)",
        "x y",
        "x\ny",
        "x;touch pwned2",
        `x\n${PG} main 5433 online postgres <unknown> <unknown>`,
      ];
      const tokens = ["x$(touch${IFS}pwned3)", "x;touch${IFS}pwned4", "x`touch${IFS}pwned5`", "x|touch${IFS}pwned6"];
      // Control: such a name pasted into a root shell command does leave its marker, and the look finds it.
      const control = await sb.rootExec(`cd /root && n="$(cat)" && sh -c "echo postgresql@${PG}-$n" >/dev/null`, {
        input: "x$(touch${IFS}pwned-control)",
      });
      expect(control.code).toBe(0);
      expect(await markers()).toBe("/root/pwned-control");
      await root(sb, "rm /root/pwned-control");
      const refusal = (name: string) =>
        unreadable.includes(name)
          ? /(pg_lsclusters printed (a line|lines) this installer cannot read as a cluster|has a name with blanks, tabs or line breaks).*Nothing was changed/
          : new RegExp(
              `refusing the PostgreSQL ${PG} cluster pg_lsclusters lists: .* is not one pg_createcluster accepts .*Nothing was changed`,
            );
      // The only cluster renamed: systemd knows no unit of that name, so a job would start it by that name.
      for (const name of [...tokens, ...unreadable]) {
        await clusterDir("rename", name);
        try {
          const run = await job(event());
          const seen = {
            name,
            phase: run.phase,
            refusal: refusal(name).test(run.message),
            markers: await markers(),
            created: run.lines.some((l) => /pg_createcluster/.test(l)),
          };
          expect(seen).toEqual({ name, phase: "Failed", refusal: true, markers: "", created: false });
        } finally {
          await clusterDir("back", name);
        }
      }
      for (const name of [...unreadable, ...tokens]) {
        await clusterDir("copy", name);
        try {
          const run = await job(event());
          if (unreadable.includes(name)) {
            expect({ name, phase: run.phase }).toEqual({ name, phase: "Failed" });
            expect(run.message).toMatch(
              /(pg_lsclusters printed (a line|lines) this installer cannot read as a cluster|has a name with blanks, tabs or line breaks).*Nothing was changed/,
            );
          } else {
            expectSucceeded(run);
            expect(run.result).toMatchObject({ cluster: CLUSTER, changed: false });
            expect(run.result.warnings).toEqual([
              expect.stringContaining(`name ${JSON.stringify(name)} is not one pg_createcluster accepts`),
            ]);
          }
        } finally {
          await clusterDir("remove", name);
        }
        expect(await markers()).toBe("");
      }
      expect((await root(sb, `systemctl is-active postgresql@${PG}-main`)).trim()).toBe("active");
      expect(await hostPsql(sb, "shop_app", "shop", PW1, "SELECT 6 * 7")).toEqual({
        code: 0,
        stdout: "42",
        stderr: "",
      });
    },
    T,
  );

  test(
    "a verifier of more iterations than the server makes (the role sets 100,000 itself; 2^31-1): the next run sets the password again at once, with 4096",
    async () => {
      await ready();
      const key = Buffer.alloc(32, 1).toString("base64");
      const verifier = (n: number) => `SCRAM-SHA-256$${n}:${Buffer.alloc(16, 2).toString("base64")}$${key}:${key}`;
      const stored = async () =>
        (
          await asPostgres(sb, "SELECT split_part(rolpassword, ':', 1) FROM pg_authid WHERE rolname = 'shop_app';\n")
        ).trim();
      // As the role itself, over TCP from the host: any role may set its own password to a verifier it made.
      // (The server first checks it against the empty password, which costs the same PBKDF2 there: 100,000
      // rounds take a moment, 2^31-1 hours, after which the server stores it all the same.)
      expect(
        await hostPsql(sb, "shop_app", "shop", PW1, `ALTER ROLE shop_app PASSWORD '${verifier(100_000)}'`),
      ).toEqual({
        code: 0,
        stdout: "ALTER ROLE",
        stderr: "",
      });
      expect(await stored()).toBe("SCRAM-SHA-256$100000");
      const above = await job(event(), 120);
      expectSucceeded(above);
      expect(above.result.changes).toEqual([
        "password of shop_app set again: its stored SCRAM-SHA-256 verifier was not checked (its iteration count 100000 is above the 4096 this installer computes), so it is replaced",
      ]);
      expect(await stored()).toBe("SCRAM-SHA-256$4096");
      // 2^31-1, as the role would leave it after that wait: written straight into pg_authid here.
      await asPostgres(
        sb,
        `UPDATE pg_authid SET rolpassword = '${verifier(2147483647)}' WHERE rolname = 'shop_app';\n`,
      );
      expect(await stored()).toBe("SCRAM-SHA-256$2147483647");
      // 2^31-1 PBKDF2 rounds take the job many minutes: the unfixed one runs out of this budget.
      const run = await job(event(), 120);
      expectSucceeded(run);
      expect(run.result.changes).toEqual([
        "password of shop_app set again: its stored SCRAM-SHA-256 verifier was not checked (its iteration count 2147483647 is above the 4096 this installer computes), so it is replaced",
      ]);
      expect(await stored()).toBe("SCRAM-SHA-256$4096");
      expect((await hostPsql(sb, "shop_app", "shop", PW1)).stdout).toBe(`shop_app|${sb.hostAddress}`);
      expectNoSecretsOut(run);
    },
    T,
  );

  test(
    "a hand-edited inventory naming postgres and a role vm-install did not create: both keep LOGIN, the job says why; a superuser as dbUser is refused",
    async () => {
      await ready();
      await asPostgres(sb, "CREATE ROLE outsider LOGIN;\nCREATE ROLE boss SUPERUSER LOGIN;\n");
      const file = "/var/lib/vm-install/grants.json";
      const inv = JSON.parse(await root(sb, `cat ${file}`));
      inv.postgres.roles[CLUSTER] = ["postgres", "outsider", "shop_app"];
      await sb.rootExec(`cat > ${file}`, { input: JSON.stringify(inv), timeoutMs: 30_000 });
      const run = await job(event());
      expectSucceeded(run);
      expect(run.result.revoked).toEqual([]);
      expect(run.result.warnings).toEqual([
        expect.stringMatching(
          /^LOGIN of role "postgres" not taken back although \/var\/lib\/vm-install\/grants\.json lists it: not a role name vm-install creates/,
        ),
        expect.stringMatching(/^LOGIN of role "outsider" not taken back .*: it carries no vm-install mark/),
      ]);
      const login =
        "SELECT string_agg(rolname || '=' || rolcanlogin, ',' ORDER BY rolname) FROM pg_roles WHERE rolname IN ('postgres', 'outsider', 'shop_app');\n";
      expect((await asPostgres(sb, login)).trim()).toBe("outsider=true,postgres=true,shop_app=true");
      expect(JSON.parse(await root(sb, `cat ${file}`)).postgres.roles).toEqual({ [CLUSTER]: ["shop_app"] });
      // The role vm-install created carries its mark; the outsider none.
      const marks =
        "SELECT rolname || '=' || coalesce(shobj_description(oid, 'pg_authid'), '') FROM pg_roles WHERE rolname IN ('outsider', 'shop_app') ORDER BY 1;\n";
      expect((await asPostgres(sb, marks)).trim().split("\n")).toEqual([
        "outsider=",
        expect.stringMatching(/^shop_app=vm-install: created by install-postgres/),
      ]);

      const before = await vmFingerprint(sb);
      const boss = await job(event({ db_user: "boss" }));
      expect(boss.phase).toBe("Failed");
      expect(boss.message).toMatch(/db_user boss is an existing superuser role on the server: .*Nothing was changed/);
      expect(await vmFingerprint(sb)).toEqual(before);
    },
    T,
  );

  test(
    "listen_addresses names: one resolving to another host is refused before anything changes and nothing reaches that host; the VM's own is used by its address",
    async () => {
      await ready();
      await root(sb, `printf '%s elsewhere.test\\n%s self.test\\n' ${sb.hostAddress} ${sb.address} >> /etc/hosts`);
      // Whatever listens at the other host's address sees no connection at all (no password, no attempt).
      const seen: string[] = [];
      const trap = net.createServer((c) => {
        seen.push(String(c.remoteAddress));
        c.destroy();
      });
      await new Promise<void>((res, rej) => trap.once("error", rej).listen(5432, sb.hostAddress, () => res()));
      try {
        const before = await vmFingerprint(sb);
        const run = await job(event({ listen_addresses: "elsewhere.test" }));
        expect(run.phase).toBe("Failed");
        expect(run.message).toContain(
          `listen_addresses: elsewhere.test resolves on the VM to ${sb.hostAddress}, which is not an address of the VM (its own: `,
        );
        expect(run.message).toMatch(/nothing was changed and no password was sent/);
        expect(await vmFingerprint(sb)).toEqual(before);
        expectNoSecretsOut(run);
        expect(seen).toEqual([]);
        // Control: a connection from the VM to that name does reach the trap.
        await root(sb, `python3 -c 'import socket; socket.create_connection(("elsewhere.test", 5432), 10).close()'`);
        await until(async () => seen.length === 1, "the control connection");
        expect(seen).toEqual([sb.address]);
      } finally {
        await new Promise((res) => trap.close(res));
      }

      const own = await job(
        event({ listen_addresses: "self.test", allowed_cidrs: [`${sb.hostAddress}/32`, `${sb.address}/32`] }),
      );
      expectSucceeded(own);
      expect(own.result).toMatchObject({
        listen_addresses: "self.test",
        restarted: true,
        verified: { host: sb.address },
      });
      // Back to "*" for what follows.
      expectSucceeded(await job(event()));
    },
    T,
  );
});
