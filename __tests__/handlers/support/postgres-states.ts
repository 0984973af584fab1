// Generated starting states of install-postgres' stateful double (postgres-vm.ts) and the events run on them,
// for the property test of the promise: a history of earlier runs with drawn settings, then hand edits of
// what the runs left (roles, database, pg_hba.conf lines, the inventory, listen_addresses, TLS files, PGDG as
// an earlier version set it up).
// Every choice comes from one Draw, so a seed names its state and event.

import { HBA_MARKER } from "../../../handlers/install-postgres/pg";
import { LEGACY_PGDG_KEYRING } from "../../../handlers/install-postgres/pgdg";
import { scramSecret } from "../../../handlers/install-postgres/scram";
import type { StackCa } from "../../../lib/construct/postgres-ca";
import type { Draw } from "../../support/seeded-random";
import { pgpKey } from "./pgp-fixtures";
import { pgJob } from "./postgres-jobs";
import {
  PG_HBA,
  type PgRole,
  type PgVmState,
  PostgresVm,
  SNAKEOIL,
  TLS_CERT,
  TLS_DROPIN,
  TLS_KEY,
} from "./postgres-vm";
import { readDropIn } from "./postgres-vm-settings";

const USERS = ["app_user", "other_user"];
const DATABASES = ["myapp", "otherdb"];
const PASSWORDS = ["correct horse 42", "battery staple 7"];
const LISTEN = ["localhost", "*", "10.0.0.5", "localhost,10.0.0.5"];
const CIDRS = ["10.0.0.0/8", "192.168.1.0/24", "172.16.0.0/12"];
const DROP_IN = "/etc/postgresql/14/main/conf.d/90-vm-install.conf";
const PGDG = "https://apt.postgresql.org/pub/repos/apt";
/** Values of `parameters`, by name: reloadable ones and postmaster ones (postgres-vm-settings.ts). */
const PARAMETERS: Record<string, (string | number)[]> = {
  work_mem: ["16MB", "64MB"],
  statement_timeout: [0, "30s"],
  log_min_duration_statement: [250, 1000],
  shared_buffers: ["256MB"],
  max_connections: [150, 200],
};
const STOCK_HBA = [
  "local   all             postgres                                peer\n",
  "host    all             all             127.0.0.1/32            scram-sha-256\n",
];

/** The CAs a state's certificates come from: the event's, one it does not trust, Debian's snakeoil pair. */
export interface Cas {
  ca: StackCa;
  other: StackCa;
  snakeoil: StackCa;
}

/** An install-postgres event with drawn settings (valid ones: the property is about runs that succeed). */
function drawEvent(d: Draw, cas: Cas): Record<string, unknown> {
  const listen = d.pick(LISTEN);
  const tls = d.chance(0.4) ? "stack-ca" : "debian";
  return {
    db_user: d.pick(USERS),
    db_name: d.pick(DATABASES),
    db_password: d.pick(PASSWORDS),
    listen_addresses: listen,
    allow_remote: listen !== "localhost" && d.chance(0.7),
    remote_ssl: d.chance(0.7),
    allowed_cidrs: d.subset(CIDRS, 0.5, 1),
    parameters: Object.fromEntries(d.subset(Object.keys(PARAMETERS), 0.25).map((n) => [n, d.pick(PARAMETERS[n])])),
    tls,
    ...(tls === "stack-ca"
      ? { tls_ca_cert: cas.ca.cert, tls_ca_key: cas.ca.key, tls_names: d.subset(["db.example.test"], 0.5) }
      : {}),
  };
}

const newCluster = (d: Draw, cas: Cas): PgVmState => ({
  listen: "localhost",
  active: true,
  files: {
    [PG_HBA]: d.subset(STOCK_HBA, 0.7, 1).join(""),
    [SNAKEOIL]: cas.snakeoil.cert,
    "/etc/ssl/private/ssl-cert-snakeoil.key": cas.snakeoil.key,
  },
  roles: { postgres: { login: true, superuser: true, secret: null, marked: false } },
  databases: { postgres: { owner: "postgres" } },
});

/** One hand edit of a state: its name (for the failure message) and what it does, or undefined when it cannot. */
type Edit = (s: PgVmState, d: Draw, cas: Cas) => string | undefined;

