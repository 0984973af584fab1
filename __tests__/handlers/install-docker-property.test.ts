// The promise over generated states (issue 34): on a docker state drawn from a seed (packages of either
// channel, earlier runs, hand edits to sources, keyrings, daemon.json, the group, the service) a check changes
// nothing on the VM, its would_change is the following run's changes, and a check after that run finds
// nothing. PROPERTY_SEED=<seed> PROPERTY_CASES=1 replays one case.
import { Draw, propertySeeds } from "../support/seeded-random";
import { dockerJob, drawState, refreshed } from "./support/docker-states";
import { DISTRO, DockerVm, type DockerVmState } from "./support/docker-vm";
import { doubleCase, holdsOverSeeds } from "./support/promise-property";

const PACKAGE_WORK = /^installed /;
/** Docker's key and source, older entries of its repository: set up before the lists are read, so never blind. */
const REPOSITORY =
  /^(created \/etc\/apt\/keyrings|(wrote|made) \/etc\/apt\/|removed (\/|this repository's entries |key ))/;

const { seed, seeds } = propertySeeds(3403, 300);

describe(`install-docker: check's would_change is the next run's changes (PROPERTY_SEED=${seed})`, () => {
  it(`holds over ${seeds.length} generated states`, async () => {
    const held = await holdsOverSeeds(seeds, async (caseSeed) => {
      const drawn = await drawState(new Draw(caseSeed));
      const { vm, event } = drawn;
      return {
        ...doubleCase(caseSeed, drawn, (check) => dockerJob(vm, check ? { ...event, check: true } : event)),
        seenThroughBlind: REPOSITORY,
        // Lists a run refreshes may offer what they do not now (Docker's repository once its source is
        // written): no check of package work can know. The double's state says when, not the check's words.
        blind: (check) =>
          (check.would_change as string[]).some((l) => PACKAGE_WORK.test(l)) &&
          JSON.stringify(vm.state.lists) !== JSON.stringify(refreshed(vm, event))
            ? "none"
            : undefined,
      };
    });
    if (seeds.length >= 100)
      for (const way of ["failed alike", "nothing to do", "foreseen", "blind"])
        expect([way, held[way] ?? 0]).not.toEqual([way, 0]);
  }, 300_000);
});

describe("install-docker: cases the property found (each failed on the code before its fix)", () => {
  const fresh = (over: Partial<DockerVmState> = {}) =>
    new DockerVm({
      installed: { "ca-certificates": DISTRO["ca-certificates"][0], curl: DISTRO.curl[0] },
      mirror: structuredClone(DISTRO),
      lists: structuredClone(DISTRO),
      listsAgeSec: 60,
      files: { "/etc/apt/sources.list": "deb http://deb.debian.org/debian bookworm main\n" },
      keyringsDir: { exists: true },
      service: { active: "inactive", enabled: "" },
      users: ["ubuntu"],
      ...over,
    });
  const checkThenRun = async (vm: DockerVm, event: object) => {
    const check = await dockerJob(vm, { ...event, check: true });
    const run = await dockerJob(vm, event);
    return { foreseen: check.would_change, done: run.changes };
  };

  it("an engine's install starts docker.service: daemon.json and the service are planned on it", async () => {
    const { foreseen, done } = await checkThenRun(fresh(), { channel: "distro", compose: false, verify: "daemon" });
    expect(done).toContain("restarted docker.service (log-driver, log-opts)");
    expect(done).toEqual(foreseen);
  });

  it("a dockerd that does not answer is restarted before daemon.json is applied (by a reload)", async () => {
    const vm = fresh();
    await dockerJob(vm, { channel: "distro", compose: false, verify: "daemon" });
    vm.state.stuck = true;
    const { foreseen, done } = await checkThenRun(vm, {
      channel: "distro",
      compose: false,
      verify: "daemon",
      registry_mirrors: ["https://mirror.gcr.io"],
    });
    expect(done[0]).toMatch(/^restarted docker\.service: the installed Docker failed its verification/);
    expect(done).toEqual(foreseen);
  });

  it("a dockerd that does not answer is restarted before package work that leaves the engine (seed 77)", async () => {
    const vm = fresh();
    await dockerJob(vm, { channel: "distro", compose: false, verify: "daemon" });
    vm.state.stuck = true;
    const { foreseen, done } = await checkThenRun(vm, {
      channel: "distro",
      compose: true,
      verify: "daemon",
      registry_mirrors: ["https://mirror.gcr.io"],
    });
    expect(done[0]).toMatch(/^restarted docker\.service: the installed Docker failed its verification/);
    expect(done[1]).toMatch(/^installed docker-compose/);
    expect(done).toEqual(foreseen);
  });

  it("a masked docker.service is unmasked and started before daemon.json's restart (seed 3724846344)", async () => {
    const vm = fresh();
    await dockerJob(vm, { channel: "distro", compose: false, verify: "daemon" });
    vm.state.service = { active: "inactive", enabled: "masked" };
    const { foreseen, done } = await checkThenRun(vm, {
      channel: "distro",
      compose: false,
      verify: "daemon",
      log_max_size: "50m",
    });
    expect(done.slice(0, 3)).toEqual(["unmasked docker.service", "enabled docker.service", "started docker.service"]);
    expect(done).toEqual(foreseen);
    expect(vm.state.service).toEqual({ active: "active", enabled: "enabled" });
  });

  it("official from nothing: the check names the repository's files as the run writes them", async () => {
    const { foreseen, done } = await checkThenRun(fresh(), { channel: "official", verify: "daemon" });
    expect(done).toEqual(foreseen);
  });
});
