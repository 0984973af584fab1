// The rollout setting and its wave plan: sizes as counts and percentages (rounded up), budgets (rounded
// down) per wave and overall, per-VM wave numbers, per-VM run ids, and bad input named by its key.
import { parseConfig } from "../lib/construct/config/parse";
import { describeRollout, planRollout, type RolloutConfig } from "../lib/construct/config/rollout";
import { configProblems, context } from "./support/synth";

const fleet = (n: number, waves?: number[]) =>
  Array.from({ length: n }, (_, i) => ({ name: `vm${i + 1}`, ...(waves ? { wave: waves[i] } : {}) }));

function plan(n: number, rollout: Partial<RolloutConfig>, waves?: number[]) {
  const config = parseConfig(context({ rollout, vms: fleet(n, waves) }));
  return planRollout(config.vms, config.rollout);
}

describe("rollout waves", () => {
  test("the default is one wave of every VM and no failure tolerated", () => {
    const p = plan(4, {});
    expect(p.waves).toEqual([{ number: 1, vms: ["vm1", "vm2", "vm3", "vm4"], budget: 0 }]);
    expect(p).toMatchObject({ totalBudget: 0, tolerant: false });
  });

  test.each([
    [6, [1, 2, 3], [1, 2, 3]],
    [4, [1, 2, 3], [1, 2, 1]],
    [8, [1, "25%", "100%"], [1, 2, 5]],
    // 10% of 6 is 0.6 VMs: rounded up to 1, and the last size repeats until every VM has a wave.
    [6, ["10%"], [1, 1, 1, 1, 1, 1]],
    [7, [2, "50%"], [2, 4, 1]],
    [3, [5], [3]],
  ])("%i VMs in waves %j: sizes %j in vms[] order", (n, waves, sizes) => {
    const p = plan(n, { waves: waves as RolloutConfig["waves"] });
    expect(p.waves.map((w) => w.vms.length)).toEqual(sizes);
    expect(p.waves.flatMap((w) => w.vms)).toEqual(fleet(n).map((vm) => vm.name));
    expect(p.waves.map((w) => w.number)).toEqual(sizes.map((_, i) => i + 1));
  });

  test("per-VM wave numbers order the waves; gaps between numbers are no waves", () => {
    const p = plan(5, {}, [3, 1, 3, 7, 1]);
    expect(p.waves.map((w) => [w.number, w.vms])).toEqual([
      [1, ["vm2", "vm5"]],
      [2, ["vm1", "vm3"]],
      [3, ["vm4"]],
    ]);
  });

  test.each([
    // maxFailures, wave sizes, per-wave budgets, total, tolerant
    [0, [1, 2, 3], [0, 0, 0], 0, false],
    [1, [1, 2, 3], [1, 1, 1], 1, true],
    // A percentage of each wave and of the fleet, rounded down: never more than was asked for.
    ["50%", [1, 2, 3], [0, 1, 1], 3, true],
    ["10%", [1, 2, 3], [0, 0, 0], 0, false],
    ["34%", [3, 3], [1, 1], 2, true],
    ["100%", [2, 4], [2, 4], 6, true],
  ])("maxFailures %j over waves %j: %j per wave, %j overall", (maxFailures, waves, perWave, total, tolerant) => {
    const n = (waves as number[]).reduce((a, b) => a + b, 0);
    const p = plan(n, { waves: waves as number[], maxFailures: maxFailures as RolloutConfig["maxFailures"] });
    expect(p.waves.map((w) => w.budget)).toEqual(perWave);
    expect(p.totalBudget).toBe(total);
    expect(p.tolerant).toBe(tolerant);
  });

  test("synth's lines: one per wave, naming its VMs and budgets", () => {
    expect(describeRollout(plan(3, { waves: [1, 2], maxFailures: 1 }))).toEqual([
      "rollout wave 1 of 2: vm1 (tolerates 1 failed of 1; 1 over the rollout)",
      "rollout wave 2 of 2: vm2, vm3 (tolerates 1 failed of 2; 1 over the rollout)",
    ]);
  });

  test("per-VM runId and runIds are parsed (absent: nothing added)", () => {
    const config = parseConfig(context({ vms: [{ name: "vm1", runId: 2, runIds: { packages: 3 } }, { name: "vm2" }] }));
    expect(config.vms[0]).toMatchObject({ runId: 2, runIds: { packages: 3 } });
    expect(config.vms[1].runId).toBeUndefined();
  });
});

describe("bad rollout input names its key", () => {
  test.each([
    [{ waves: [] }, /^rollout\.waves: /],
    [{ waves: [0] }, /^rollout\.waves\[0\]: expected VMs in the wave: a whole number from 1 or a percentage/],
    [{ waves: [1, "0%"] }, /^rollout\.waves\[1\]: expected .* got "0%"$/],
    [{ waves: ["150%"] }, /^rollout\.waves\[0\]: expected .* got "150%"$/],
    [{ waves: [1.5] }, /^rollout\.waves\[0\]: expected .* got 1\.5$/],
    [{ maxFailures: -1 }, /^rollout\.maxFailures: expected failed VMs tolerated: a whole number from 0/],
    [{ maxFailures: "ten" }, /^rollout\.maxFailures: expected .* got "ten"$/],
    [
      { maxFails: 1 },
      /^rollout\.maxFails: unknown key; did you mean "maxFailures"\? allowed here: waves, maxFailures$/,
    ],
  ])("rollout %j", (rollout, message) => {
    expect(configProblems(context({ rollout }))).toEqual([expect.stringMatching(message)]);
  });

  test("vms[].wave on some VMs only, or beside rollout.waves", () => {
    expect(configProblems(context({ vms: [{ name: "a", wave: 1 }, { name: "b" }] }))).toEqual([
      "vms[1].wave: required once any VM gives one (vms[0] does): every VM names its wave",
    ]);
    expect(configProblems(context({ rollout: { waves: [1] }, vms: [{ name: "a", wave: 1 }] }))).toEqual([
      "rollout.waves: vms[0].wave numbers the waves too; give rollout.waves or vms[].wave, not both",
    ]);
  });

  test("bad per-VM wave and run ids", () => {
    const p = configProblems(
      context({ vms: [{ name: "a", wave: 0, runId: -1, runIds: { pakages: 1, docker: "2" } }] }),
    );
    expect(p).toEqual([
      "vms[0].wave: expected a whole number from 1 to 1000, got number 0",
      "vms[0].runId: expected a whole number from 0 to 1000000000, got number -1",
      expect.stringMatching(
        /^vms\[0\]\.runIds\.pakages: unknown key; did you mean "packages"\? allowed here: packages, docker, postgres/,
      ),
      'vms[0].runIds.docker: expected a whole number from 0 to 1000000000, got "2"',
    ]);
  });
});
