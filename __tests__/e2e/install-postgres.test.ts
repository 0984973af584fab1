// End-to-end: install-postgres on a fresh sandbox VM (Debian 12 -> PostgreSQL 15 from Debian; with
// VM_INSTALL_SANDBOX_RELEASE=trixie, Debian 13 -> PostgreSQL 17: support/release.ts), bundled
// and run exactly as a job runs. The checks that matter are made from outside the job: the host's own
// psql logs in over the sandbox network (and is refused where pg_hba.conf has no entry for it), the
// target's process list is polled every ~100 ms while a job runs, and the server's log (with
// log_statement = 'all' switched on) and the journal are searched for the password afterwards.
//
// Host prerequisite: psql (Debian's postgresql-client, 15 here). Under CI=true a sandbox that cannot run
// fails the suite (describeE2E); elsewhere it is skipped with the reason.
import { execFileSync } from "node:child_process";
import { type Sandbox, startSandbox } from "../../dev/sandbox/index";
import { PGDG_KEY_FINGERPRINT } from "../../handlers/install-postgres/definition";
import { armour, pgpKey } from "../handlers/support/pgp-fixtures";
import { waitFor } from "../runner/fixtures";
import { startFakeDockerRepo } from "./fixtures/docker-repo";
import {
  describeE2E,
  dpkgStatus,
  expectSucceeded,
  root,
  runInstaller,
  vmFingerprint,
  watchProcesses,
} from "./support/e2e";
import {
  asPostgres,
  CLUSTER,
  CONF,
  expectNoSecretsOut,
  hostPsql,
  PG,
  PW1,
  PW2,
  PW3,
  T,
  TOKENS,
  targetLogs,
} from "./support/postgres-e2e";
import { FACTS, RELEASE } from "./support/release";

