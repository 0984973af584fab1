// npm run trust -- <vm> [SHA256:...] [terraform apply options]: accept the host key a VM presents after a legitimate
// change (the VM rebuilt, its keys rotated), without trusting whatever answers: only the key given (checked on the
// VM's console), which must be the one presented, or the one presented, confirmed at a terminal (docs/host-keys.md).
// One `terraform apply` then replaces the VM's record with exactly that key and reruns its installers, which
// require it: nothing (key, password) is sent to anything else. Run it in the cdktf project folder with the
// environment a deploy has (TF_VAR_... secrets). Exit codes: docs/exit-codes.md.
import * as readline from "node:readline/promises";
import type { HostTarget } from "../handlers/common/connection-env";
import { type ConnectOptions, type HostKeyProbe, probeHostKey } from "../handlers/common/ssh";
import { resolveSshRetry } from "../handlers/common/ssh-retry-policy";
import type { VmConfig, VmInstallConfig } from "../lib/construct/config/types";
import { sshEvent } from "../lib/construct/installers/installer-event";
import { ACCEPTED_HOST_KEYS_VARIABLE, addressOutputName, hostKeyIds } from "../lib/construct/resource-names";
import { BadUsage, type CommandSpec, EXIT, runCommand } from "../lib/operator/exit-codes";
import { readDeployed } from "../lib/operator/status/deployed-status";
import { approvalRefusal } from "../lib/operator/terraform-approval";
import { projectFolder, readProject, synthAndApply } from "../lib/operator/terraform-cli";
import { HOST_KEY_SHA256 } from "../lib/shared/names";

const say = (line: string) => process.stderr.write(`trust: ${line}\n`);
const USAGE = "usage: npm run trust -- <vm name> [SHA256:<fingerprint>] [terraform apply options, e.g. -auto-approve]";
// Only argv[0] asks for help: the options after the names are terraform apply's.
const COMMAND: CommandSpec = { name: "trust", usage: USAGE, help: "first" };

/**
 * Why trust stopped before recording anything, and the exit code: usage for a command line that names no VM of
 * cdktf.json or no well-formed fingerprint (none, with no terminal to ask on), error for a refusal.
 */
export class TrustRefused extends Error {
  constructor(
    message: string,
    readonly exitCode: typeof EXIT.usage | typeof EXIT.error,
  ) {
    super(message);
  }
}

export interface TrustRequest {
  vmName: string;
  /** The fingerprint the operator checked out of band; absent: ask at the terminal. */
  fingerprint?: string;
  applyArgs: string[];
}

/** The command line: the VM, an optional fingerprint in exactly ssh-keygen's form, then terraform apply options. */
export function parseTrustArgs(argv: string[]): TrustRequest {
  const [vmName, second, ...rest] = argv;
  if (!vmName || vmName.startsWith("-")) throw new TrustRefused(USAGE, EXIT.usage);
  if (second === undefined) return { vmName, applyArgs: [] };
  if (second.startsWith("-")) return { vmName, applyArgs: [second, ...rest] };
  if (!HOST_KEY_SHA256.test(second)) {
    throw new TrustRefused(
      `${JSON.stringify(second)} is not an SSH host key fingerprint: give it as ` +
        "`ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub` prints it on the VM's console, " +
        `"SHA256:" and 43 base64 characters without "=". ${USAGE}`,
      EXIT.usage,
    );
  }
  return { vmName, fingerprint: second, applyArgs: rest };
}

/** The VM to trust and where its SSH server answers: its fixed address, or the one the deployed stack reports. */
export function trustTarget(
  config: VmInstallConfig,
  vmName: string,
  outputs: Record<string, string>,
): { vm: VmConfig; target: HostTarget; record: string } {
  const vm = config.vms.find((v) => v.name === vmName);
  const names = config.vms.map((v) => v.name).join(", ");
  if (!vm) throw new TrustRefused(`no VM named ${JSON.stringify(vmName)} in cdktf.json (VMs: ${names})`, EXIT.usage);
  if (vm.hostKeySha256) {
    throw new TrustRefused(
      `${vmName} is pinned (vms[].hostKeySha256 = ${vm.hostKeySha256}): nothing is recorded for it; ` +
        "to accept a new key, set the pin to it",
      EXIT.error,
    );
  }
  if (vm.kind === "nubes" && vm.hostKeys === "delivered") {
    throw new TrustRefused(
      `${vmName}'s host key is the one this stack delivered through its cloud_init (vms[].hostKeys "delivered", ` +
        'the default for kind "nubes"): every job requires that key, and nothing was recorded at first contact, ' +
        "so there is nothing to accept. If the VM presents another key because its image ignored the delivered " +
        'one (no cloud-init), set vms[].hostKeys to "first-contact" for it and deploy: its key is then recorded ' +
        "at first contact, and trust can accept a later one. Otherwise something else answers at its address: " +
        "do not trust it.",
      EXIT.error,
    );
  }
  const address = vm.address ?? outputs[addressOutputName(vm.name)];
  if (!address)
    throw new TrustRefused(
      `${vmName} has no address in the deployed state (output ${addressOutputName(vm.name)}): ` +
        "deploy it first (npm run deploy)",
      EXIT.error,
    );
  return {
    vm,
    target: { host: address, port: vm.sshPort, user: vm.user },
    record: `terraform_data.${hostKeyIds(vm.name).record}`,
  };
}

