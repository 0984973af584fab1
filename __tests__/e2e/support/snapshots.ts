// States several cases reach the same way, made once per test run (dev/sandbox/snapshot.ts) and booted from: a
// case that only needs to start from such a state boots in seconds instead of installing for a minute. The
// state is made exactly as the cases made it themselves; each case still gets a VM of its own.
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { ensureSnapshot, type Snapshot } from "../../../dev/sandbox/index";
import { expectSucceeded, root, runInstaller } from "./e2e";
import { RELEASE } from "./release";

/**
 * Snapshots belong to one test run: bin/test names it, and removes earlier runs' snapshots. In a jest
 * started by hand each suite file makes its own (jest loads this module once per file) and removes them
 * after its last test: a docker.io one is about 600 MB (an exit handler of the process did not remove
 * them in a hand run).
 */
const RUN = process.env.VM_INSTALL_TEST_RUN ?? `suite-${process.pid}-${randomBytes(4).toString("hex")}`;
const ownMade = new Set<string>();
if (!process.env.VM_INSTALL_TEST_RUN) {
  afterAll(() => {
    for (const dir of ownMade) fs.rmSync(dir, { recursive: true, force: true });
  });
}

/** ensureSnapshot, noting the snapshot for removal after the suite when the run is not bin/test's. */
async function snapshot(recipe: Parameters<typeof ensureSnapshot>[0]): Promise<Snapshot> {
  const made = await ensureSnapshot(recipe);
  ownMade.add(path.dirname(made.layer));
  return made;
}

const DOCKER_IO = "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io";

/** The distribution's docker.io installed by root with apt, no vm-install job: a VM before an official-channel job. */
export function dockerIoByApt(): Promise<Snapshot> {
  return snapshot({
    name: "docker.io-by-apt",
    inputs: [RUN, DOCKER_IO],
    release: RELEASE,
    make: async (sb) => {
      await root(sb, DOCKER_IO, 600_000);
    },
  });
}

/** The event of postgresByJob's install: what the suites' own first runs change is their business. */
const PG_SNAPSHOT_PW = "Snapshot-password-0 'q' $x";
const PG_SNAPSHOT_EVENT = { db_name: "shop", db_user: "shop_app", db_password: PG_SNAPSHOT_PW };

/**
 * The distribution's PostgreSQL installed by an install-postgres job on a fresh VM (database shop, role
 * shop_app, local logins only), for suites whose subject comes after the install: their first run becomes a
 * rerun over vm-install's own install, with their password and settings. The fresh install itself is the
 * subject of install-postgres' "fresh VM" case, absent's and apt-proxy's, which keep their own.
 */
export function postgresByJob(): Promise<Snapshot> {
  return snapshot({
    name: "postgres-by-job",
    // The run's name is in the key: a snapshot never outlives the handler bundle that made it.
    inputs: [RUN, "install-postgres", JSON.stringify(PG_SNAPSHOT_EVENT)],
    release: RELEASE,
    make: async (sb) => {
      expectSucceeded(await runInstaller(sb, "install-postgres", PG_SNAPSHOT_EVENT, { secrets: [PG_SNAPSHOT_PW] }));
    },
  });
}
