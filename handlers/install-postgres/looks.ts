// Every look install-postgres makes at the VM, for the docs' audit table (handlers/vm-looks.ts lists them
// with looksOf("install-postgres", ...POSTGRES_LOOKS)). Looks built at run time are listed for one example:
// a listen name, cluster 15/main, one recorded pg_hba.conf.
import { defineLook, type Probe } from "../common/vm-facts";
import { takeBackLook } from "./absent";
import { settledLook } from "./configuration";
import type { PostgresEvent } from "./decisions";
import { listenerLook } from "./listener";
import { failureLook } from "./recovery";
import { installationLook } from "./server";
import { serverLook, serverLooksProbe } from "./server-look";
import { tlsFiles } from "./tls";
import { tlsLook } from "./tls-remote";

const CONF = "/etc/postgresql/15/main/postgresql.conf";
const EVENT = { db_name: "NAME", db_user: "USER" } as PostgresEvent;
const MAIN = { major: "15", name: "main", logFile: "/var/log/postgresql/postgresql-15-main.log" };

export const POSTGRES_LOOKS: readonly { readonly what: string; readonly probes: readonly Probe[] }[] = [
  installationLook(["NAME"]),
  tlsLook(tlsFiles(CONF)),
  listenerLook(5432, "postgresql@15-main"),
  defineLook("the first look: the running clusters", [serverLooksProbe(EVENT)]),
  serverLook(EVENT),
  failureLook(MAIN, "/etc/postgresql/15/main/conf.d/90-vm-install.conf"),
  settledLook({ major: "15", name: "main", port: 5432 }),
  takeBackLook(["/var/lib/postgresql/15", "/etc/postgresql/15"], ["/etc/postgresql/15/main/pg_hba.conf"]),
];
