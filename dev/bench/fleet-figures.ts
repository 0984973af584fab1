// The figures the fleet bench (dev/bench/fleet.ts) derives from a deploy: which VMs form each wave, how long each
// VM's job took (from when Terraform said it started and finished creating it), and the waves' floor, the
// sum of each wave's slowest VM: a rollout in waves cannot be faster than that, and issue 20 allows 5% more.
// Pure, so __tests__/bench-fleet.test.ts checks them without a VM.

/** VM names split into waves of the given sizes, in order; the last size repeats, as rollout.waves does. */
export function waveGroups(names: string[], sizes: number[]): string[][] {
  if (sizes.length === 0 || sizes.some((s) => !Number.isInteger(s) || s < 1))
    throw new Error(`waveGroups: sizes must be whole numbers >= 1, got ${JSON.stringify(sizes)}`);
  const out: string[][] = [];
  for (let at = 0, i = 0; at < names.length; i++) {
    const size = sizes[Math.min(i, sizes.length - 1)];
    out.push(names.slice(at, at + size));
    at += size;
  }
  return out;
}

/** One line of a deploy's output and when it arrived (ms on any monotonic clock). */
export interface TimedLine {
  ms: number;
  line: string;
}

/**
 * Each VM's job time, from `terraform_data.<vm>_<installer>: Creating...` to `...: Creation complete`.
 * Throws naming the VM when either line is missing (the deploy did not run that job).
 */
export function jobSpans(lines: TimedLine[], vms: string[], installer: string): Record<string, number> {
  const at = (vm: string, event: string) => {
    const re = new RegExp(`terraform_data\\.${vm}_${installer}(?: \\([^)]*\\))?: ${event}`);
    const hit = lines.find((l) => re.test(l.line));
    if (!hit) throw new Error(`jobSpans: no "${event}" for ${vm}_${installer} in the deploy output`);
    return hit.ms;
  };
  return Object.fromEntries(
    vms.map((vm) => [vm, Math.round(at(vm, "Creation complete") - at(vm, "Creating\\.\\.\\."))]),
  );
}

/**
 * From the first job Terraform started creating to its "Apply complete!": the deploy less synth, init and
 * plan (the fixed cost every cdktf deploy pays before a job can start). Throws when either line is missing.
 */
export function applySpan(lines: TimedLine[]): number {
  const first = lines.find((l) => /terraform_data\.\S+(?: \([^)]*\))?: Creating\.\.\./.test(l.line));
  const done = lines.find((l) => /Apply complete!/.test(l.line));
  if (!first || !done)
    throw new Error(`applySpan: no ${first ? '"Apply complete!"' : "job creation"} in the deploy output`);
  return Math.round(done.ms - first.ms);
}

/** The sum over waves of each wave's slowest job: the least a rollout in these waves can take for its jobs. */
export function wavesFloor(spans: Record<string, number>, waves: string[][]): number {
  return waves.reduce((sum, wave) => sum + Math.max(...wave.map((vm) => spans[vm])), 0);
}

/** Issue 20: waves may cost at most the sum of the waves' slowest VMs plus this share. */
const WAVES_SLACK = 0.05;

/**
 * How much longer than one wave a deploy in waves may take, from medians of the same run: one wave's
 * jobs take its slowest VM; in waves they may take the waves' floor + 5%; everything else is the same.
 */
export function wavesAllowedAddedMs(wavesFloorMedian: number, oneWaveSlowestMedian: number): number {
  return Math.round(wavesFloorMedian * (1 + WAVES_SLACK) - oneWaveSlowestMedian);
}
