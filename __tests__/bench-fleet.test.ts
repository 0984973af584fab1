// The fleet bench's figures (dev/bench/fleet-figures.ts): waves as rollout.waves splits the VMs, each VM's job
// time from the deploy output, and the waves' floor and allowance issue 20 sets. No VM here.
import { applySpan, jobSpans, waveGroups, wavesAllowedAddedMs, wavesFloor } from "../dev/bench/fleet-figures";

const names = ["vm1", "vm2", "vm3", "vm4", "vm5", "vm6", "vm7", "vm8"];

describe("waveGroups", () => {
  it("splits 8 VMs into waves of 1, 3 and 4, in order", () => {
    expect(waveGroups(names, [1, 3, 4])).toEqual([["vm1"], ["vm2", "vm3", "vm4"], ["vm5", "vm6", "vm7", "vm8"]]);
  });

  it("repeats the last size and cuts the last wave short, as rollout.waves does", () => {
    expect(waveGroups(names, [3])).toEqual([
      ["vm1", "vm2", "vm3"],
      ["vm4", "vm5", "vm6"],
      ["vm7", "vm8"],
    ]);
  });

  it("refuses sizes that are not whole numbers >= 1", () => {
    expect(() => waveGroups(names, [0])).toThrow(/whole numbers >= 1, got \[0\]/);
    expect(() => waveGroups(names, [])).toThrow(/got \[\]/);
  });
});

describe("jobSpans", () => {
  const lines = [
    { ms: 100, line: "bench-fleet  terraform_data.vm1_packages: Creating..." },
    { ms: 150, line: "bench-fleet  terraform_data.vm10_packages: Creating..." },
    { ms: 200, line: "bench-fleet  terraform_data.vm2_packages (rollout): Creating..." },
    { ms: 1300, line: "bench-fleet  terraform_data.vm1_packages: Creation complete after 1s [id=x]" },
    { ms: 2600, line: "bench-fleet  terraform_data.vm2_packages (rollout): Creation complete after 2s [id=y]" },
    { ms: 9000, line: "bench-fleet  terraform_data.vm10_packages: Creation complete after 9s [id=z]" },
  ];

  it("times each VM's job from Creating to Creation complete, vm1 not confused with vm10", () => {
    expect(jobSpans(lines, ["vm1", "vm2"], "packages")).toEqual({ vm1: 1200, vm2: 2400 });
  });

  it("names the VM whose job the deploy did not run", () => {
    expect(() => jobSpans(lines, ["vm3"], "packages")).toThrow(/no "Creation complete" for vm3_packages/);
  });
});

describe("applySpan", () => {
  const lines = [
    { ms: 50, line: "bench-fleet  Initializing the backend..." },
    { ms: 300, line: "bench-fleet  terraform_data.vm2_packages (rollout): Creating..." },
    { ms: 310, line: "bench-fleet  terraform_data.vm1_packages: Creating..." },
    { ms: 9300, line: "bench-fleet  Apply complete! Resources: 16 added, 0 changed, 0 destroyed." },
  ];

  it("times the apply from the first job Terraform started to Apply complete", () => {
    expect(applySpan(lines)).toBe(9000);
  });

  it("says which line is missing", () => {
    expect(() => applySpan(lines.slice(0, 3))).toThrow(/no "Apply complete!"/);
    expect(() => applySpan([lines[0], lines[3]])).toThrow(/no job creation/);
  });
});

describe("the waves' floor and allowance", () => {
  const spans = { vm1: 3000, vm2: 4000, vm3: 5000, vm4: 4500, vm5: 6000, vm6: 5500, vm7: 5000, vm8: 4000 };

  it("sums each wave's slowest job", () => {
    expect(wavesFloor(spans, waveGroups(names, [1, 3, 4]))).toBe(3000 + 5000 + 6000);
    expect(wavesFloor(spans, [names])).toBe(6000);
  });

  it("allows the floor + 5% in place of one wave's slowest job", () => {
    expect(wavesAllowedAddedMs(14000, 6000)).toBe(14700 - 6000);
  });
});
