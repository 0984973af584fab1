// The rollout setting: which VMs go in which wave and how many may fail before the rest are held back. A bad
// package list then breaks one canary, not the fleet. Types, defaults, parsing and the wave plan live here
// together so the stack (gates), status (grouping) and rerun read one definition.
import { type ConfigOf, group, type SettingsRule, setting } from "../../shared/settings";
import { integer, list, object, optional, type Validator, withSchema } from "../../shared/validate";

/** A number of VMs: a whole count, or a percentage of some set of VMs written "25%". */
type Share = number | `${number}%`;

/** One wave: its number (1 first), its VMs' names in vms[] order and how many of them may fail. */
export interface Wave {
  readonly number: number;
  readonly vms: readonly string[];
  readonly budget: number;
}

/** The waves in order, the failures tolerated over the whole rollout, and whether any are. */
export interface RolloutPlan {
  readonly waves: readonly Wave[];
  readonly totalBudget: number;
  /** A failure can be tolerated somewhere: jobs then leave judging to the gates. */
  readonly tolerant: boolean;
}

const MAX_RUN_ID = 1_000_000_000;
const PERCENT = /^(100|[1-9]?[0-9])%$/;

/** A count from `min`, or a percentage from 0% (or 1% when min is 1) to 100%. */
function share(min: 0 | 1, what: string): Validator<Share> {
  const allowed = `${what}: a whole number from ${min} or a percentage such as "25%" (${min}% to 100%)`;
  return withSchema(
    (value, path, problems) => {
      const ok =
        (typeof value === "number" && Number.isInteger(value) && value >= min && value <= MAX_RUN_ID) ||
        (typeof value === "string" && PERCENT.test(value) && Number.parseInt(value, 10) >= min);
      if (!ok) problems.push(`${path}: expected ${allowed}, got ${JSON.stringify(value)}`);
      return (ok ? value : min) as Share;
    },
    {
      oneOf: [
        { type: "integer", minimum: min },
        { type: "string", pattern: PERCENT.source },
      ],
      description: allowed,
    },
  );
}

/** `rollout`: the waves and the failure budget. */
const ROLLOUT_SETTINGS = {
  waves: setting(list(share(1, "VMs in the wave"), { minItems: 1 }), {
    default: ["100%"] as Share[],
    doc: "Wave sizes in vms[] order, counts or percentages of all VMs (rounded up); the last size repeats.",
  }),
  maxFailures: setting(share(0, "failed VMs tolerated"), {
    default: 0 as Share,
    doc: "Failed VMs tolerated, a count or a percentage (rounded down) of all VMs and of each wave.",
  }),
} as const;

export const rolloutSetting = group(ROLLOUT_SETTINGS, {
  default: {},
  doc: "Waves and failure budget: which VMs go first and how many may fail before the rest are held back.",
});

export type RolloutConfig = ConfigOf<typeof ROLLOUT_SETTINGS>;

/** The keys each VM takes for the rollout (vms[].wave, vms[].runId, vms[].runIds). */
export function vmRolloutSettings(installerKeys: readonly string[]) {
  const runIds = Object.fromEntries(
    installerKeys.map((key) => [
      key,
      {
        ...optional(integer(0, MAX_RUN_ID), undefined, `Added to the ${key} job's run_id on this VM.`),
        shownDefault: 0,
      },
    ]),
  );
  return {
    wave: setting(integer(1, 1000), {
      defaultDoc: "none (rollout.waves decides)",
      doc: "This VM's wave, 1 first; given on one VM, required on every VM and exclusive with rollout.waves.",
    }),
    runId: setting(integer(0, MAX_RUN_ID), {
      defaultDoc: "0",
      doc: "Added to the top-level runId for this VM's jobs only: raise it to rerun this VM alone.",
    }),
    runIds: setting(object<Record<string, number>>(runIds as never), {
      defaultDoc: "{} (nothing added)",
      doc: 'Added per installer key on this VM, e.g. {"packages": 1}: reruns it and the installers after it.',
    }),
  } as const;
}

type WrittenRollout = { rollout?: { waves?: unknown }; vms: { wave?: number }[] };

/**
 * vms[].wave goes on every VM or on none, and never beside rollout.waves (one order of the fleet, not two
 * to reconcile).
 */
export const ROLLOUT_RULES: readonly SettingsRule[] = [
  {
    doc: "vms[].wave is given on every VM or on none, and not beside rollout.waves",
    check: ({ rollout, vms }: WrittenRollout) => {
      const problems: string[] = [];
      const numbered = vms.flatMap((vm, i) => (vm.wave === undefined ? [] : [i]));
      if (numbered.length > 0 && rollout?.waves !== undefined) {
        problems.push(
          `rollout.waves: vms[${numbered[0]}].wave numbers the waves too; give rollout.waves or vms[].wave, not both`,
        );
      }
      if (numbered.length > 0 && numbered.length < vms.length) {
        const missing = vms.findIndex((vm) => vm.wave === undefined);
        problems.push(
          `vms[${missing}].wave: required once any VM gives one (vms[${numbered[0]}] does): every VM names its wave`,
        );
      }
      return problems;
    },
  },
];

/** `share` of `of` VMs: a count as given, a percentage rounded up (sizes) or down (budgets). */
function countOf(s: Share, of: number, round: (n: number) => number): number {
  return typeof s === "number" ? s : round((Number.parseInt(s, 10) * of) / 100);
}

/** The VMs' waves: by their wave numbers (empty numbers skipped), else by rollout.waves' sizes. */
function groupVms(vms: readonly { name: string; wave?: number }[], sizes: readonly Share[]): string[][] {
  if (vms.length > 0 && vms.every((vm) => vm.wave !== undefined)) {
    const numbers = [...new Set(vms.map((vm) => vm.wave!))].sort((a, b) => a - b);
    return numbers.map((n) => vms.filter((vm) => vm.wave === n).map((vm) => vm.name));
  }
  const groups: string[][] = [];
  for (let start = 0; start < vms.length; ) {
    const size = Math.max(1, countOf(sizes[Math.min(groups.length, sizes.length - 1)], vms.length, Math.ceil));
    groups.push(vms.slice(start, start + size).map((vm) => vm.name));
    start += size;
  }
  return groups;
}

/** Which VMs go in which wave and how many failures each wave and the whole rollout tolerate. */
export function planRollout(
  vms: readonly { name: string; wave?: number }[],
  rollout: RolloutConfig = { waves: ["100%"], maxFailures: 0 },
): RolloutPlan {
  const waves = groupVms(vms, rollout.waves).map((names, i) => ({
    number: i + 1,
    vms: names,
    budget: countOf(rollout.maxFailures, names.length, Math.floor),
  }));
  const totalBudget = countOf(rollout.maxFailures, vms.length, Math.floor);
  return { waves, totalBudget, tolerant: totalBudget > 0 && waves.some((w) => w.budget > 0) };
}

/** One line per wave, as synth prints them. */
export function describeRollout(plan: RolloutPlan): string[] {
  return plan.waves.map(
    (w) =>
      `rollout wave ${w.number} of ${plan.waves.length}: ${w.vms.join(", ")} ` +
      `(tolerates ${w.budget} failed of ${w.vms.length}; ${plan.totalBudget} over the rollout)`,
  );
}
