// npm run rerun -- <vm> [installer] [terraform apply options]: runs one VM's installers again (or one installer
// and those after it on that VM), leaving every other VM alone, without editing cdktf.json: one terraform
// apply with -replace= of exactly those jobs, so the next deploy has nothing left to do. To make a rerun part
// of the configuration instead, raise vms[].runId or vms[].runIds (docs/rollout.md).
// Run it in the project folder, with the environment a deploy has. Exit code: terraform's (docs/exit-codes.md).
import type { VmInstallConfig } from "../lib/construct/config/types";
import { INSTALLERS } from "../lib/construct/installers/catalog";
import { installerJobId } from "../lib/construct/resource-names";
import { BadUsage, type CommandSpec, EXIT, runCommand } from "../lib/operator/exit-codes";
import { approvalRefusal } from "../lib/operator/terraform-approval";
import { projectFolder, readProject, synthAndApply } from "../lib/operator/terraform-cli";

const say = (line: string) => process.stderr.write(`rerun: ${line}\n`);
const USAGE = "usage: npm run rerun -- <vm name> [installer, e.g. install-packages] [terraform apply options]";
// Only argv[0] asks for help: the options after the names are terraform apply's.
const COMMAND: CommandSpec = { name: "rerun", usage: USAGE, help: "first" };

/** A command line rerun refuses (bad usage), and why. */
export class RerunRefused extends BadUsage {}

export interface RerunRequest {
  vmName: string;
  /** The installer's handler name ("install-packages") or key ("packages"); absent: every one of the VM's. */
  installer?: string;
  applyArgs: string[];
}

export function parseRerunArgs(argv: string[]): RerunRequest {
  const [vmName, second, ...rest] = argv;
  if (!vmName || vmName.startsWith("-")) throw new RerunRefused(USAGE);
  if (second === undefined) return { vmName, applyArgs: [] };
  if (second.startsWith("-")) return { vmName, applyArgs: [second, ...rest] };
  return { vmName, installer: second, applyArgs: rest };
}

/**
 * The addresses to replace: the VM's enabled installers' jobs, or the one named. The installers after it on
 * the VM are replaced with it (replace_triggered_by), a local job's outcome with its job, the wave's gate
 * with its jobs; nothing of any other VM is.
 */
export function rerunTargets(config: VmInstallConfig, request: RerunRequest, catalog = INSTALLERS): string[] {
  const vm = config.vms.find((v) => v.name === request.vmName);
  if (!vm) {
    throw new RerunRefused(
      `no VM named ${JSON.stringify(request.vmName)} in cdktf.json; ` +
        `the VMs are ${config.vms.map((v) => v.name).join(", ")}`,
    );
  }
  const enabled = catalog.filter((def) => vm.installers[def.key]?.enabled);
  const chosen =
    request.installer === undefined
      ? enabled
      : enabled.filter((def) => def.handler === request.installer || def.key === request.installer);
  if (chosen.length === 0) {
    const names = enabled.map((def) => def.handler).join(", ") || "none";
    throw new RerunRefused(
      request.installer === undefined
        ? `${vm.name} has no enabled installer to rerun`
        : `${vm.name} has no enabled installer ${JSON.stringify(request.installer)}; its installers are ${names}`,
    );
  }
  const type = config.jobTarget === "sless" ? "sless_job" : "terraform_data";
  return chosen.map((def) => `${type}.${installerJobId(vm.name, def.key)}`);
}

/** Synthesizes the stack, then one terraform apply replacing `targets`; its exit code. */
function replaceJobs(projectDir: string, stackDir: string, targets: string[], applyArgs: string[]): number {
  const replace = targets.map((t) => `-replace=${t}`);
  return synthAndApply(projectDir, stackDir, [...replace, ...applyArgs], {
    say,
    applying: `replacing ${targets.join(", ")}`,
    exitError: EXIT.error,
  });
}

/** A rerun that Terraform would ask to approve where no one can answer: refused, saying what to pass. */
function refuseUnapproved(request: RerunRequest, stdinIsTerminal: boolean): void {
  const example = ["npm run rerun --", request.vmName, request.installer, ...request.applyArgs, "-auto-approve"];
  const refusal = approvalRefusal(request.applyArgs, stdinIsTerminal, example.filter(Boolean).join(" "));
  if (refusal) throw new RerunRefused(refusal);
}

function main(argv: string[], projectDir = projectFolder("rerun")): number {
  try {
    const request = parseRerunArgs(argv);
    refuseUnapproved(request, process.stdin.isTTY === true);
    const { config, stackDir } = readProject(projectDir);
    return replaceJobs(projectDir, stackDir, rerunTargets(config, request), request.applyArgs);
  } catch (err) {
    if (err instanceof BadUsage) throw err;
    say((err as Error).message);
    return EXIT.error;
  }
}

if (require.main === module) runCommand(COMMAND, process.argv.slice(2), (argv) => main(argv), { exit: true });
