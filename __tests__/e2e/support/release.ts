// The Debian release the end-to-end suites boot their sandboxes on (VM_INSTALL_SANDBOX_RELEASE, default
// bookworm; the files under __tests__/e2e/trixie/ set it to trixie), and what the tests expect of that
// release's own packages. The facts are measured on the release, written down here independently of the
// handlers' tables, so a suite checks the installers against the release rather than against themselves.
import { RELEASES, type Release, resolveRelease } from "../../../dev/sandbox/index";

export interface ReleaseFacts {
  /** VERSION_ID of /etc/os-release. */
  version: string;
  /** The PostgreSQL major the distribution ships (its "postgresql" package). */
  pgMajor: string;
  /** The tag PGDG's packages for this release carry in their version ("16.9-1.pgdg120+1"). */
  pgdgTag: string;
  /** docker.io's upstream version. */
  dockerIo: RegExp;
  /** What `apt-get install docker.io` leaves that conflicts with Docker's packages, in the order the installer removes it. */
  dockerIoConflicting: string[];
  /** The distribution's compose: the package the distro channel picks, how it is called, its version. */
  compose: {
    package: string;
    command: "docker compose" | "docker-compose";
    version: RegExp;
    /** compose v1 (Python): the job warns about it. */
    v1: boolean;
    /** What `docker-compose --version` prints for the user. */
    standalone: RegExp;
  };
}

const RELEASE_FACTS: Record<Release, ReleaseFacts> = {
  // Debian 12: PostgreSQL 15; docker.io 20.10 with compose v1 (Python) only.
  bookworm: {
    version: "12",
    pgMajor: "15",
    pgdgTag: "pgdg120",
    dockerIo: /^20\.10\./,
    dockerIoConflicting: ["docker.io", "containerd", "runc"],
    compose: {
      package: "docker-compose",
      command: "docker-compose",
      version: /^1\./,
      v1: true,
      standalone: /docker-compose version 1\./,
    },
  },
  // Debian 13: PostgreSQL 17; docker.io 26.1, and docker-compose is compose v2 (2.26), a CLI plugin as well.
  trixie: {
    version: "13",
    pgMajor: "17",
    pgdgTag: "pgdg130",
    dockerIo: /^26\.1\./,
    // The CLI and buildx are packages of their own here, pulled in by docker.io's Recommends.
    dockerIoConflicting: ["docker.io", "docker-cli", "docker-buildx", "containerd", "runc"],
    compose: {
      package: "docker-compose",
      command: "docker compose",
      version: /^2\.26\./,
      v1: false,
      standalone: /^Docker Compose version 2\.26\./,
    },
  },
};

/** The release of this run's sandboxes. */
export const RELEASE: Release = resolveRelease();
export const FACTS = RELEASE_FACTS[RELEASE];
/** "Debian 13 (trixie)". */
export const RELEASE_LABEL = `Debian ${RELEASES[RELEASE]} (${RELEASE})`;