describeE2E("install-postgres on a sandbox VM, through the bundle and the job runner", () => {
  let sb: Sandbox;
  let hostCidr: string;
  const event = (over: Record<string, unknown> = {}) => ({
    db_name: "shop",
    db_user: "shop_app",
    db_password: PW1,
    listen_addresses: "*",
    allow_remote: true,
    allowed_cidrs: [hostCidr],
    ...over,
  });
  /** Runs the job as the stack would (the password is a known secret of the runner too), watching `ps`. */
  const job = (ev: Record<string, unknown>) =>
    watchProcesses(sb, [...TOKENS, "SCRAM-SHA-256$"], () =>
      runInstaller(sb, "install-postgres", ev, { secrets: [String(ev.db_password)] }),
    );

  /** A refused repository left nothing: no apt file names it, the keyrings are as before, apt never read it. */
  const expectNoTrace = async (repo: { url: string; requests: string[] }, keyringsBefore: string) => {
    expect(await root(sb, `grep -r ${new URL(repo.url).host} /etc/apt; echo "grep exit $?"`)).toBe("grep exit 1\n");
    expect(await root(sb, "ls -A /etc/apt/keyrings")).toBe(keyringsBefore);
    expect(repo.requests).toEqual(["/linux/debian/gpg"]);
  };
  /** The distribution's PostgreSQL as the fresh-VM test left it: running, and the role logs in from the host. */
  const expectStillServing = async () => {
    expect((await root(sb, "systemctl is-active postgresql")).trim()).toBe("active");
    expect(await hostPsql(sb, "shop_app", "shop", PW1, "SELECT 6 * 7")).toEqual({ code: 0, stdout: "42", stderr: "" });
  };

  beforeAll(async () => {
    try {
      execFileSync("psql", ["--version"], { stdio: "ignore" });
    } catch {
      throw new Error("the host needs psql for these tests: apt-get install -y postgresql-client");
    }
    sb = await startSandbox();
    hostCidr = `${sb.hostAddress}/32`;
  }, T);
  afterAll(async () => {
    await sb?.stop();
  }, T);

  test(
    "control: the process watch sees a secret planted in a command line and in an environment",
    async () => {
      // The planted processes live until the watch has polled more than 3 times with both in sight (the
      // watch's own progress, not a timer: a loaded machine polls slower), then go.
      const stop = "/run/pg9tok-stop";
      const { hits, polls } = await watchProcesses(sb, ["Pg9tok"], async (watch) => {
        const wait = `while [ ! -e ${stop} ]; do sleep 0.1; done`;
        const planted = sb.rootSpawn(`sh -c '${wait}' Pg9tok-args & env PLANTED=Pg9tok-env sh -c '${wait}'; wait`);
        const seen = () => ["Pg9tok-args", "PLANTED=Pg9tok-env"].every((n) => watch.hits().some((l) => l.includes(n)));
        await waitFor(() => watch.polls() > 3 && seen(), 60_000);
        await root(sb, `touch ${stop}`);
        await planted.done;
        await root(sb, `rm -f ${stop}`);
      });
      expect(polls).toBeGreaterThan(3);
      expect(hits.some((l) => l.includes("Pg9tok-args"))).toBe(true);
      expect(hits.some((l) => l.includes("PLANTED=Pg9tok-env"))).toBe(true);
    },
    T,
  );

  test(
    `fresh VM: PostgreSQL ${PG} from Debian, role, database, remote access for the host; nothing secret in ps`,
    async () => {
      const { value: run, hits, polls } = await job(event());
      expectSucceeded(run);
      const r = run.result;
      expect(r).toMatchObject({
        status: "ok",
        pg_major: PG,
        installed_from: "distribution",
        cluster: CLUSTER,
        port: 5432,
        db_name: "shop",
        db_user: "shop_app",
        listen_addresses: "*",
        allow_remote: true,
        allowed_cidrs: [hostCidr],
        restarted: true,
        reloaded: false,
        warnings: [],
        os: { id: "debian", codename: RELEASE, version_id: FACTS.version },
        host_key_sha256: sb.hostKeySha256,
        verified: { host: "127.0.0.1", port: 5432, user: "shop_app", database: "shop" },
      });
      expect(r.pg_version).toMatch(new RegExp(`^${PG}\\.\\d+$`));
      expect(r.changes).toEqual([
        `installed postgresql-${PG}`,
        "role shop_app created (LOGIN, password set)",
        "database shop created (owner shop_app)",
        `listen_addresses 'localhost' -> '*' (${CONF}/conf.d/90-vm-install.conf)`,
        `pg_hba.conf: hostssl shop shop_app ${hostCidr} scram-sha-256 added`,
      ]);
      expect((await dpkgStatus(sb, [`postgresql-${PG}`]))[`postgresql-${PG}`]).toBe("install ok installed");
      expectNoSecretsOut(run);
      expect(polls).toBeGreaterThan(20); // the install takes seconds: the process list was really watched
      expect(hits).toEqual([]);

      // From the host, over the sandbox network: the role logs in with the password, from the host's address.
      const ok = await hostPsql(sb, "shop_app", "shop", PW1);
      expect(ok).toEqual({ code: 0, stdout: `shop_app|${sb.hostAddress}`, stderr: "" });
      expect((await hostPsql(sb, "shop_app", "shop", `${PW1}x`)).stderr).toMatch(
        /password authentication failed for user "shop_app"/,
      );
      // hostssl (remote_ssl's default): the same login without SSL finds no entry; Debian's cluster has ssl = on.
      const plain = await hostPsql(sb, "shop_app", "shop", PW1, undefined, "disable");
      expect(plain.code).not.toBe(0);
      expect(plain.stderr).toMatch(
        /no pg_hba\.conf entry for host .*, user "shop_app", database "shop", no encryption/,
      );
      expect(
        (await hostPsql(sb, "shop_app", "shop", PW1, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()"))
          .stdout,
      ).toBe("t");
    },
    T,
  );

  test(
    "a rerun changes nothing: changed false, no restart, no reload",
    async () => {
      const { value: run, hits } = await job(event());
      expectSucceeded(run);
      expect(run.result).toMatchObject({
        changed: false,
        changes: [],
        restarted: false,
        reloaded: false,
        installed_from: "already installed",
      });
      expect(run.result.summary).toMatch(
        new RegExp(`^nothing to do: PostgreSQL ${PG}\\.\\d+ \\(${PG}/main, port 5432\\)`),
      );
      expect(run.result.timings_ms).not.toHaveProperty("apt_install");
      expectNoSecretsOut(run);
      expect(hits).toEqual([]);
    },
    T,
  );

  test(
    "check mode after hand edits (database dropped, our pg_hba.conf line removed): would_change names them, the VM is byte-for-byte unchanged; a run repairs, a check then finds nothing",
    async () => {
      const hba = `${CONF}/pg_hba.conf`;
      await root(sb, "cd / && runuser -u postgres -- dropdb shop");
      // Rewritten in place (same inode, owner and mode), as an admin's editor would leave it.
      await root(
        sb,
        `grep -v 'vm-install:install-postgres' ${hba} > /root/hba.edit; cat /root/hba.edit > ${hba}; rm /root/hba.edit`,
      );
      const before = await vmFingerprint(sb);

      const { value: check, hits } = await job(event({ check: true }));
      expectSucceeded(check);
      const missing = [
        "database shop created (owner shop_app)",
        `pg_hba.conf: hostssl shop shop_app ${hostCidr} scram-sha-256 added`,
      ];
      expect(check.result).toMatchObject({
        changed: false,
        changes: [],
        would_change: missing,
        restarted: false,
        reloaded: false,
        verified: null,
      });
      expect(check.result.summary).toBe(`check: 2 changes would be made: ${missing.join("; ")}`);
      expectNoSecretsOut(check);
      expect(hits).toEqual([]);
      expect(await vmFingerprint(sb)).toEqual(before);

      // A real run makes exactly the changes the check foresaw, in the same words.
      const { value: repair } = await job(event());
      expectSucceeded(repair);
      expect(repair.result).toMatchObject({ changes: missing, reloaded: true, restarted: false });
      // Control: the snapshot does see such changes.
      const repaired = await vmFingerprint(sb);
      expect([
        repaired.databases === before.databases,
        repaired.files === before.files,
        repaired.started === before.started,
      ]).toEqual([false, false, true]);
      const { value: again } = await job(event({ check: true }));
      expectSucceeded(again);
      expect(again.result).toMatchObject({
        would_change: [],
        verified: { host: "127.0.0.1", port: 5432, user: "shop_app", database: "shop" },
      });
      expect(again.result.summary).toMatch(
        new RegExp(`^check: nothing would change; nothing to do: PostgreSQL ${PG}\\.\\d+ \\(${PG}/main, port 5432\\)`),
      );
    },
    T,
  );

  test(
    `another major from a repository whose key is not PGDG's: fails naming both fingerprints, no trace in /etc/apt, PostgreSQL ${PG} keeps serving`,
    async () => {
      // Any signed repository served from the host's side will do: the job must stop at its key.
      const repo = await startFakeDockerRepo({ host: sb.hostAddress, suite: RELEASE });
      try {
        const keyringsBefore = await root(sb, "ls -A /etc/apt/keyrings");
        const keyUrl = `${repo.url}/debian/gpg`;
        const { value: run } = await job(
          event({ pg_version: "16", repo_url: `${repo.url}/debian`, repo_key_url: keyUrl }),
        );
        expect(run.phase).toBe("Failed");
        expect(run.message).toContain(
          `the key at ${keyUrl} for apt repository pgdg is not the expected key: expected ${PGDG_KEY_FINGERPRINT}, served ${repo.fingerprint}`,
        );
        expect(run.message).toContain("nothing was written to the VM");
        expectNoSecretsOut(run);

        await expectNoTrace(repo, keyringsBefore);
        expect((await dpkgStatus(sb, ["postgresql-16"]))["postgresql-16"]).not.toBe("install ok installed");
        await expectStillServing();
      } finally {
        await repo.stop();
      }
    },
    T,
  );

  test(
    "another major from a repository serving PGDG's real key with a second key hidden beside it (another armour block), the repository signed by that one: " +
      `refused naming it, no maintainer script of the repository ran, no trace in /etc/apt, PostgreSQL ${PG} keeps serving`,
    async () => {
      const marker = "/var/lib/vm-install-e2e-smuggled-postinst";
      // A repository laid out like PGDG's (<repo_url>/dists/<codename>-pgdg/main), its postgresql-16 a marker.
      const repo = await startFakeDockerRepo({
        host: sb.hostAddress,
        suite: `${RELEASE}-pgdg`,
        component: "main",
        packages: [{ name: "postgresql-16", version: `16.9-1.${FACTS.pgdgTag}+1` }],
        postinstMarker: marker,
        servedKey: (own) => Buffer.concat([pgpKey("pgdg.asc"), armour("PGP MESSAGE", own.binary)]),
      });
      try {
        const keyringsBefore = await root(sb, "ls -A /etc/apt/keyrings");
        const keyUrl = `${repo.url}/debian/gpg`;
        // The default repo_key_fingerprint: PGDG's key is there, as the check expects; the repository's own is not.
        const { value: run } = await job(
          event({ pg_version: "16", repo_url: `${repo.url}/debian`, repo_key_url: keyUrl }),
        );
        expect(run.phase).toBe("Failed");
        expect(run.message).toContain(
          `the key at ${keyUrl} for apt repository pgdg holds more than the expected key ${PGDG_KEY_FINGERPRINT}: besides it, key ${repo.fingerprint} (not expected)`,
        );
        expect(run.message).toContain('a second armour block, "-----BEGIN PGP MESSAGE-----"');
        expect(run.message).toContain("Nothing was written to the VM (no key, no source)");
        expectNoSecretsOut(run);

        expect(await root(sb, `ls ${marker} 2>&1; true`)).toMatch(/No such file or directory/);
        await expectNoTrace(repo, keyringsBefore);
        expect(await dpkgStatus(sb, ["postgresql-16"])).toEqual({});
        await expectStillServing();
      } finally {
        await repo.stop();
      }
    },
    T,
  );

  test(
    "a pgdg.asc an earlier version wrote (the served file: PGDG's key with a second one beside it) on a VM that needs nothing: " +
      "the run rebuilds pgdg.gpg with PGDG's key alone, points pgdg.list at it, removes the .asc; a check foresaw it, a rerun changes nothing",
    async () => {
      // Served at repo_key_url: PGDG's real key alone, as the repository publishes it.
      const repo = await startFakeDockerRepo({
        host: sb.hostAddress,
        suite: `${RELEASE}-pgdg`,
        component: "main",
        packages: [{ name: "postgresql-16", version: `16.9-1.${FACTS.pgdgTag}+1` }],
        servedKey: () => pgpKey("pgdg.asc"),
      });
      const keyUrl = `${repo.url}/debian/gpg`;
      const ev = event({ repo_url: `${repo.url}/debian`, repo_key_url: keyUrl });
      try {
        const smuggled = Buffer.concat([pgpKey("pgdg.asc"), armour("PGP MESSAGE", repo.publicKeyBinary)]);
        await sb.rootExec(
          "install -d -m 0755 /etc/apt/keyrings && cat > /etc/apt/keyrings/pgdg.asc && chmod 644 /etc/apt/keyrings/pgdg.asc",
          {
            input: smuggled.toString("latin1"),
          },
        );
        await root(
          sb,
          `echo 'deb [signed-by=/etc/apt/keyrings/pgdg.asc] ${repo.url}/debian ${RELEASE}-pgdg main' > /etc/apt/sources.list.d/pgdg.list`,
        );

        const check = await runInstaller(sb, "install-postgres", { ...ev, check: true }, { secrets: [PW1] });
        expectSucceeded(check);
        expect(await root(sb, "ls -A /etc/apt/keyrings")).toBe("pgdg.asc\n");

        const { value: run } = await job(ev);
        expectSucceeded(run);
        expect(run.result.changes).toEqual([
          "PGDG repository: wrote /etc/apt/keyrings/pgdg.gpg (replaces /etc/apt/keyrings/pgdg.asc)",
          "PGDG repository: wrote /etc/apt/sources.list.d/pgdg.list (line differed)",
          "PGDG repository: removed /etc/apt/keyrings/pgdg.asc",
        ]);
        // The check before foresaw exactly that: the key fetched and compared, nothing written.
        expect(check.result.would_change).toEqual(run.result.changes);
        expect(await root(sb, "ls -A /etc/apt/keyrings")).toBe("pgdg.gpg\n");
        // Only PGDG's key is left for apt to trust (gpg on the VM reads the keyring as apt's gpgv would).
        const keys = await root(
          sb,
          "gpg --batch --with-colons --show-keys /etc/apt/keyrings/pgdg.gpg | grep '^fpr' | cut -d: -f10",
        );
        expect(keys.split("\n").filter(Boolean)[0]).toBe(PGDG_KEY_FINGERPRINT);
        expect(keys).not.toContain(repo.fingerprint);
        expect(await root(sb, "cat /etc/apt/sources.list.d/pgdg.list")).toContain(
          "signed-by=/etc/apt/keyrings/pgdg.gpg",
        );
        await expectStillServing();

        const { value: again } = await job(ev);
        expectSucceeded(again);
        expect(again.result).toMatchObject({ changed: false, changes: [] });
      } finally {
        await repo.stop();
        await root(sb, "rm -f /etc/apt/sources.list.d/pgdg.list /etc/apt/keyrings/pgdg.gpg /etc/apt/keyrings/pgdg.asc");
      }
    },
    T,
  );

  test(
    "a new password with quotes, $(...), backticks and backslashes: the old one stops working, the new one works; neither is in ps or any log",
    async () => {
      // Make the server log every statement, so "not in the log" means the job kept it out.
      await asPostgres(sb, "ALTER SYSTEM SET log_statement = 'all';\nSELECT pg_reload_conf();\n");
      const { value: run, hits } = await job(event({ db_password: PW2 }));
      expectSucceeded(run);
      expect(run.result).toMatchObject({
        changed: true,
        changes: ["password of shop_app updated"],
        restarted: false,
        reloaded: false,
      });
      expectNoSecretsOut(run);
      expect(hits).toEqual([]);

      expect((await hostPsql(sb, "shop_app", "shop", PW1)).stderr).toMatch(/password authentication failed/);
      expect((await hostPsql(sb, "shop_app", "shop", PW2)).stdout).toBe(`shop_app|${sb.hostAddress}`);

      const logs = await targetLogs(sb);
      expect(logs).toMatch(/LOG: {2}statement: SELECT json_build_object/); // logging was really on for the job's session
      for (const t of [...TOKENS, PW1, PW2]) expect(logs).not.toContain(t);
      expect(logs).not.toContain("SCRAM-SHA-256$");
      expect(logs).not.toMatch(/ALTER ROLE/);

      // No file anywhere in the temp dirs holds the password.
      const left = await sb.rootExec("grep -rlF -f /dev/stdin /tmp /var/tmp /home /root 2>/dev/null; true", {
        input: "Pg2tok\n",
        timeoutMs: 60_000,
      });
      expect(left.stdout.trim()).toBe("");
    },
    T,
  );

  test(
    "allowed_cidrs not covering the host: its line is replaced, a reload, and the host is refused (no pg_hba.conf entry)",
    async () => {
      const { value: run } = await job(event({ db_password: PW2, allowed_cidrs: ["192.0.2.0/24"] }));
      expectSucceeded(run);
      expect(run.result).toMatchObject({ restarted: false, reloaded: true, allowed_cidrs: ["192.0.2.0/24"] });
      expect(run.result.changes).toEqual([
        "pg_hba.conf: hostssl shop shop_app 192.0.2.0/24 scram-sha-256 added",
        `revoked: pg_hba.conf: hostssl shop shop_app ${hostCidr} scram-sha-256 removed (written by vm-install, no longer in the settings)`,
      ]);
      const refused = await hostPsql(sb, "shop_app", "shop", PW2);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(
        new RegExp(
          `no pg_hba\\.conf entry for host "${sb.hostAddress.replace(/\./g, "\\.")}", user "shop_app", database "shop"`,
        ),
      );
    },
    T,
  );

  test(
    "a non-ASCII password (hashed by the server, logging off for the session): works from the host, a rerun changes nothing, not in any log",
    async () => {
      const first = await job(event({ db_password: PW3 }));
      expectSucceeded(first.value);
      expect(first.value.result.changes).toEqual([
        "password of shop_app updated",
        `pg_hba.conf: hostssl shop shop_app ${hostCidr} scram-sha-256 added`,
        "revoked: pg_hba.conf: hostssl shop shop_app 192.0.2.0/24 scram-sha-256 removed (written by vm-install, no longer in the settings)",
      ]);
      expect(first.hits).toEqual([]);
      expectNoSecretsOut(first.value);
      expect((await hostPsql(sb, "shop_app", "shop", PW3)).stdout).toBe(`shop_app|${sb.hostAddress}`);

      const again = await job(event({ db_password: PW3 }));
      expectSucceeded(again.value);
      expect(again.value.result).toMatchObject({ changed: false, changes: [], restarted: false, reloaded: false });

      const logs = await targetLogs(sb);
      for (const t of [...TOKENS, PW3, "пароль"]) expect(logs).not.toContain(t);
    },
    T,
  );

  test(
    "dbUser changed: the old role's pg_hba line is gone from the VM and it cannot log in, the new role can; the inventory is root's, 0600",
    async () => {
      const { value: run } = await job(event({ db_password: PW3, db_user: "shop_new" }));
      expectSucceeded(run);
      expect([...run.result.revoked].sort()).toEqual([
        `pg_hba.conf: hostssl shop shop_app ${hostCidr} scram-sha-256`,
        "role shop_app: LOGIN",
      ]);
      expect(run.result.changes).toContain(
        "revoked: role shop_app may no longer log in (NOLOGIN, its sessions ended; vm-install had created it or given it LOGIN; the role, what it owns and its data are kept)",
      );
      const hba = await sb.rootExec(`cat ${CONF}/pg_hba.conf`);
      expect(hba.stdout).not.toMatch(/shop_app/);
      expect(hba.stdout).toMatch(
        new RegExp(`^hostssl +shop +shop_new +${hostCidr.replace(/\./g, "\\.")} +scram-sha-256 `, "m"),
      );
      expect((await hostPsql(sb, "shop_app", "shop", PW3)).code).not.toBe(0);
      expect((await hostPsql(sb, "shop_new", "shop", PW3)).stdout).toBe(`shop_new|${sb.hostAddress}`);
      // Kept, not dropped: the old role still exists, only without LOGIN.
      expect((await asPostgres(sb, "SELECT rolcanlogin FROM pg_roles WHERE rolname = 'shop_app';\n")).trim()).toBe("f");

      const perms = await sb.rootExec(
        "stat -c '%U:%G %a' /var/lib/vm-install /var/lib/vm-install/grants.json; cat /var/lib/vm-install/grants.json",
      );
      const [dir, file, ...json] = perms.stdout.split("\n");
      expect([dir, file]).toEqual(["root:root 700", "root:root 600"]);
      expect(JSON.parse(json.join("\n")).postgres).toEqual({
        hba: { [`${CONF}/pg_hba.conf`]: [`hostssl shop shop_new ${hostCidr} scram-sha-256`] },
        roles: { [CLUSTER]: ["shop_new"] },
      });
    },
    T,
  );

  test(
    "an invalid event (SQL in db_name) fails before any SSH command, naming the key",
    async () => {
      const run = await runInstaller(sb, "install-postgres", event({ db_name: `shop"; DROP DATABASE shop; --` }), {
        secrets: [PW1],
      });
      expect(run.phase).toBe("Failed");
      expect(run.message).toMatch(
        /install-postgres: invalid input, nothing was done on the VM: [\s\S]*event db_name: .* is not allowed; expected a PostgreSQL name/,
      );
      expect(run.lines.some((l) => /ssh ubuntu@/.test(l))).toBe(false);
      expect((await asPostgres(sb, "SELECT count(*) FROM pg_database WHERE datname = 'shop';\n")).trim()).toBe("1");
    },
    T,
  );
});
