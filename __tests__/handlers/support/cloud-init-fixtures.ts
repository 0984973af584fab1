// cloud-init's files as its own status_wrapper writes them (cloudinit/cmd/main.py): status.json per stage
// (errors; from 23.4 on recoverable_errors too), result.json once modules:final has ended. 22.4 is Debian
// 12's version. The probes' answers (cloud-init.ts CLOUD_INIT_PROBES) are assembled from them.
import type { Answer } from "./look-answers";

const DS = "DataSourceNoCloud [seed=/var/lib/cloud/seed/nocloud-net][dsmode=net]";
const STAGES = ["init-local", "init", "modules-config", "modules-final"] as const;
type Stage = (typeof STAGES)[number];

export interface StatusShape {
  /** Stages that have ended, in order; the next one is running when `running` is set. */
  finished: Stage[];
  running?: Stage;
  errors?: Partial<Record<Stage, string[]>>;
  /** 23.4+: per stage, level -> messages. */
  recoverable?: Partial<Record<Stage, Record<string, string[]>>>;
}

export function statusJson(shape: StatusShape): string {
  const v1: Record<string, unknown> = { datasource: DS, stage: shape.running ?? null };
  let t = 1_700_000_000;
  for (const stage of [...STAGES, "modules-init"]) {
    const done = (shape.finished as string[]).includes(stage);
    const entry: Record<string, unknown> = {
      errors: shape.errors?.[stage as Stage] ?? [],
      start: done || shape.running === stage ? (t += 3) : null,
      finished: done ? (t += 2) : null,
    };
    if (shape.recoverable) entry.recoverable_errors = shape.recoverable[stage as Stage] ?? {};
    v1[stage] = entry;
  }
  return JSON.stringify({ v1 }, null, 1);
}

function resultJson(errors: string[] = [], recoverable?: Record<string, string[]>): string {
  const v1 = { datasource: DS, errors, ...(recoverable ? { recoverable_errors: recoverable } : {}) };
  return JSON.stringify({ v1 });
}

export interface UnitShape {
  id: string;
  active: "active" | "activating" | "inactive" | "failed";
  result?: string;
}

const UNITS = ["cloud-init-local", "cloud-init", "cloud-config", "cloud-final"];
const ALL_DONE: UnitShape[] = UNITS.map((u) => ({ id: `${u}.service`, active: "active" }));

export interface ProbeShape {
  status?: string;
  result?: string;
  system?: string;
  units?: UnitShape[];
  markers?: string[];
}

/** `systemctl show` of one unit, as the probe asks for it. */
function unitBlock(u: UnitShape): string {
  const result = u.result ?? "success";
  return `Id=${u.id}\nLoadState=loaded\nActiveState=${u.active}\nResult=${result}\n`;
}

/** The probes' answers on a VM with cloud-init. */
export function cloudInitProbe(opts: ProbeShape): Record<string, Answer> {
  return {
    cloud_init: "present\n",
    "cloud_init.markers": (opts.markers ?? ["/run/cloud-init/enabled"]).map((m) => `${m}\n`).join(""),
    "systemd.system": `${opts.system ?? "running"}\n`,
    "cloud_init.units": (opts.units ?? ALL_DONE).map(unitBlock).join("\n"),
    "cloud_init.status": opts.status ?? "",
    "cloud_init.result": opts.result ?? "",
  };
}

/** Units while modules:final runs. */
const FINAL: UnitShape = { id: "cloud-final.service", active: "activating" };
export const FINAL_RUNNING: UnitShape[] = [...ALL_DONE.slice(0, 3), FINAL];

export const RUNCMD_ERROR = "('scripts-user', RuntimeError('Runparts: 1 failures (runcmd) in 1 attempted commands'))";

/** 22.4, done, no errors. */
export const DONE_22 = cloudInitProbe({ status: statusJson({ finished: [...STAGES] }), result: resultJson() });
/** 22.4, modules:final running. */
export const RUNNING_FINAL_22 = cloudInitProbe({
  status: statusJson({ finished: ["init-local", "init", "modules-config"], running: "modules-final" }),
  system: "starting",
  units: FINAL_RUNNING,
});
/** 22.4, a runcmd that exited non-zero: cloud-final fails, result.json names the module. */
export const RUNCMD_FAILED_22 = cloudInitProbe({
  status: statusJson({ finished: [...STAGES], errors: { "modules-final": [RUNCMD_ERROR] } }),
  result: resultJson([RUNCMD_ERROR]),
  system: "degraded",
  units: [...ALL_DONE.slice(0, 3), { id: "cloud-final.service", active: "failed", result: "exit-code" }],
});
/** 23.4+, done with recoverable errors (a deprecated key, a schema warning). */
export const DONE_RECOVERABLE_23 = cloudInitProbe({
  status: statusJson({
    finished: [...STAGES],
    recoverable: {
      init: { DEPRECATED: ["Deprecated cloud-config provided: chpasswd.list:  Deprecated in version 22.2."] },
      "modules-final": { WARNING: ["Invalid cloud-config provided:\nfoo: Additional properties are not allowed"] },
    },
  }),
  result: resultJson(),
});
