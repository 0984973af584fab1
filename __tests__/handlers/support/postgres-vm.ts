// A stateful double of an Ubuntu 22.04 VM running PostgreSQL 14/main, for tests that run install-postgres
// more than once against the same machine: unlike the scripted double it answers whatever the handler
// asks, from its state, and what a run changes (role, database, files, inventory) is there for the next.
// Only the commands install-postgres sends are understood; anything else fails the test, naming it.

import { createPublicKey, X509Certificate } from "node:crypto";
import type { Duplex } from "node:stream";
import { BOOT_LOOK } from "../../../handlers/common/boot-look";
import { DPKG_HEALTH_LOOK } from "../../../handlers/common/dpkg-health";
import { type Connection, ExecRemote, type RunOptions, type RunResult } from "../../../handlers/common/exec";
import { GRANTS_FILE, GRANTS_LOOK } from "../../../handlers/common/grants";
import { LOCK_TABLE_LOOK } from "../../../handlers/common/lock-holders";
import { configWriteOf } from "./config-write";
import { PGDG_REPOSITORY, repositoryReply, sourcesProbe } from "./docker-vm-files";
import { type FakePostgres, fakePostgres } from "./fake-postgres";
import { UBUNTU_2204 } from "./fixtures";
import { grantsText } from "./grants-steps";
import { POSTMASTER_PID, ssLine } from "./listener-look";
import { answerLook, answerLookWith, isLook, type Reply, sqlFirstParts } from "./look-answers";
import { listingOf, listingProbe } from "./postgres-listing";
import { type PgParams, parameterFacts, pendingRestart, readDropIn, sslFileSettings } from "./postgres-vm-settings";
import { renameOf, writtenFiles } from "./remote-writes";

export const PG_CONF_DIR = "/etc/postgresql/14/main";
export const PG_HBA = `${PG_CONF_DIR}/pg_hba.conf`;
const PG_DROPIN = `${PG_CONF_DIR}/conf.d/90-vm-install.conf`;
export const TLS_CERT = `${PG_CONF_DIR}/vm-install-server.crt`;
export const TLS_KEY = `${PG_CONF_DIR}/vm-install-server.key`;
export const TLS_DROPIN = `${PG_CONF_DIR}/conf.d/91-vm-install-tls.conf`;
/** Debian's snakeoil pair, as a stock postgresql.conf names it (a test puts a certificate in files). */
export const SNAKEOIL = "/etc/ssl/certs/ssl-cert-snakeoil.pem";
const SNAKEOIL_KEY = "/etc/ssl/private/ssl-cert-snakeoil.key";

export interface PgRole {
  login: boolean;
  superuser: boolean;
  secret: string | null;
  /** Carries vm-install's COMMENT (sql.ts ROLE_MARK). */
  marked: boolean;
}

export interface PgVmState {
  /** What the running server listens on (changes on restart, from the drop-in). */
  listen: string;
  active: boolean;
  files: Record<string, string>;
  roles: Record<string, PgRole>;
  databases: Record<string, { owner: string }>;
  /** The grants inventory's JSON, undefined: no file. */
  inventory?: Record<string, unknown>;
  /** Cluster directories beside 14/main (/etc/postgresql/14/<name>/postgresql.conf): postgres may make any. */
  clusterDirs?: string[];
  /** /etc/apt/keyrings/pgdg.asc, the key file an earlier version wrote, is there (so is it when it is in `files`). */
  legacyPgdgKeyring?: boolean;
  /** What the VM's resolver answers for a name (getent ahosts); its own address is 10.0.0.5. */
  hosts?: Record<string, string[]>;
  /** The drop-in's parameters as the server read and runs them (postgres-vm-settings.ts); undefined: none. */
  params?: PgParams;
}

/** How the first look's server looks (server-look.ts serverLooksProbe) begin. */
const SERVER_LOOKS = "timeout -k 2 20 sudo -n sh -c ";
/** A psql variable as sql.ts setVars writes it (values here hold no quote or backslash). */
function psqlVar(sql: string, name: string): string | undefined {
  return new RegExp(`^\\\\set ${name} '([^']*)'$`, "m").exec(sql)?.[1];
}

