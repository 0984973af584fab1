// The host keys the stack delivers to the Nubes VMs it creates (vms[].hostKeys "delivered"): one ed25519
// key pair per VM, made on the deploying machine by bin/cdktf before cdktf runs, into an owner-only file
// beside the local target's results (.vm-install/<stack>/<vm>.host-key.json). Terraform reads the file
// at plan time (lib/construct/vm-installation.ts), so the private key is never in cdktf.out; a terraform_data
// keeps the first key it read in state and ignores the file from then on, so another working copy (its
// own file, or none) or a new file never changes the VM's key.
import { generateKeyPairSync } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { fingerprintSha256, openSshEd25519, sshString } from "../../handlers/common/ssh-keys";
import { writeResultFile } from "../jobs/job-result-file";
import { HOST_KEY_SHA256, type HostKeySource } from "../shared/names";
import type { VmConfig, VmInstallConfig } from "./config/types";
import { resultsFolder } from "./jobs/secret-trigger";

/** A host key pair as cloud-init's ssh_keys takes it, with the fingerprint every job requires. */
export interface DeliveredHostKey {
  /** "ssh-ed25519 AAAA... <comment>": cloud-init's ed25519_public. */
  readonly public: string;
  /** OpenSSH's "BEGIN OPENSSH PRIVATE KEY" text: cloud-init's ed25519_private. */
  readonly private: string;
  /** "SHA256:..." as ssh-keygen -l prints it. */
  readonly sha256: string;
}

/**
 * A new ed25519 host key pair. node:crypto makes the key (ssh2's ed25519 generator fails by chance); the
 * OpenSSH encoding and the fingerprint are the ones the jobs use (handlers/common/ssh-keys.ts): Terraform
 * cannot hash the decoded key blob, so the fingerprint travels in the file with the key.
 */
export function generateHostKey(comment: string): DeliveredHostKey {
  const { privateKey } = generateKeyPairSync("ed25519");
  const jwk = privateKey.export({ format: "jwk" });
  const seed = Buffer.from(jwk.d!, "base64url");
  const pub = Buffer.from(jwk.x!, "base64url");
  const blob = Buffer.concat([sshString("ssh-ed25519"), sshString(pub)]);
  return {
    public: `ssh-ed25519 ${blob.toString("base64")} ${comment}`,
    private: openSshEd25519(seed, pub),
    sha256: fingerprintSha256(blob),
  };
}

/** Where the key a VM's jobs require comes from, as the jobs are told (SSH_HOST_KEY_SOURCE). */
export function hostKeySource(vm: VmConfig): HostKeySource {
  if (vm.kind === "nubes" && vm.hostKeys === "delivered") return "delivered";
  return vm.hostKeySha256 !== undefined ? "pin" : "first-contact";
}

/** The VMs whose host key the stack delivers. */
function deliveredKeyVms(config: Pick<VmInstallConfig, "vms">): VmConfig[] {
  return config.vms.filter((vm) => vm.kind === "nubes" && vm.hostKeys === "delivered");
}

/** Where `vm`'s key file is kept (owner-only, outside cdktf.out). */
export function hostKeyFile(resultsDir: string, vm: string): string {
  return path.join(resultsDir, `${vm}.host-key.json`);
}

/** The key in `file`, or undefined when there is none or it is not a whole key (then a new one is made). */
export function readHostKeyFile(file: string): DeliveredHostKey | undefined {
  let parsed: Partial<DeliveredHostKey>;
  try {
    parsed = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
  const whole =
    typeof parsed.public === "string" &&
    parsed.public.startsWith("ssh-ed25519 ") &&
    typeof parsed.private === "string" &&
    parsed.private.includes("BEGIN OPENSSH PRIVATE KEY") &&
    typeof parsed.sha256 === "string" &&
    HOST_KEY_SHA256.test(parsed.sha256);
  return whole ? (parsed as DeliveredHostKey) : undefined;
}

/**
 * Makes the key file of every VM that has none (or a broken one), owner-only in an owner-only folder;
 * an existing key is never replaced: Terraform state keeps the key a VM got, whatever the file holds.
 * Returns the files written.
 */
export function writeHostKeys(projectDir: string, config: VmInstallConfig): string[] {
  const dir = resultsFolder(projectDir, config.stackName);
  const written: string[] = [];
  for (const vm of deliveredKeyVms(config)) {
    const file = hostKeyFile(dir, vm.name);
    if (readHostKeyFile(file)) continue;
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeResultFile(file, JSON.stringify(generateHostKey(`vm-install host key of ${vm.name}`)));
    written.push(file);
  }
  return written;
}
