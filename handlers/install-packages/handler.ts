// install-packages: make sure a list of apt packages is installed on the VM, Ansible-apt style, in the
// kit's model: inspect reads dpkg, the plan is one install change, its apply runs apt (its preview, in a
// check, asks the lists as they are what they offer). When nothing could be installed the job fails with
// every reason in the message; a rerun changes nothing and runs no apt-get at all.

import { type AbsentReport, absentModel, presentOrAbsent } from "../common/absent-model";
import type { PackageState } from "../common/apt-output";
import {
  approximatePreview,
  type EnsureOutcome,
  emptyOutcome,
  exactPreview,
  installNeeded,
  lookAtPackages,
  PACKAGES_PROBE,
  packagesProbe,
  refreshesLists,
  stillNeeded,
  type Wanted,
  wantedOf,
} from "../common/ensure-packages";
import { defineHandler, runHandler } from "../common/handler-kit";
import type { ApplyOutcome, Change, InstallerModel, ModelRun } from "../common/installer-model";
import type { InstallerReport, InstallerResult } from "../common/installer-result";
import { type PackagesEvent, packagesDefinition } from "./definition";

export interface InstallPackagesReport extends InstallerReport {
  installed: string[];
  already_installed: string[];
  failed: { name: string; reason: string }[];
  versions: Record<string, string>;
  apt_update: { ran: boolean; reason: string };
}

/** What dpkg says of the packages asked for, sorted into what is there and what is not. */
interface PackagesState {
  wanted: Wanted[];
  before: Map<string, PackageState>;
  needed: Wanted[];
  /** already_installed and versions filled in. */
  seen: EnsureOutcome;
}

/** What the install change did, package by package. */
interface InstallOutcome extends ApplyOutcome {
  done: EnsureOutcome;
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

const installedLine = (names: string[]) => (names.length ? [`installed ${names.join(" ")}`] : []);

/** The summary line of a run, from what it found and did. */
function summaryOf(outcome: EnsureOutcome, total: number): string {
  const { installed, already_installed, failed } = outcome;
  if (installed.length || failed.length)
    return `installed ${installed.length}, already installed ${already_installed.length}, failed ${failed.length}`;
  return `nothing to do: all ${plural(total, "package is", "packages are")} already installed`;
}

/** The job fails when every package asked for failed, naming each reason. */
function noneInstalled(failed: { name: string; reason: string }[], total: number): void {
  if (failed.length < total) return;
  const reasons = failed.map((f) => `  - ${f.name}: ${f.reason}`).join("\n");
  throw new Error(`none of the ${plural(total, "package", "packages")} could be installed:\n${reasons}`);
}

/** The one change: apt-get update (as the event allows), install, and dpkg's word on each package. */
function installChange(state: PackagesState, event: PackagesEvent): Change<PackagesEvent, InstallOutcome> {
  const names = state.needed.map((w) => w.name);
  return {
    kind: "install",
    what: installedLine(names),
    why: `not installed (or not at the pinned version): ${names.join(", ")}`,
    async apply({ apt }) {
      const opts = { update: event.update, cacheValidSec: event.cache_valid_sec };
      const done = await installNeeded(apt, state, opts, structuredClone(state.seen));
      noneInstalled(done.failed, state.wanted.length);
      return { what: installedLine(done.installed), done };
    },
    // A run that refreshes the lists first may install what they offer not now: only foreseen, as a warning.
    // One that does not installs from these very lists: what they cannot offer fails, as in the run.
    async preview({ apt }) {
      const opts = { update: event.update, cacheValidSec: event.cache_valid_sec };
      if (await refreshesLists(apt, opts)) {
        const foreseen = await approximatePreview(apt, state.needed, emptyOutcome());
        return {
          notes: foreseen.failed.map((f) => ({ line: `${f.name} may fail to install: ${f.reason}`, warning: true })),
        };
      }
      const foreseen = await exactPreview(apt, state.needed, emptyOutcome(), opts);
      noneInstalled(foreseen.failed, state.wanted.length);
      return {
        what: installedLine(foreseen.wouldInstall.map((spec) => spec.split("=")[0])),
        notes: foreseen.failed.map((f) => ({ line: `${f.name} would not be installed: ${f.reason}`, warning: true })),
      };
    },
  };
}

/** The report: per package from what the install did, or (nothing to do, or a check) from the look. */
function report(run: ModelRun<PackagesState, PackagesEvent, InstallOutcome>): Omit<InstallPackagesReport, "changes"> {
  const done = run.applied[0]?.outcome?.done;
  const outcome = done ?? run.state.seen;
  const total = run.state.wanted.length;
  const notRun = { ran: false, reason: "nothing was installed, so the package lists were not refreshed" };
  return {
    status: outcome.failed.length ? "partial" : "ok",
    summary: summaryOf(outcome, total),
    warnings: outcome.failed.map((f) => `${f.name} was not installed: ${f.reason}`),
    installed: outcome.installed,
    already_installed: outcome.already_installed,
    failed: outcome.failed,
    versions: outcome.versions,
    apt_update: done || !run.state.needed.length ? outcome.update : notRun,
  };
}

const packagesModel: InstallerModel<PackagesEvent, PackagesState, InstallPackagesReport, InstallOutcome> = {
  firstLook: (event) => [packagesProbe(wantedOf(event.packages))],
  async inspect({ event, apt, firstLook }) {
    const wanted = wantedOf(event.packages);
    const seen = emptyOutcome();
    const before = await lookAtPackages(apt, wanted, firstLook?.(PACKAGES_PROBE));
    const needed = stillNeeded(apt, wanted, before, seen);
    return { wanted, before, needed, seen };
  },
  plan: (state, event) => (state.needed.length ? [installChange(state, event)] : []),
  report,
};

/** State absent takes back what install-packages recorded it installed (common/absent-model.ts). */
export const handler = defineHandler({
  definition: packagesDefinition,
  model: presentOrAbsent(packagesModel, absentModel("packages")),
});

/**
 * The job's entrypoint (handler.install): env carries the connection, the event the packages. Only the
 * event is taken: whatever else a platform passes is ignored (tests use runHandler with deps).
 */
export async function install(event: unknown): Promise<InstallerResult<InstallPackagesReport | AbsentReport>> {
  return runHandler<typeof packagesDefinition.settings, InstallPackagesReport | AbsentReport>(handler, event);
}