export class PostgresVm implements Connection {
  readonly target = "ubuntu@192.0.2.10:22";
  readonly hostKeySha256 = `SHA256:${"A".repeat(43)}`;
  /** The certificate the server presents when it is not the file's (one a reload could not load). */
  presented?: string;
  /** Every command marked as a change that reached the VM. */
  readonly mutating: string[] = [];
  /** What `hostname` prints here: root on the VM sets it to anything, so no look may take it as a name. */
  hostnames = ["db1", "db1.example.test"];
  /** Every command, as given to run(), with the user it ran as and its stdin. */
  readonly commands: { command: string; user?: string; sudo?: boolean; stdin: string }[] = [];

  /** Replaces the first look's server looks answer (sudo refused, lines forged), given the real one. */
  serverLooksAnswer?: (real: { stdout: string; code: number }) => { stdout: string; code: number };

  constructor(public state: PgVmState) {}

  async run(command: string, opts: RunOptions = {}): Promise<RunResult> {
    if (opts.mutates) this.mutating.push(opts.label ?? command);
    this.commands.push({ command, user: opts.user, sudo: opts.sudo, stdin: String(opts.stdin ?? "") });
    const bytes = Buffer.isBuffer(opts.stdin) ? opts.stdin : Buffer.from(String(opts.stdin ?? ""));
    const answer: Reply =
      repositoryReply(this.state.files, PGDG_REPOSITORY, command, bytes) ??
      this.answer(command, String(opts.stdin ?? ""));
    const exec = new ExecRemote(
      async () => ({ code: answer.code ?? 0, stdout: Buffer.from(answer.stdout ?? ""), stderr: Buffer.from("") }),
      { target: this.target, user: "ubuntu" },
    );
    return exec.run(command, opts);
  }

  async close(): Promise<void> {}

  /**
   * The TCP login: a server holding the role's stored verifier, which the role must exist for and may log
   * in with, to a database that exists; otherwise one that refuses any proof.
   */
  async tunnel(): Promise<Duplex> {
    const [user, db] = this.loginAs ?? ["", ""];
    const role = this.state.roles[user];
    const ok = role?.login && this.state.databases[db] && role.secret?.startsWith("SCRAM-SHA-256$");
    const who = JSON.stringify({ user, database: db, server_version: "14.11" });
    const server = ok
      ? fakePostgres({ password: "", verifier: role.secret ?? "", who })
      : fakePostgres({ password: "\u0000 no such role", who });
    this.channels.push(server);
    return server.client;
  }

  /** The login check's channels, each with the fake server at its end (what the client sent). */
  readonly channels: FakePostgres[] = [];

  /** Who the login check logs in as: the role and database of the last inspection query. */
  private loginAs?: [string, string];

