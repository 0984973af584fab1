// install-packages: make sure a list of apt packages is installed on the VM, Ansible-apt style.
//   event: { packages: ["git", "curl=7.88.1-10+deb12u5", ...],   required, Debian names, optional =version
//            update: true,                                         apt-get update first (only if something is missing)
//            cache_valid_sec: 3600,                                optional: skip the update when lists are fresher
//            ssh: { attempts, delay_sec, budget_sec, timeout_sec }, optional: SSH retry policy
//            apt: { lock_timeout_sec, lock_attempts, lock_retry_delay_sec, install_timeout_sec } }
//   env:   VM_IP, SSH_USER, SSH_KEY, optional SSH_PORT, SSH_HOST_KEY_SHA256
// Result: status "ok" (all there) or "partial" (some failed, each with a reason); when nothing could be
// installed the job fails with every reason in the message. A rerun changes nothing and runs no install.

import { Apt, aptEventSettings, AptEventSettings, ensurePackages, resolveAptSettings } from "../common/apt";
import { CommonResult, defineInstaller, runInstaller } from "../common/handler-kit";
import { packageList } from "../../shared/names";
import { boolean, integer, optional, required } from "../../shared/validate";

export interface InstallPackagesEvent {
  packages: string[];
  update: boolean;
  cache_valid_sec?: number;
  apt?: AptEventSettings;
}

export interface InstallPackagesResult {
  status: "ok" | "partial";
  /** True when this run installed something. */
  changed: boolean;
  installed: string[];
  already_installed: string[];
  failed: { name: string; reason: string }[];
  versions: Record<string, string>;
  apt_update: { ran: boolean; reason: string };
  /** One line for people reading the Terraform output. */
  summary: string;
}

export const installer = defineInstaller<InstallPackagesEvent, InstallPackagesResult>({
  name: "install-packages",
  fields: {
    packages: required(packageList),
    update: optional(boolean(), true),
    cache_valid_sec: optional(integer(0, 30 * 24 * 3600)),
    apt: optional(aptEventSettings),
  },
  async run({ event, remote, progress }) {
    const apt = new Apt(remote, resolveAptSettings(event.apt), { progress });
    const outcome = await ensurePackages(apt, event.packages, { update: event.update, cacheValidSec: event.cache_valid_sec });

    const total = event.packages.length;
    if (outcome.failed.length === total) {
      throw new Error(
        `none of the ${total} package${total === 1 ? "" : "s"} could be installed:\n` + outcome.failed.map((f) => `  - ${f.name}: ${f.reason}`).join("\n"),
      );
    }
    const summary = outcome.changed || outcome.failed.length
      ? `installed ${outcome.installed.length}, already installed ${outcome.already_installed.length}, failed ${outcome.failed.length}`
      : `nothing to do: all ${total} package${total === 1 ? " is" : "s are"} already installed`;
    if (outcome.changed || outcome.failed.length) progress.info(summary); // "nothing to do" is already said
    return {
      status: outcome.failed.length ? "partial" : "ok",
      changed: outcome.changed,
      installed: outcome.installed,
      already_installed: outcome.already_installed,
      failed: outcome.failed,
      versions: outcome.versions,
      apt_update: outcome.update,
      summary,
    };
  },
});

/**
 * The job's entrypoint (handler.install): env carries the connection, the event the packages. Only the
 * event is taken: whatever else a platform passes is ignored (tests use runInstaller with deps).
 */
export async function install(event: unknown): Promise<InstallPackagesResult & CommonResult> {
  return runInstaller(installer, event);
}
