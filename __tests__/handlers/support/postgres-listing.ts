// What install-postgres' installation look reads on a double's VM (server.ts, addresses.ts): the server
// packages, what pg_lsclusters prints, systemd's answer for each unit it names, the count of cluster
// directories with blanks or controls in their names, the legacy PGDG keyring, resolver answers and the
// VM's own addresses. Probes are told apart by their commands; each answers as its tool would.
import { answerLookWith, type ProbeAnswer } from "./look-answers";
import type { PgVmState } from "./postgres-vm";

export interface Listing {
  /** dpkg-query's lines. */
  packages: string;
  /** What pg_lsclusters -h prints; undefined: postgresql-common is not installed. */
  clusters?: string;
  /**
   * `systemctl is-active` of a unit, for each unit pg_lsclusters names (undefined: "inactive"); a string:
   * the probe's output as is.
   */
  units?: Record<string, string> | string;
  /** Cluster directories whose names hold blanks or controls. */
  hidden?: number;
  /** The VM was booted with systemd. @default true */
  systemd?: boolean;
  /** /etc/apt/keyrings/pgdg.asc exists. */
  legacyKeyring?: boolean;
  /** getent ahosts' addresses per name (a name not listed resolves to nothing). */
  resolved?: Record<string, string[]>;
  /** What `ip -o addr show` prints. */
  own?: string;
}

/** The units pg_lsclusters' lines name, as `read -r v n _` splits each line (the name is the second word). */
function unitsNamed(clusters: string): string[] {
  return clusters
    .split("\n")
    .slice(0, clusters.endsWith("\n") ? -1 : undefined)
    .map((line) => {
      const [v = "", n = ""] = line.trim().split(/[ \t]+/);
      return `postgresql@${v}-${n}`;
    });
}

/** One probe of the look answered from `l`; undefined: not one of its probes. */
export function listingProbe(command: string, l: Listing): ProbeAnswer | undefined {
  const none = l.clusters === undefined;
  if (command.startsWith("dpkg-query -W")) return { stdout: l.packages, code: l.packages ? 0 : 1 };
  if (command.includes("| while read")) {
    if (none) return { stdout: "", code: 1 };
    if (typeof l.units === "string") return { stdout: l.units, code: 0 };
    const units = l.units;
    const lines = unitsNamed(l.clusters ?? "").map((u) => `${u} ${units?.[u] ?? "inactive"}\n`);
    return { stdout: lines.join(""), code: 0 };
  }
  if (command.includes("pg_lsclusters -h")) return none ? { stdout: "", code: 1 } : { stdout: l.clusters!, code: 0 };
  if (command.includes("/etc/postgresql/*/*/postgresql.conf"))
    return { stdout: "hidden\n".repeat(l.hidden ?? 0), code: 0 };
  if (command === "[ -d /run/systemd/system ]") return { stdout: "", code: l.systemd === false ? 1 : 0 };
  if (command === "[ -e /etc/apt/keyrings/pgdg.asc ]") return { stdout: "", code: l.legacyKeyring ? 0 : 1 };
  const name = /^getent ahosts '?([^' ]+)'?$/.exec(command);
  if (name) {
    const addresses = l.resolved?.[name[1]] ?? [];
    return { stdout: addresses.map((a) => `${a}       STREAM ${name[1]}\n`).join(""), code: addresses.length ? 0 : 2 };
  }
  if (command.startsWith("ip -o addr show")) return { stdout: l.own ?? "", code: 0 };
  return undefined;
}

/** The look `script` answered from `l`. */
export const listingAnswer = (script: string, l: Listing): string =>
  answerLookWith(script, (c) => {
    const a = listingProbe(c, l);
    if (!a) throw new Error(`postgres-listing: a probe of the installation look this double does not know: ${c}`);
    return a;
  });

const PKG = "postgresql-14\tinstall ok installed\t14.11-0ubuntu0.22.04.1\n";
const CLUSTER =
  "14  main    5432 online postgres /var/lib/postgresql/14/main /var/log/postgresql/postgresql-14-main.log\n";

/**
 * What the installation look reads on the stateful double's VM (postgres-vm.ts): 14/main, and a line for each other cluster directory as
 * pg_lsclusters prints its name, line breaks and all (postgresql-common 248 skips a name with an inner line
 * break, by its untaint pattern; the look must not depend on that, nor on any field staying one line).
 */
export function listingOf(s: PgVmState): Listing {
  const others = (s.clusterDirs ?? []).map(
    (n) => `14  ${n} 5433 down postgres /var/lib/postgresql/14/other /var/log/postgresql/postgresql-14-other.log\n`,
  );
  return {
    packages: PKG,
    clusters: CLUSTER + others.join(""),
    units: { "postgresql@14-main": s.active ? "active" : "inactive" },
    hidden: (s.clusterDirs ?? []).filter((n) => /[\s\p{Cc}]/u.test(n)).length,
    legacyKeyring: s.legacyPgdgKeyring || s.files["/etc/apt/keyrings/pgdg.asc"] !== undefined,
    resolved: s.hosts,
    own: "2: eth0    inet 10.0.0.5/24 brd 10.0.0.255 scope global eth0\n",
  };
}
