// Generated starting states of install-packages' stateful double (apt-vm.ts) and the events run on it, for
// the property test of the promise: what the mirror offers, whether the VM's lists are fresh, stale or
// missing, what dpkg has installed and at which version, and earlier runs (the inventory they leave).
// Every choice comes from one Draw, so a seed names its state and event.
import { handler } from "../../../handlers/install-packages/handler";
import type { Draw } from "../../support/seeded-random";
import { AptVm, type AptVmState } from "./apt-vm";
import { jobOn } from "./run-scripted";

/** The mirror's versions by name, newest first; "newtool" only in a mirror newer than stale lists. */
const MIRROR: Record<string, string[]> = {
  git: ["1:2.39.5-0+deb12u1", "1:2.39.2-1.1"],
  curl: ["7.88.1-10+deb12u8", "7.88.1-10+deb12u5"],
  jq: ["1.6-2.1"],
  htop: ["3.2.2-2"],
  tree: ["2.1.0-1"],
  newtool: ["0.9-1"],
};
/** Names a spec may carry: the mirror's, and one no list offers. */
const NAMES = [...Object.keys(MIRROR), "no-such-pkg"];

/** One install-packages job on `vm`. */
export const aptJob = (vm: AptVm, event: object) => jobOn(handler, vm, event);

/** Lists older than the mirror: each name's newest version missing where it has two, no newtool. */
function staleLists(): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [n, v] of Object.entries(MIRROR)) if (n !== "newtool") out[n] = v.length > 1 ? v.slice(1) : v;
  return out;
}

/** A run of `event` on `state` runs apt-get update before installing (update, and the lists missing or old). */
export function refreshes(event: Record<string, unknown>, state: AptVmState): boolean {
  const cache = event.cache_valid_sec as number | undefined;
  return event.update !== false && (cache === undefined || !state.lists || state.listsAgeSec >= cache);
}

/** An event: 1 to 4 packages, some pinned (to a version the mirror has, or one nobody has), update or not. */
function drawEvent(d: Draw): Record<string, unknown> {
  const names = d.subset(NAMES, 0.35, 1).slice(0, 4);
  const packages = names.map((n) => {
    if (!MIRROR[n] || !d.chance(0.3)) return n;
    return `${n}=${d.chance(0.85) ? d.pick(MIRROR[n]) : "9.9-9"}`;
  });
  const cache = d.chance(0.3) ? { cache_valid_sec: d.pick([60, 86_400]) } : {};
  return { packages, update: d.chance(0.6), ...cache };
}

/**
 * A drawn state (lists fresh, stale or missing; packages installed at some version; 0 to 2 earlier runs)
 * and the event to check and run on it; `story` says which.
 */
export async function drawState(d: Draw) {
  const lists = d.pick(["fresh", "stale", "none"] as const);
  const state: AptVmState = {
    installed: {},
    mirror: structuredClone(MIRROR),
    lists: lists === "fresh" ? structuredClone(MIRROR) : lists === "stale" ? staleLists() : undefined,
    listsAgeSec: d.pick([30, 7200, 864_000]),
  };
  for (const n of Object.keys(MIRROR)) if (d.chance(0.3)) state.installed[n] = d.pick(MIRROR[n]);
  // An interrupted dpkg: a package left configuring (one of those installed, or one being installed).
  if (d.chance(0.15)) {
    const n = d.pick(Object.keys(MIRROR));
    state.unsettled = { [n]: { status: d.pick(["unpacked", "half-configured"]), version: d.pick(MIRROR[n]) } };
    delete state.installed[n];
  }
  const left = state.unsettled ? `, dpkg left ${JSON.stringify(state.unsettled)}` : "";
  const story = [`lists ${lists} (${state.listsAgeSec}s old), installed ${JSON.stringify(state.installed)}${left}`];
  const vm = new AptVm(state);
  let event: Record<string, unknown> | undefined;
  for (let runs = d.int(0, 2); runs > 0; runs--) {
    event = drawEvent(d);
    const outcome = await aptJob(vm, event).then(
      (r) => r.status,
      (err: Error) => `failed: ${err.message.split("\n")[0]}`,
    );
    story.push(`run ${JSON.stringify(event)}: ${outcome}`);
  }
  if (d.chance(0.2)) {
    vm.state.lists = d.chance() ? undefined : staleLists();
    story.push(`lists then ${vm.state.lists ? "stale" : "removed"}`);
  }
  const next = event && d.chance(0.3) ? event : drawEvent(d);
  return { vm, story: [...story, `then check and run ${JSON.stringify(next)}`], event: next };
}