const hbaLines = (s: PgVmState) => (s.files[PG_HBA] ?? "").split("\n").filter((l) => l !== "");
const setHba = (s: PgVmState, lines: string[]) => {
  s.files[PG_HBA] = lines.map((l) => `${l}\n`).join("");
};
const ourRoles = (s: PgVmState) => Object.keys(s.roles).filter((r) => r !== "postgres");
const postgresSection = (s: PgVmState) => {
  s.inventory ??= { version: 1 };
  s.inventory.postgres ??= { hba: {}, roles: {} };
  return s.inventory.postgres as { hba: Record<string, string[]>; roles: Record<string, string[]> };
};

/** A line of the drop-in (when there is one) set to a value not drawn for events, and maybe read by a reload. */
function setParameter(s: PgVmState, d: Draw, reload: boolean): string | undefined {
  const text = s.files[DROP_IN];
  if (text === undefined) return undefined;
  const name = d.pick(Object.keys(PARAMETERS));
  const line = `${name} = '${name === "work_mem" ? "8MB" : "512"}'`;
  s.files[DROP_IN] = `${text.replace(new RegExp(`^${name} = .*\n`, "m"), "")}${line}\n`;
  if (reload) readDropIn(s, s.files[DROP_IN], false);
  return line;
}

/** An edit of one of the state's own databases or roles (not postgres'), drawn; undefined when there is none. */
const onDatabase =
  (edit: (db: { owner: string }) => void): Edit =>
  (s, d) => {
    const db = d.pick(Object.keys(s.databases).filter((n) => n !== "postgres"));
    if (db) edit(s.databases[db]);
    return db;
  };
const onRole =
  (edit: (role: PgRole, d: Draw) => void): Edit =>
  (s, d) => {
    const r = d.pick(ourRoles(s));
    if (r) edit(s.roles[r], d);
    return r;
  };

