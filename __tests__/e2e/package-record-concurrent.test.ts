// Issue 32 finding 1 end to end: root installs a package of its own at five moments of an install-packages
// job, each chosen by the VM's own progress (an apt hook blocked on a fifo, the job's apt-get seen waiting,
// a line of its dpkg's record, its step's exit status), never a timer; and unattended-upgrades and cloud-init
// (their units) while the job says it waits for them. After each, the inventory holds only the job's own
// packages and state absent takes exactly those: the VM is as before plus the other's package. Last, the
// job's own dpkg killed mid-unpack: what that failed transaction left is recorded too.
import type { Sandbox } from "../../dev/sandbox/index";
import { T, vmState } from "./support/absent-e2e";
import { describeE2E, expectSucceeded, root, runInstaller, sandboxPerSuite } from "./support/e2e";
import { armStrike, waitForProcess } from "./support/faults";

const OURS = ["jq", "libjq1", "libonig5"];
const HOLD = "/run/pkgtx-hold";
/** An apt-get update of anyone's waits here while the fifo exists (the test's way to stop the job mid-update). */
const UPDATE_HOOK = `APT::Update::Pre-Invoke { "if [ -p ${HOLD}/update ]; then cat ${HOLD}/update > /dev/null; fi"; };`;
/** root's own apt-get, waiting for the job's locks as an admin's would. */
const rootInstall = (pkg: string, extra = "") =>
  `DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 ${extra} install -y -q ${pkg} > ${HOLD}/${pkg}.log 2>&1`;
/** Polls (20 ms) a shell condition in the target until it holds: the VM's own progress. */
const until = (cond: string, sec = 120) =>
  `n=0; until ${cond}; do n=$((n+1)); [ $n -gt ${sec * 50} ] && exit 3; sleep 0.02; done`;

interface Moment {
  name: string;
  /** root's package. */
  pkg: string;
  /** Event fields beside packages. */
  event: Record<string, unknown>;
  /**
   * Arms the moment before the job starts; `done` settles once root's install at that moment is over;
   * `onLine` is given the job's progress lines when the moment is one the job itself announces.
   */
  arm(sb: Sandbox): Promise<{ done: Promise<unknown>; onLine?: (line: string) => void }>;
}

/**
 * root's apt-get install of `pkg` started now (in systemd unit `unit`, as unattended-upgrades' or cloud-init's
 * would run, when given) and held in its DPkg::Pre-Invoke, holding apt's locks, until released.
 */
async function heldRootInstall(
  sb: Sandbox,
  pkg: string,
  unit?: string,
): Promise<{ release(): Promise<unknown>; done: Promise<unknown> }> {
  const rc = `${HOLD}/${pkg}.rc`;
  await root(sb, `rm -f ${HOLD}/${pkg} ${rc} && mkfifo ${HOLD}/${pkg}`);
  const script = `${rootInstall(pkg, `-o 'DPkg::Pre-Invoke::=cat ${HOLD}/${pkg} > /dev/null'`)}; echo $? > ${rc}`;
  // systemd expands $ in a unit's command line: doubled, each stays one.
  if (unit)
    await root(
      sb,
      `systemd-run --quiet --collect --unit=${unit} sh -c '${script.replace(/\$/g, "$$$$").replace(/'/g, `'\\''`)}'`,
    );
  else sb.rootSpawn(script);
  const done = root(sb, until(`[ -s ${rc} ]`, 600), 700_000).then(async () => {
    if ((await root(sb, `cat ${rc}`)).trim() !== "0")
      throw new Error(`root's apt-get install ${pkg} failed: ${await root(sb, `cat ${HOLD}/${pkg}.log`)}`);
  });
  done.catch(() => undefined);
  // Its hook reading the fifo: apt-get holds its locks from then until it is released.
  const ended = done.then(() => {
    throw new Error(`root's apt-get install ${pkg} ended before its hook held it`);
  });
  ended.catch(() => undefined);
  await Promise.race([waitForProcess(sb, `^cat ${HOLD}/${pkg}$`), ended]);
  return { release: () => root(sb, `echo go > ${HOLD}/${pkg}`), done };
}

/** A held install in `unit`, released when the job says it waits for the first boot's hold on the lock. */
function firstBootMoment(units: string[], who: string, pkg: string): Moment {
  return {
    name: `by ${who} (in a unit of its: ${units.join(" or ")}) while the job waits for the first boot's lock`,
    pkg,
    event: { update: false },
    arm: async (sb) => {
      // The first name the image has no unit file of: systemd lets no transient unit take an installed one's.
      const free = `for u in ${units.join(" ")}; do systemctl cat "$u" > /dev/null 2>&1 || { echo "$u"; exit 0; }; done; exit 3`;
      const unit = (await root(sb, free)).trim();
      const held = await heldRootInstall(sb, pkg, unit);
      let released: Promise<unknown> | undefined;
      const onLine = (line: string) => {
        if (!released && line.includes("the apt lock the first boot holds")) released = held.release();
      };
      const done = held.done.then(() => {
        if (!released) throw new Error(`the job never said it waited for ${unit}`);
        return released;
      });
      return { done, onLine };
    },
  };
}

