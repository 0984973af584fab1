// npm run trust -- <vm> [terraform apply options]: accept the host key a VM presents now, after a
// legitimate change (the VM rebuilt outside this stack, its keys rotated). It replaces that VM's record
// of the key seen at first contact, and the probe job with it, through one `terraform apply -replace`:
// the plan is shown and asked for as any apply is (pass -auto-approve to skip the question), the probe
// reads the key again, the record takes it, and that VM's installer jobs run again against it.
// Run it in the cdktf project folder (the one with cdktf.json), with the environment a deploy has
// (TF_VAR_... secrets).
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import type { parseConfig } from "../lib/config/parse";
import { hostKeyIds } from "../lib/resource-names";
import { projectFolder, readProject, terraformEnv } from "../lib/terraform-cli";
import { ValidationError } from "../shared/validate";

const say = (line: string) => process.stderr.write(`trust: ${line}\n`);
const USAGE = "usage: npm run trust -- <vm name> [terraform apply options, e.g. -auto-approve]";

/** The Terraform addresses that hold a VM's trust on first contact: its record and its probe job. */
export function trustAddresses(config: ReturnType<typeof parseConfig>, vmName: string): string[] {
  const vm = config.vms.find((v) => v.name === vmName);
  const names = config.vms.map((v) => v.name).join(", ");
  if (!vm) throw new Error(`no VM named ${JSON.stringify(vmName)} in cdktf.json (VMs: ${names})`);
  if (vm.hostKeySha256) {
    throw new Error(`${vmName} is pinned (vms[].hostKeySha256 = ${vm.hostKeySha256}): nothing is recorded for it; to accept a new key, set the pin to it`);
  }
  const ids = hostKeyIds(vm.name);
  const jobType = config.jobTarget === "sless" ? "sless_job" : "terraform_data";
  return [`terraform_data.${ids.record}`, `${jobType}.${ids.probe}`];
}

function main(argv: string[]): number {
  const [vmName, ...applyArgs] = argv;
  if (!vmName || vmName.startsWith("-")) {
    say(USAGE);
    return 2;
  }
  const projectDir = projectFolder("trust");
  let addresses: string[];
  let stackDir: string;
  try {
    const project = readProject(projectDir);
    addresses = trustAddresses(project.config, vmName);
    stackDir = project.stackDir;
  } catch (err) {
    say(err instanceof ValidationError ? err.message : (err as Error).message);
    return 2;
  }
  const cdktf = path.join(__dirname, "cdktf");
  say("synthesizing the stack (cdktf synth)");
  const synth = spawnSync("bash", [cdktf, "synth"], { cwd: projectDir, stdio: ["ignore", "ignore", "inherit"] });
  if (synth.status !== 0) return synth.status ?? 1;
  say(
    `replacing ${addresses.join(" and ")}: ${vmName}'s recorded host key is forgotten and the key it presents now is recorded. ` +
      "Accept only a key you have checked on the VM's console (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub); the failed job's message names it.",
  );
  const env = terraformEnv(projectDir);
  const tf = (args: string[]) => spawnSync("terraform", [`-chdir=${stackDir}`, ...args], { stdio: "inherit", env }).status ?? 1;
  const init = tf(["init", "-input=false"]);
  if (init !== 0) return init;
  return tf(["apply", "-input=false", ...addresses.map((a) => `-replace=${a}`), ...applyArgs]);
}

if (require.main === module) process.exit(main(process.argv.slice(2)));