const EDITS: Record<string, Edit> = {
  "database dropped": (s, d) => {
    const db = d.pick(Object.keys(s.databases).filter((n) => n !== "postgres"));
    if (db) delete s.databases[db];
    return db;
  },
  "database given to postgres": onDatabase((db) => {
    db.owner = "postgres";
  }),
  "role NOLOGIN": onRole((role) => {
    role.login = false;
  }),
  "role's password changed": onRole((role, d) => {
    role.secret = d.chance() ? scramSecret("a hand-set one") : null;
  }),
  "role's mark removed": onRole((role) => {
    role.marked = false;
  }),
  "role dropped (its databases too)": (s, d) => {
    const r = d.pick(ourRoles(s));
    if (!r) return undefined;
    delete s.roles[r];
    for (const [n, db] of Object.entries(s.databases)) if (db.owner === r) delete s.databases[n];
    return r;
  },
  "a login role of the admin's": (s, d) => {
    const marked = d.chance(0.3);
    s.roles.legacy = { login: true, superuser: false, secret: scramSecret("legacy pass 1"), marked };
    if (d.chance()) postgresSection(s).roles["14/main"] = [...(postgresSection(s).roles["14/main"] ?? []), "legacy"];
    return marked ? "legacy, marked" : "legacy";
  },
  "one of our pg_hba.conf lines removed": (s, d) => {
    const lines = hbaLines(s);
    const ours = lines.filter((l) => l.includes(HBA_MARKER));
    if (!ours.length) return undefined;
    const gone = d.pick(ours);
    setHba(
      s,
      lines.filter((l) => l !== gone),
    );
    return gone;
  },
  "one of our pg_hba.conf lines copied": (s, d) => {
    const lines = hbaLines(s);
    const ours = lines.filter((l) => l.includes(HBA_MARKER));
    if (!ours.length) return undefined;
    const copy = d.pick(ours);
    setHba(s, d.chance() ? [...lines, copy] : [copy, ...lines]);
    return copy;
  },
  "the admin's own line for an entry": (s, d) => {
    const lines = hbaLines(s);
    const ours = lines.filter((l) => l.includes(HBA_MARKER)).map((l) => l.replace(HBA_MARKER, "").trim());
    // One of ours written again above it makes ours a second copy; any other one is the admin's grant.
    const entry =
      ours.length && d.chance(0.7)
        ? d.pick(ours)
        : `${d.pick(["hostssl", "host"])} ${d.pick(DATABASES)} ${d.pick(USERS)} ${d.pick(CIDRS)} scram-sha-256`;
    setHba(s, ours.includes(entry) || d.chance() ? [entry, ...lines] : [...lines, entry]);
    return entry;
  },
  "a marked line the inventory does not list": (s, d) => {
    const line = `hostssl gone gone_user ${d.pick(CIDRS)} scram-sha-256 ${HBA_MARKER}`;
    setHba(s, [...hbaLines(s), line]);
    return line;
  },
  "an entry recorded that the file lacks": (s, d) => {
    const hba = postgresSection(s).hba;
    const entry = `hostssl ${d.pick(DATABASES)} ${d.pick(USERS)} ${d.pick(CIDRS)} scram-sha-256`;
    hba[PG_HBA] = [...(hba[PG_HBA] ?? []), entry];
    return entry;
  },
  "inventory removed": (s) => {
    if (!s.inventory) return undefined;
    delete s.inventory;
    return "";
  },
  "listen_addresses set by hand in the drop-in, not restarted": (s, d) => {
    const listen = d.pick(LISTEN);
    s.files[DROP_IN] = `# vm-install\nlisten_addresses = '${listen}'\n`;
    return listen;
  },
  "a parameter set by hand in the drop-in, not reloaded": (s, d) => setParameter(s, d, false),
  "a parameter set by hand in the drop-in and reloaded": (s, d) => setParameter(s, d, true),
  "the last run stopped before its restart (postmaster parameters wait for one)": (s) => {
    const waiting = Object.keys(s.params?.live ?? {}).filter((n) => n === "shared_buffers" || n === "max_connections");
    if (!s.params || !waiting.length) return undefined;
    for (const n of waiting) delete s.params.live[n];
    return waiting.join(", ");
  },
  "a TLS file removed": (s, d) => {
    const present = [TLS_DROPIN, TLS_CERT, TLS_KEY].filter((f) => s.files[f] !== undefined);
    if (!present.length) return undefined;
    const gone = d.pick(present);
    delete s.files[gone];
    return gone;
  },
  "cluster stopped": (s) => {
    s.active = false;
    return "";
  },
  "PGDG as an earlier version left it (the served key file, a source naming it)": (s, d) => {
    s.files[LEGACY_PGDG_KEYRING] = pgpKey("pgdg.asc").toString("latin1");
    s.files["/etc/apt/sources.list.d/pgdg.list"] = `deb [signed-by=${LEGACY_PGDG_KEYRING}] ${PGDG} jammy-pgdg main\n`;
    if (!d.chance(0.3)) return "";
    s.files["/etc/apt/sources.list"] = `deb http://archive.ubuntu.com/ubuntu jammy main\ndeb ${PGDG} jammy-pgdg main\n`;
    return "and a line in sources.list";
  },
  "the certificate replaced by another CA's": (s, _d, cas) => {
    if (s.files[TLS_CERT] === undefined) return undefined;
    s.files[TLS_CERT] = cas.other.cert;
    return "";
  },
};

/**
 * A drawn state (a fresh cluster, 0 to 2 runs with drawn events, then 0 to 3 hand edits) and the event to
 * check and run on it; `story` says which.
 */
export async function drawState(d: Draw, cas: Cas) {
  const vm = new PostgresVm(newCluster(d, cas));
  const story: string[] = [];
  let event: Record<string, unknown> | undefined;
  for (let runs = d.int(0, 2); runs > 0; runs--) {
    event = drawEvent(d, cas);
    story.push(`run ${summary(event)}`);
    await pgJob(vm, event);
  }
  for (let edits = d.int(0, 3); edits > 0; edits--) {
    const name = d.pick(Object.keys(EDITS));
    const what = EDITS[name](vm.state, d, cas);
    if (what !== undefined) story.push(`${name}${what ? `: ${what}` : ""}`);
  }
  // Often the settings of the last run again, as a rerun after hand edits has them.
  const next = event && d.chance(0.4) ? event : drawEvent(d, cas);
  return { vm, story: [...story, `then check and run ${summary(next)}`], event: next };
}

/** An event without its secrets, for a failure message. */
function summary(event: Record<string, unknown>): string {
  const shown = Object.entries(event).filter(([k]) => !/password|_key|_cert/.test(k));
  return JSON.stringify(Object.fromEntries(shown));
}