const MOMENTS: Moment[] = [
  {
    name: "before inspect (root's transaction holds the locks from before the job until its apt-get update)",
    pkg: "tree",
    event: { update: true },
    arm: async (sb) => {
      const held = await heldRootInstall(sb, "tree");
      return {
        done: waitForProcess(sb, "^apt-get update -q$")
          .then(held.release)
          .then(() => held.done),
      };
    },
  },
  {
    name: "during the job's apt-get update (root's whole transaction)",
    pkg: "bc",
    event: { update: true },
    arm: async (sb) => {
      await root(sb, `mkfifo ${HOLD}/update`);
      // The job's update is held in its hook while root's install runs whole; then it goes on, and later ones pass.
      const done = waitForProcess(sb, `^cat ${HOLD}/update$`).then(() =>
        root(sb, `${rootInstall("bc")}; r=$?; echo go > ${HOLD}/update; rm -f ${HOLD}/update; exit $r`),
      );
      return { done };
    },
  },
  {
    name: "while the job's apt-get waits for the lock",
    pkg: "pv",
    event: { update: false, apt: { lock_timeout_sec: 300 } },
    arm: async (sb) => {
      const held = await heldRootInstall(sb, "pv");
      return {
        done: waitForProcess(sb, "^apt-get install .* jq$")
          .then(held.release)
          .then(() => held.done),
      };
    },
  },
  {
    name: "during the job's unpack (root's apt-get then waits for the job's lock)",
    pkg: "ncdu",
    event: { update: false },
    arm: async (sb) => {
      // The job's own dpkg status log (apt-transaction.ts), emptied first of the last case's.
      await root(sb, "rm -rf /run/vm-install/apt-transaction");
      const unpacking = until("grep -qs '^status: jq: half-installed' /run/vm-install/apt-transaction/status");
      return { done: root(sb, unpacking, 180_000).then(() => root(sb, rootInstall("ncdu"))) };
    },
  },
  {
    name: "during verify (the job's apt-get step has just ended)",
    pkg: "dos2unix",
    event: { update: false },
    arm: async (sb) => {
      await root(sb, `touch ${HOLD}/started`);
      const stepEnded =
        `for d in /run/vm-install/steps/*/; do [ "$d/rc" -nt ${HOLD}/started ] && grep -qs 'apt-get install' "$d/cmd" && ` +
        "exit 0; done; false";
      return { done: root(sb, until(`(${stepEnded})`), 180_000).then(() => root(sb, rootInstall("dos2unix"))) };
    },
  },
  firstBootMoment(["unattended-upgrades.service", "apt-daily-upgrade.service"], "unattended-upgrades", "ed"),
  // The image's cloud-init has some of these (22.4: cloud-final, ...; 24.x and later: cloud-init-main, ...).
  firstBootMoment(
    ["cloud-final.service", "cloud-init-main.service", "cloud-init-network.service", "cloud-init.service"],
    "cloud-init",
    "unzip",
  ),
];

describeE2E("what install-packages records while root installs packages of its own", () => {
  let sb: Sandbox;
  sandboxPerSuite((s) => (sb = s), T);

  beforeAll(async () => {
    // The admin's lists, fresh: root's own installs need them before any job has run.
    await root(sb, `mkdir -p ${HOLD} && echo '${UPDATE_HOOK}' > /etc/apt/apt.conf.d/99pkgtx-hold && apt-get update -q`);
  }, T);

  for (const moment of MOMENTS) {
    test(
      `${moment.pkg} installed ${moment.name}: recorded are only the job's packages, and absent takes only those`,
      async () => {
        const pristine = await vmState(sb);
        const armed = await moment.arm(sb);
        armed.done.catch(() => undefined);
        const event = { packages: ["jq"], ...moment.event };
        const install = await runInstaller(sb, "install-packages", event, { onLine: armed.onLine });
        await armed.done;
        expectSucceeded(install);
        expect(install.result.installed).toEqual(["jq"]);
        const inventory = JSON.parse(await root(sb, "cat /var/lib/vm-install/packages.json"));
        expect(inventory.installers.packages.packages).toEqual(OURS);

        const absent = await runInstaller(sb, "install-packages", { packages: ["jq"], state: "absent" });
        expectSucceeded(absent);
        expect(absent.result.removed).toEqual(OURS);
        // The VM as before, plus root's package: nothing of root's is missing, nothing of ours is left.
        const lines = (text: string) => new Set(text.split("\n").filter((l) => / ii $/.test(l)));
        const [before, after] = [lines(pristine.packages), lines((await vmState(sb)).packages)];
        expect([...before].filter((l) => !after.has(l))).toEqual([]);
        expect([...after].filter((l) => !before.has(l))).toEqual([`${moment.pkg} ii `]);
        expect(await root(sb, "dpkg --audit; echo rc=$?")).toBe("rc=0\n");
      },
      T,
    );
  }

  test(
    "the job's own dpkg killed mid-unpack: what it left is recorded from that transaction, and absent takes it all",
    async () => {
      const pristine = await vmState(sb);
      // Last here: the striker stays in dpkg.cfg.d (it only logs while nothing is armed).
      const armed = await armStrike(sb, { on: "^status: jq: half-installed$", kill: "dpkg" });
      const event = { packages: ["jq"], update: false };
      let run = await runInstaller(sb, "install-packages", event);
      expect((await armed.fired())?.what).toMatch(/^killed dpkg \d+ at: status: jq: half-installed/);
      if (run.phase !== "Succeeded") run = await runInstaller(sb, "install-packages", event);
      expectSucceeded(run);
      const inventory = JSON.parse(await root(sb, "cat /var/lib/vm-install/packages.json"));
      expect(inventory.installers.packages.packages).toEqual(OURS);
      const absent = await runInstaller(sb, "install-packages", { packages: ["jq"], state: "absent" });
      expectSucceeded(absent);
      expect(absent.result.removed).toEqual(OURS);
      const lines = (text: string) => new Set(text.split("\n").filter((l) => / ii $/.test(l)));
      expect(lines((await vmState(sb)).packages)).toEqual(lines(pristine.packages));
    },
    T,
  );
});