/** Where OpenSSH keeps a host key of this type, for the command the operator runs on the VM's console. */
function keyFile(type: string): string {
  const kind = type.includes("ed25519")
    ? "ed25519"
    : type.startsWith("ecdsa")
      ? "ecdsa"
      : type.includes("rsa")
        ? "rsa"
        : "ed25519";
  return `/etc/ssh/ssh_host_${kind}_key.pub`;
}

export interface TrustDeps {
  /** Reads the key the server presents, without authenticating (the host-key job's probe). */
  probe: (target: HostTarget, opts: ConnectOptions) => Promise<HostKeyProbe>;
  /** Whether a person is at a terminal to answer. */
  interactive: boolean;
  ask: (question: string) => Promise<string>;
  say: (line: string) => void;
  retry?: ConnectOptions["retry"];
}

/** The key the operator accepts for `vmName` at `target`; throws TrustRefused for any other outcome. */
export async function acceptedKey(
  vmName: string,
  target: HostTarget,
  fingerprint: string | undefined,
  deps: TrustDeps,
): Promise<string> {
  const where = `${target.host}:${target.port}`;
  let seen: HostKeyProbe;
  try {
    seen = await deps.probe(target, { retry: deps.retry });
  } catch (err) {
    throw new TrustRefused(
      `could not read ${vmName}'s host key at ${where}: ${(err as Error).message}; nothing was recorded`,
      EXIT.error,
    );
  }
  const check = `ssh-keygen -lf ${keyFile(seen.hostKeyType)}`;
  deps.say(`${vmName} at ${where} presents ${seen.hostKeySha256} (${seen.hostKeyType}); nothing was authenticated`);
  if (fingerprint !== undefined) {
    if (seen.hostKeySha256 === fingerprint) return fingerprint;
    throw new TrustRefused(
      `${vmName} at ${where} presents ${seen.hostKeySha256} (${seen.hostKeyType}), not the ${fingerprint} you ` +
        "gave: nothing was recorded and no installer ran. Either the fingerprint was copied wrong (check it again " +
        `on the VM's console: ${check}), or something other than that VM answers at ${where}: then do not accept it.`,
      EXIT.error,
    );
  }
  if (!deps.interactive) {
    throw new TrustRefused(
      `not recorded: no terminal to confirm ${seen.hostKeySha256} on. Check it on ${vmName}'s console (${check}), ` +
        `then pass it: npm run trust -- ${vmName} ${seen.hostKeySha256}`,
      EXIT.usage,
    );
  }
  const answer = await deps.ask(
    `Is ${seen.hostKeySha256} what ${check} prints on ${vmName}'s console? ` +
      `Only then record it and run ${vmName}'s installers against it [y/N] `,
  );
  if (/^\s*y(es)?\s*$/i.test(answer)) return seen.hostKeySha256;
  throw new TrustRefused(
    `not recorded: ${seen.hostKeySha256} was not confirmed; ${vmName}'s record and installers are unchanged`,
    EXIT.error,
  );
}

async function askAtTerminal(question: string): Promise<string> {
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}

/** Synthesizes the stack, then replaces the VM's record with `key` in one terraform apply; its exit code. */
function recordKey(
  projectDir: string,
  stackDir: string,
  vmName: string,
  record: string,
  key: string,
  applyArgs: string[],
): number {
  // Both strings are checked (a VM name, a fingerprint): nothing else reaches the variable.
  const accepted = `${ACCEPTED_HOST_KEYS_VARIABLE}={${JSON.stringify(vmName)} = ${JSON.stringify(key)}}`;
  return synthAndApply(projectDir, stackDir, [`-replace=${record}`, `-var=${accepted}`, ...applyArgs], {
    say,
    applying: `replacing ${record} with ${key}; ${vmName}'s installers then run again, requiring it`,
    exitError: EXIT.error,
  });
}

async function main(argv: string[], projectDir = projectFolder("trust")): Promise<number> {
  try {
    const request = parseTrustArgs(argv);
    const fingerprint = request.fingerprint ?? "SHA256:<fingerprint>";
    const example = ["npm run trust --", request.vmName, fingerprint, ...request.applyArgs, "-auto-approve"];
    const refusal = approvalRefusal(request.applyArgs, process.stdin.isTTY === true, example.filter(Boolean).join(" "));
    if (refusal) throw new TrustRefused(refusal, EXIT.usage);
    const { stackDir } = readProject(projectDir);
    const { config, outputs } = readDeployed(projectDir, say);
    const { vm, target, record } = trustTarget(config, request.vmName, outputs);
    const key = await acceptedKey(vm.name, target, request.fingerprint, {
      probe: probeHostKey,
      interactive: process.stdin.isTTY === true,
      ask: askAtTerminal,
      say,
      retry: resolveSshRetry(sshEvent(vm).ssh),
    });
    return recordKey(projectDir, stackDir, vm.name, record, key, request.applyArgs);
  } catch (err) {
    if (err instanceof TrustRefused && err.exitCode === EXIT.usage) throw new BadUsage(err.message);
    say((err as Error).message);
    return EXIT.error;
  }
}

// exit: the terminal prompt's readline and the probe's socket would keep the process alive.
if (require.main === module) runCommand(COMMAND, process.argv.slice(2), (argv) => main(argv), { exit: true });
