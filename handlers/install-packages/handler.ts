// install-packages: make sure a list of apt packages is installed on the VM, Ansible-apt style. The event's
// keys, rules and defaults are in definition.ts; the result is the common shape (handler-kit.ts) plus
// per-package lists. When nothing could be installed the job fails with every reason in the message; a
// rerun changes nothing and runs no apt-get at all.

import { type EnsureOutcome, ensurePackages } from "../common/ensure-packages";
import { defineHandler, type InstallerReport, type InstallerResult, runHandler } from "../common/handler-kit";
import { packagesDefinition } from "./definition";

export interface InstallPackagesReport extends InstallerReport {
  installed: string[];
  already_installed: string[];
  failed: { name: string; reason: string }[];
  versions: Record<string, string>;
  apt_update: { ran: boolean; reason: string };
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

/**
 * The outcome in words: one line per kind of change, a warning per package that failed. In check mode the
 * change is the one a real run would report, and a failure is only foreseen (a warning, status ok).
 */
export function report(outcome: EnsureOutcome, total: number, check = false): InstallPackagesReport {
  const done = check ? outcome.wouldInstall.map((spec) => spec.split("=")[0]) : outcome.installed;
  const changes = done.length ? [`installed ${done.join(" ")}`] : [];
  const warnings = outcome.failed.map(
    (f) => `${f.name} ${check ? "may fail to install" : "was not installed"}: ${f.reason}`,
  );
  const summary =
    outcome.installed.length || outcome.failed.length
      ? `installed ${outcome.installed.length}, already installed ${outcome.already_installed.length}, failed ${outcome.failed.length}`
      : `nothing to do: all ${plural(total, "package is", "packages are")} already installed`;
  return {
    status: outcome.failed.length && !check ? "partial" : "ok",
    changes,
    summary,
    warnings,
    installed: outcome.installed,
    already_installed: outcome.already_installed,
    failed: check ? [] : outcome.failed,
    versions: outcome.versions,
    apt_update: outcome.update,
  };
}

export const handler = defineHandler({
  definition: packagesDefinition,
  async run({ event, check, apt, progress }) {
    const outcome = await ensurePackages(apt, event.packages, {
      update: event.update,
      cacheValidSec: event.cache_valid_sec,
      check,
    });
    const total = event.packages.length;
    if (check) return report(outcome, total, true);
    if (outcome.failed.length === total) {
      throw new Error(
        `none of the ${plural(total, "package", "packages")} could be installed:\n${outcome.failed.map((f) => `  - ${f.name}: ${f.reason}`).join("\n")}`,
      );
    }
    const result = report(outcome, total);
    if (outcome.installed.length || outcome.failed.length) progress.info(result.summary); // "nothing to do" is already said
    return result;
  },
});

/**
 * The job's entrypoint (handler.install): env carries the connection, the event the packages. Only the
 * event is taken: whatever else a platform passes is ignored (tests use runHandler with deps).
 */
export async function install(event: unknown): Promise<InstallerResult<InstallPackagesReport>> {
  return runHandler(handler, event);
}
