// End-to-end: sandbox snapshots (dev/sandbox/snapshot.ts). A sandbox's state kept after a clean poweroff boots
// other sandboxes: each sees the snapshot's files and services, has an identity of its own (address, host
// key, machine-id), and what one writes no other sees; the snapshot outlives them. ensureSnapshot makes a
// state once however many ask at the same time. Directories of the lower layers rename as on a disk.
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  ensureSnapshot,
  keepAsSnapshot,
  listSandboxes,
  type Sandbox,
  SNAPSHOT_ROOT,
  type Snapshot,
  sshRun,
  startSandbox,
} from "../../dev/sandbox/index";
import { describeE2E, root } from "./support/e2e";

const T = 300_000;
const MARK = "/etc/vm-install-e2e-snapshot";
const DIR = "/srv/vm-install-e2e-dir";

/** What makes a VM itself, read over SSH (so sshd with the new host key answers too). */
async function identity(sb: Sandbox): Promise<{ address: string; hostKey: string; machineId: string; mark: string }> {
  const r = await sshRun(sb, `cat /etc/machine-id; cat ${MARK}`, { timeoutMs: 60_000 });
  expect(r.code).toBe(0);
  const [machineId, mark] = r.stdout.trim().split("\n");
  return { address: sb.address, hostKey: sb.hostKeySha256, machineId, mark };
}

describeE2E("sandbox snapshots: a state kept once, booted as VMs of their own", () => {
  const dir = path.join(SNAPSHOT_ROOT, `e2e-${randomBytes(4).toString("hex")}`);
  const live: Sandbox[] = [];
  const start = async (from?: Snapshot) => {
    const sb = await startSandbox({ from });
    live.push(sb);
    return sb;
  };
  afterAll(async () => {
    for (const sb of live) await sb.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }, T);

  test(
    "kept after a poweroff, without its identity; two sandboxes from it: its files, their own identities, " +
      "writes apart; a third after them sees the snapshot as it was",
    async () => {
      const first = await start();
      await root(first, `echo kept > ${MARK} && mkdir -p ${DIR} && echo in-dir > ${DIR}/f`);
      const was = await identity(first);
      const snap = await keepAsSnapshot(first, dir);
      expect(listSandboxes().map((s) => s.name)).not.toContain(first.name);
      expect(fs.readFileSync(path.join(snap.layer, MARK.slice(1)), "utf8")).toBe("kept\n");
      expect(fs.existsSync(path.join(snap.layer, "etc/machine-id"))).toBe(false);
      expect(fs.readdirSync(path.join(snap.layer, "etc/ssh")).filter((f) => f.startsWith("ssh_host_"))).toEqual([]);

      const [b, c] = await Promise.all([start(snap), start(snap)]);
      const [ib, ic] = [await identity(b), await identity(c)];
      expect([ib.mark, ic.mark]).toEqual(["kept", "kept"]);
      // The first one's address is free again once it is gone, so a new sandbox may take it.
      expect(ib.address).not.toBe(ic.address);
      expect({ b: ib.hostKey === was.hostKey, c: ic.hostKey === was.hostKey, bc: ib.hostKey === ic.hostKey }).toEqual({
        b: false,
        c: false,
        bc: false,
      });
      expect(new Set([was.machineId, ib.machineId, ic.machineId]).size).toBe(3);
      await root(b, `echo b > ${MARK}`);
      expect((await root(c, `cat ${MARK}`)).trim()).toBe("kept");
      // A directory of the snapshot, and one of the base image, rename as on a disk (rename(2), no copying
      // fallback): overlayfs refuses a lower directory's rename with EXDEV unless it may redirect.
      await root(
        b,
        `python3 -c 'import os; os.rename("${DIR}", "${DIR}.moved"); os.rename("/etc/default", "/etc/d2")'`,
      );
      expect(await root(b, `cat ${DIR}.moved/f; ls -d ${DIR} /etc/default 2>&1; true`)).toMatch(
        /^in-dir\n.*No such file or directory\n.*No such file or directory\n$/,
      );
      expect(await root(c, `cat ${DIR}/f; ls -d /etc/default`)).toBe("in-dir\n/etc/default\n");

      await b.stop();
      await c.stop();
      const d = await start(snap);
      expect((await identity(d)).mark).toBe("kept");
    },
    T,
  );

  test("a snapshot is refused with a login user of another name, and on another base image, saying why", async () => {
    const snap: Snapshot = { layer: "/nowhere/layer", docker: "/nowhere/docker", release: "bookworm", imageHash: "0" };
    await expect(startSandbox({ from: snap, user: "deploy" })).rejects.toThrow(
      /cannot boot from the snapshot in \/nowhere: .*no user, no cloudInit/,
    );
    await expect(startSandbox({ from: snap })).rejects.toThrow(/sits on base image 0, this bookworm image is /);
  });

  test(
    "ensureSnapshot: three callers at once, one make; the others get the same snapshot",
    async () => {
      let makes = 0;
      const recipe = {
        name: "e2e-once",
        inputs: [randomBytes(8).toString("hex")],
        make: async (sb: Sandbox) => {
          makes++;
          await root(sb, `echo once > ${MARK}`);
        },
      };
      const got = await Promise.all([ensureSnapshot(recipe), ensureSnapshot(recipe), ensureSnapshot(recipe)]);
      expect(makes).toBe(1);
      expect(new Set(got.map((s) => s.layer)).size).toBe(1);
      const sb = await start(got[0]);
      expect((await identity(sb)).mark).toBe("once");
      fs.rmSync(path.dirname(got[0].layer), { recursive: true, force: true });
    },
    T,
  );
});
