// End-to-end: install-postgres on a fresh sandbox VM (Debian 12 -> PostgreSQL 15 from Debian; with
// VM_INSTALL_SANDBOX_RELEASE=trixie, Debian 13 -> PostgreSQL 17: support/release.ts), bundled
// and run exactly as a job runs. The checks that matter are made from outside the job: the host's own
// psql logs in over the sandbox network (and is refused where pg_hba.conf has no entry for it), the
// target's process list is polled every ~100 ms while a job runs, and the server's log (with
// log_statement = 'all' switched on) and the journal are searched for the password afterwards.
//
// Host prerequisite: psql (Debian's postgresql-client, 15 here). Under CI=true a sandbox that cannot run
// fails the suite (describeE2E); elsewhere it is skipped with the reason.
import { execFile, execFileSync } from "node:child_process";
import * as net from "node:net";
import { PGDG_KEY_FINGERPRINT } from "../../handlers/install-postgres/definition";
import { type Sandbox, startSandbox } from "../../sandbox/index";
import { armour, pgpKey } from "../handlers/support/pgp-fixtures";
import { startFakeDockerRepo } from "./fixtures/docker-repo";
import {
  describeE2E,
  dpkgStatus,
  expectSucceeded,
  type InstallerRun,
  root,
  runInstaller,
  sandboxPerSuite,
  vmFingerprint,
  watchProcesses,
} from "./support/e2e";
import { FACTS, RELEASE } from "./support/release";

const T = 15 * 60_000;
/** The distribution's PostgreSQL major on this run's release ("15" on Debian 12, "17" on Debian 13), and its cluster. */
const PG = FACTS.pgMajor;
const CLUSTER = `${PG}/main`;
const CONF = `/etc/postgresql/${PG}/main`;

/** Each password carries a unique token, so any quoting of it still shows the token. */
const PW1 = `Pg1tok 'single' "double" $HOME \\back\\\\slash  two  spaces`;
const PW2 = `Pg2tok it's "new" $(id) \\ \`x\` end `;
const PW3 = `Pg3tok пароль «ü» 'q' \\ $x`;
const TOKENS = ["Pg1tok", "Pg2tok", "Pg3tok"];

/** Nothing the job let out holds a password, and the runner's own last-line scrubbing had nothing to do. */
function expectNoSecretsOut(run: InstallerRun): void {
  const out = [run.message, ...run.lines].join("\n");
  for (const t of [...TOKENS, PW1, PW2, PW3]) expect(out).not.toContain(t);
  // "[redacted]" alone is the runner's marker: the handler's own is "[redacted:<label>]".
  expect(out).not.toMatch(/\[redacted\](?!:)/);
  expect(out).not.toContain("SCRAM-SHA-256$");
}

/** The host's psql (PostgreSQL 15 client; libpq talks to newer servers too) against the sandbox, the password in this child's env only. */
function hostPsql(
  sb: Sandbox,
  user: string,
  db: string,
  password: string,
  sql = "SELECT current_user || '|' || host(inet_client_addr())",
  sslmode = "require",
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      "psql",
      ["-X", "-w", "-At", "-h", sb.address, "-p", "5432", "-U", user, "-d", db, "-c", sql],
      {
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          PGPASSWORD: password,
          PGCONNECT_TIMEOUT: "10",
          PGSSLMODE: sslmode,
          LC_ALL: "C",
        },
        timeout: 30_000,
        encoding: "utf8",
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout: stdout.trim(), stderr }),
    );
  });
}

/** Everything the server and the system logged, as root on the target. */
async function targetLogs(sb: Sandbox): Promise<string> {
  const r = await sb.rootExec(
    "cat /var/log/postgresql/*.log; echo '--- journal'; journalctl --no-pager -o cat 2>/dev/null | tail -n 5000",
    {
      timeoutMs: 60_000,
    },
  );
  return r.stdout;
}

/** SQL as postgres on the target, given on stdin (test set-up only). */
async function asPostgres(sb: Sandbox, sql: string): Promise<string> {
  const r = await sb.rootExec("cd / && runuser -u postgres -- psql -X -q -At -v ON_ERROR_STOP=1 -f -", {
    input: sql,
    timeoutMs: 60_000,
  });
  if (r.code !== 0) throw new Error(`psql on the target failed: ${r.stderr}`);
  return r.stdout;
}

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
      const { hits, polls } = await watchProcesses(sb, ["Pg9tok"], async () => {
        const planted = sb.rootSpawn("sh -c 'sleep 1.5' Pg9tok-args & env PLANTED=Pg9tok-env sleep 1.5; wait");
        await planted.done;
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
        expect.stringMatching(new RegExp(`^installed postgresql-${PG} ${PG}\\.\\d+`)),
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
        expect(check.result.would_change).toEqual([
          `PGDG repository: /etc/apt/keyrings/pgdg.asc, the key file an earlier version wrote as served (apt trusts every key in it), rebuilt from the verified key of ${repo.url}/debian`,
        ]);
        expect(await root(sb, "ls -A /etc/apt/keyrings")).toBe("pgdg.asc\n");

        const { value: run } = await job(ev);
        expectSucceeded(run);
        expect(run.result.changes).toEqual([
          "PGDG repository: wrote /etc/apt/keyrings/pgdg.gpg (replaces /etc/apt/keyrings/pgdg.asc)",
          "PGDG repository: wrote /etc/apt/sources.list.d/pgdg.list (line differed)",
          "PGDG repository: removed /etc/apt/keyrings/pgdg.asc",
        ]);
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

// Values read from the VM and hand edits on it, attacked as the VM's own users would (issue 17): a
// database superuser renaming a cluster's directory, the application's role setting its own verifier, a
// hand edit of the root-only inventory or of /etc/hosts. A sandbox of
// its own, so each test runs alone too (-t): the first one to need the server installs it.
describeE2E("install-postgres on a sandbox VM: values read from the VM and hand edits", () => {
  let sb: Sandbox;
  sandboxPerSuite((s) => {
    sb = s;
  }, T);
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

/** Polls `check` every 100 ms until it holds, for at most 20 s. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
