// States several cases reach the same way, made once per test run (sandbox/snapshot.ts) and booted from: a
// case that only needs to start from such a state boots in seconds instead of installing for a minute. The
// state is made exactly as the cases made it themselves; each case still gets a VM of its own.
import { randomBytes } from "node:crypto";
import { ensureSnapshot, type Snapshot } from "../../../sandbox/index";
import { root } from "./e2e";
import { RELEASE } from "./release";

/** Snapshots belong to one test run (bin/test names it); a jest started by hand makes its own per process. */
const RUN = process.env.VM_INSTALL_TEST_RUN ?? `process-${process.pid}-${randomBytes(4).toString("hex")}`;

const DOCKER_IO = "apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker.io";

/** The distribution's docker.io installed by root with apt, no vm-install job: a VM before an official-channel job. */
export function dockerIoByApt(): Promise<Snapshot> {
  return ensureSnapshot({
    name: "docker.io-by-apt",
    inputs: [RUN, DOCKER_IO],
    release: RELEASE,
    make: async (sb) => {
      await root(sb, DOCKER_IO, 600_000);
    },
  });
}