  /**
   * The first look's server looks (server-look.ts serverLooksProbe): 14/main's, answered as the server look
   * is, while its unit runs.
   */
  private serverLooks(command: string): { stdout: string; code: number } {
    if (!this.state.active) return { stdout: "", code: 0 };
    const word = command.slice(SERVER_LOOKS.length);
    const script = word.slice(1, -1).replace(/'\\''/g, "'");
    const inner = /\{ (printf '%s ' .*); \} <\/dev\/null \| base64 -w0; echo; done$/.exec(script)?.[1];
    if (!inner) throw new Error(`PostgresVm: not the server looks' script: ${script.slice(0, 200)}`);
    const framed = answerLookWith(inner.split(/; (?=printf '%s ' )/).join("\n"), (c) => this.probe(c));
    const real = { stdout: `14/main:5432 ${Buffer.from(framed).toString("base64")}\n`, code: 0 };
    return this.serverLooksAnswer ? this.serverLooksAnswer(real) : real;
  }

  /**
   * A probe of a look: the installation look's (postgres-listing.ts); readTls': files read with cat, tested
   * with [ -e ], a key's public half; `hostname` answers `hostnames`, so a look that asked would get the VM's word.
   */
  private probe(command: string): { stdout: string; code: number } {
    if (command.startsWith(SERVER_LOOKS)) return this.serverLooks(command);
    const sources = sourcesProbe(this.state.files, command);
    if (sources) return sources;
    const listed = listingProbe(command, listingOf(this.state));
    if (listed) return listed;
    // The server look's (server-look.ts) and the listener look's probes.
    if (/^ss -Hltnp "sport = :(5432|\$VMI_PORT)"/.test(command)) {
      const listening = this.state.active ? this.listening().map((a) => ssLine(a)) : [];
      return { stdout: listening.map((l) => `${l}\n`).join(""), code: 0 };
    }
    if (command.startsWith("systemctl show -p MainPID")) {
      return { stdout: String(this.state.active ? POSTMASTER_PID : 0), code: 0 };
    }
    if (command.startsWith("for p in $(ss -Hltnp")) return { stdout: "", code: 0 };
    if (command === GRANTS_LOOK.probes[0].command) {
      const a = grantsText(this.state.inventory);
      return typeof a === "string" ? { stdout: a, code: 0 } : { stdout: a.text ?? "", code: a.code ?? 0 };
    }
    const sql = /^export PGCLIENTENCODING=UTF8 LC_MESSAGES=C; echo ([A-Za-z0-9+/=]+) \| base64 -d \| /.exec(command);
    if (sql) return { stdout: this.psql(Buffer.from(sql[1], "base64").toString("utf8")).stdout ?? "", code: 0 };
    const f = this.state.files;
    const path = (p: string) => p.replace(/^'|'$/g, "");
    const cat = /^cat (\S+)$/.exec(command);
    if (cat) return f[path(cat[1])] === undefined ? { stdout: "", code: 1 } : { stdout: f[path(cat[1])], code: 0 };
    const key = /^\[ -e (\S+) \] && openssl pkey -in \S+ -pubout$/.exec(command);
    if (key) {
      const pem = f[path(key[1])];
      if (pem === undefined) return { stdout: "", code: 1 };
      return { stdout: String(createPublicKey(pem).export({ type: "spki", format: "pem" })), code: 0 };
    }
    const exists = /^\[ -e (\S+) \]$/.exec(command);
    if (exists) return { stdout: "", code: f[path(exists[1])] === undefined ? 1 : 0 };
    if (/\bhostname\b/.test(command)) return { stdout: `${this.hostnames.join("\n")}\n`, code: 0 };
    throw new Error(`PostgresVm: a probe this double does not know: ${command}`);
  }

  /** The addresses the running server listens on: listen_addresses as applied, names through `hosts`. */
  private listening(): string[] {
    return this.state.listen.split(",").flatMap((a) => {
      const v = a.trim();
      if (v === "*") return ["0.0.0.0", "::"];
      if (v === "localhost") return ["127.0.0.1", "::1"];
      if (/^[0-9.]+$|:/.test(v)) return [v];
      return this.state.hosts?.[v] ?? [];
    });
  }

  private answer(command: string, stdin: string): { code?: number; stdout?: string } {
    const s = this.state;
    if (command.startsWith(BOOT_LOOK.script)) {
      // The kit's first look, with the installation look's probes after its own (postgresFirstLook).
      const own = command.slice(BOOT_LOOK.script.length + 1);
      const boot = answerLook(BOOT_LOOK.script, { os_release: UBUNTU_2204 });
      return { stdout: boot + (own ? answerLookWith(own, (c) => this.probe(c)) : "") };
    }
    if (command === DPKG_HEALTH_LOOK.script || command === LOCK_TABLE_LOOK.script)
      return { stdout: answerLook(command) };
    if (command === GRANTS_LOOK.script) return { stdout: answerLook(command, { grants: grantsText(s.inventory) }) };
    if (command.includes(renameOf(GRANTS_FILE))) {
      s.inventory = JSON.parse(stdin);
      return {};
    }
    if (isLook(command)) return { stdout: answerLookWith(command, (c) => this.probe(c)) };
    if (command.includes("openssl s_client")) {
      // The server presents what it loaded at the last reload (`presented`), by default the file it names.
      const pem = this.presented ?? s.files[s.files[TLS_DROPIN] === undefined ? SNAKEOIL : TLS_CERT];
      return { stdout: pem ? `sha256 Fingerprint=${new X509Certificate(pem).fingerprint256}\n` : "" };
    }
    // The role and database's SQL run first in the configuration's exec (sql-first.ts).
    const first = sqlFirstParts(command, stdin);
    if (first) {
      this.psql(first.sql);
      return this.answer(first.rest, first.restStdin);
    }
    const config = configWriteOf(command, stdin);
    if (config) {
      for (const f of config.files) s.files[f.path] = f.content;
      return config.sql ? this.psql(config.sql) : {};
    }
    const [written] = writtenFiles(command, stdin);
    if (written) {
      s.files[written.path] = written.content;
      return {};
    }
    if (command.includes("systemctl restart")) {
      s.listen = /listen_addresses = '([^']*)'/.exec(s.files[PG_DROPIN] ?? "")?.[1] ?? "localhost";
      readDropIn(s, s.files[PG_DROPIN], true);
      return {};
    }
    if (command.startsWith("systemctl reload")) {
      readDropIn(s, s.files[PG_DROPIN], false);
      return {};
    }
    // parameters-server.ts judgeValues: the postmaster parses the values (the double's are all good).
    if (/^cd \/ && '?\/usr\/lib\/postgresql\/14\/bin\/postgres'? -D .* -C data_directory /.test(command))
      return { stdout: "/var/lib/postgresql/14/main\n" };
    if (command.startsWith("rm -f -- ")) {
      for (const p of command.slice(9).split(" ")) delete s.files[p.replace(/^'|'$/g, "")];
      return {};
    }
    if (command.startsWith("cat /")) {
      const text = s.files[command.slice(4).replace(/^'|'$/g, "")];
      return text === undefined ? { code: 1 } : { stdout: text };
    }
    if (command.includes("systemctl start")) {
      s.active = true;
      readDropIn(s, s.files[PG_DROPIN], true);
      return {};
    }
    if (command.startsWith("systemctl is-active")) return { stdout: s.active ? "active\n" : "inactive\n" };
    if (command.includes("psql -X -q -A -t -v ON_ERROR_STOP=1")) return this.psql(stdin);
    throw new Error(`PostgresVm: a command this double does not know: ${command}`);
  }

  private psql(sql: string): { stdout?: string } {
    const s = this.state;
    if (sql.includes("pg_file_settings where error is null"))
      return { stdout: `${JSON.stringify(this.fileSettings())}\n` };
    if (sql.includes("current_setting('ssl_cert_file')")) {
      const dropIn = this.state.files[TLS_DROPIN] ?? "";
      const setting = (name: string) =>
        new RegExp(`^${name} = '([^']*)'$`, "m").exec(dropIn)?.[1] ??
        (name === "ssl_cert_file" ? SNAKEOIL : SNAKEOIL_KEY);
      return {
        stdout: `${JSON.stringify({ cert: setting("ssl_cert_file"), key: setting("ssl_key_file"), errors: [] })}\n`,
      };
    }
    if (sql.includes("'hba_text'")) return { stdout: `${JSON.stringify(this.serverState(sql))}\n` };
    if (sql.includes("pg_hba_file_rules WHERE error IS NOT NULL")) {
      const listen = /listen_addresses = '([^']*)'/.exec(s.files[PG_DROPIN] ?? "")?.[1] ?? "localhost";
      const fromDropIn = { file: PG_DROPIN, line: 2, setting: listen, error: null };
      return { stdout: `${JSON.stringify({ listen: [fromDropIn], config_errors: [], hba_errors: [] })}\n` };
    }
    if (sql.includes("'known'")) {
      const files = { dropIn: PG_DROPIN, conf: `${PG_CONF_DIR}/postgresql.conf`, dropInText: s.files[PG_DROPIN] };
      return { stdout: `${JSON.stringify(parameterFacts(sql, s.params, files))}\n` };
    }
    if (sql.includes("'pending_restart'") && !sql.includes("'hba_text'"))
      return {
        stdout: `${JSON.stringify({ listen_addresses: s.listen, pending_restart: pendingRestart(s.params) })}\n`,
      };
    if (sql.includes("NOLOGIN")) {
      for (const r of JSON.parse(psqlVar(sql, "revoke") ?? "[]") as string[]) {
        const role = s.roles[r];
        if (role && !role.superuser && role.marked) role.login = false;
      }
      return {};
    }
    const user = psqlVar(sql, "db_user");
    const db = psqlVar(sql, "db_name");
    if (!user || !db) throw new Error(`PostgresVm: SQL this double does not know:\n${sql}`);
    if (sql.includes("CREATE ROLE")) s.roles[user] ??= { login: true, superuser: false, secret: null, marked: false };
    if (sql.includes(`ALTER ROLE :"db_user" LOGIN`)) s.roles[user].login = true;
    if (sql.includes("COMMENT ON ROLE")) s.roles[user].marked = true;
    const pw = psqlVar(sql, "pw");
    if (pw !== undefined) s.roles[user].secret = pw;
    if (sql.includes("CREATE DATABASE")) s.databases[db] ??= { owner: user };
    if (sql.includes("OWNER TO")) s.databases[db].owner = user;
    return {};
  }

  /** pg_file_settings' ssl lines (Debian's postgresql.conf, then the drop-in) and the built-in defaults. */
  private fileSettings(): object {
    const tls = { dropIn: TLS_DROPIN, cert: TLS_CERT, key: TLS_KEY };
    const snakeoil = { cert: SNAKEOIL, key: SNAKEOIL_KEY };
    return sslFileSettings(
      `${PG_CONF_DIR}/postgresql.conf`,
      snakeoil,
      this.state.files[TLS_DROPIN] !== undefined ? tls : undefined,
    );
  }

  /** The inspection query's answer (sql.ts inspectSql). */
  private serverState(sql: string): object {
    const s = this.state;
    const user = psqlVar(sql, "db_user") ?? "";
    this.loginAs = [user, psqlVar(sql, "db_name") ?? ""];
    const role = s.roles[user];
    // The state query names no roles: it reports every role that may log in (sql.ts LOGIN_ROLES); absent's
    // query names the recorded ones.
    const named = psqlVar(sql, "recorded");
    const recorded = named ? (JSON.parse(named) as string[]) : Object.keys(s.roles).filter((r) => s.roles[r].login);
    const facts = Object.fromEntries(
      recorded
        .filter((r) => s.roles[r])
        .map((r) => [
          r,
          { login: s.roles[r].login, superuser: s.roles[r].superuser, bootstrap: false, marked: s.roles[r].marked },
        ]),
    );
    return {
      server_version: "14.11 (Ubuntu 14.11-0ubuntu0.22.04.1)",
      hba_file: PG_HBA,
      config_file: `${PG_CONF_DIR}/postgresql.conf`,
      listen_addresses: s.listen,
      pending_restart: pendingRestart(s.params),
      role: role ? { login: role.login, superuser: role.superuser, secret: role.secret } : null,
      database: s.databases[psqlVar(sql, "db_name") ?? ""] ?? null,
      hba_text: s.files[PG_HBA] ?? "",
      dropin_text: s.files[PG_DROPIN] ?? null,
      ssl: "on",
      tls_left: [TLS_DROPIN, TLS_CERT, TLS_KEY].filter((p) => s.files[p] !== undefined),
      scram_iterations: null,
      recorded_roles: Object.keys(facts).length ? facts : null,
    };
  }
}
