// The key files cdktf.json names, checked where the setting is known by its key path: at synth, so a missing,
// unreadable or wrong key stops `cdktf synth` in cdktf.json's words instead of failing each job at apply, and
// by the job runner when it reads the key. A private key others can read is refused as OpenSSH refuses it
// (ssh's sshkey_perm_ok): a key anyone else on the machine may have copied is no proof of who deploys.
import * as fs from "node:fs";
import { utils } from "ssh2";
import { parsePrivateKey, SshKeyError } from "../../../handlers/common/ssh-keys";
import type { TerraformPaths } from "../terraform-paths";
import type { VmConfig } from "./types";

/** OpenSSH's own refusal for `file`, or undefined when the file is private (or absent: reading it will say). */
function privateKeyPermissionProblem(file: string): string | undefined {
  let mode: number;
  try {
    mode = fs.statSync(file).mode;
  } catch {
    return undefined;
  }
  if ((mode & 0o077) === 0) return undefined;
  const octal = (mode & 0o777).toString(8).padStart(4, "0");
  return (
    `UNPROTECTED PRIVATE KEY FILE! Permissions ${octal} for '${file}' are too open. ` +
    "It is required that your private key files are NOT accessible by others. This private key will be ignored. " +
    `Run: chmod 600 '${file}'`
  );
}

/** A key file setting as messages and jobs name it: `vms[db].privateKeyPath (vm_key)`. */
export function keySettingName(vm: string, key: "privateKeyPath" | "publicKeyPath", written: string): string {
  return `vms[${vm}].${key} (${written})`;
}

/** The file's text, or why it cannot be had, naming `setting` and what to do. */
function readKeyFile(file: string, setting: string, make: string): { text: string } | { problem: string } {
  try {
    if (fs.statSync(file).isDirectory()) return { problem: `${setting}: ${file} is a folder; name the key file` };
    return { text: fs.readFileSync(file, "utf8") };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT")
      return { problem: `${setting}: ${file} does not exist; ${make}, or give the VM's login key there instead` };
    return { problem: `${setting}: cannot read ${file} (${code ?? (err as Error).message}); make it readable by you` };
  }
}

/**
 * What keeps the private key file `file` (resolved) from logging a job in; undefined when it can. `parse`:
 * also read it as a key (at synth; the runner leaves that to the job, which names the setting as well).
 */
export function privateKeyFileProblem(file: string, setting: string, parse = true): string | undefined {
  const read = readKeyFile(file, setting, `make it with ssh-keygen -t ed25519 -N '' -f ${file}`);
  if ("problem" in read) return read.problem;
  // What the file holds first: a .pub file told to be chmod 600 would be told the wrong thing.
  if (parse) {
    try {
      parsePrivateKey(read.text, setting);
    } catch (err) {
      if (err instanceof SshKeyError) return err.message;
      throw err;
    }
  }
  const open = privateKeyPermissionProblem(file);
  return open && `${setting}: ${open}`;
}

/** The public half of a key text, or undefined when it does not parse. */
function publicHalf(text: string): { blob: Buffer; isPrivate: boolean } | undefined {
  const parsed = utils.parseKey(text);
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  return key instanceof Error ? undefined : { blob: key.getPublicSSH(), isPrivate: key.isPrivateKey() };
}

/**
 * What keeps `file` from being the VM's authorised key: it must be an OpenSSH public key and, when the
 * private key file reads, its public half (else the VM is made with a key the jobs cannot log in with).
 */
function publicKeyFileProblem(file: string, setting: string, privateFile: string): string | undefined {
  const read = readKeyFile(
    file,
    setting,
    `make it from the private key with ssh-keygen -y -f ${privateFile} > ${file}`,
  );
  if ("problem" in read) return read.problem;
  const key = publicHalf(read.text);
  if (!key || key.isPrivate)
    return `${setting}: ${file} is not an OpenSSH public key (one line "ssh-ed25519 AAAA... comment", the .pub file)`;
  let privateText: string;
  try {
    privateText = fs.readFileSync(privateFile, "utf8");
  } catch {
    return undefined;
  }
  const pair = publicHalf(privateText);
  if (pair && !pair.blob.equals(key.blob))
    return (
      `${setting}: ${file} is not the public half of ${privateFile}: the VM would authorise a key the jobs do not ` +
      `hold; write it again with ssh-keygen -y -f ${privateFile} > ${file}`
    );
  return undefined;
}

/**
 * The key files of one VM, checked at synth: the private key when a job logs in with it, the public key when
 * the stack creates the VM with it (kind "nubes").
 */
export function keyFileProblems(vm: VmConfig, paths: Pick<TerraformPaths, "resolve">, anyJob: boolean): string[] {
  const privateFile = paths.resolve(vm.privateKeyPath);
  const problems = [
    anyJob
      ? privateKeyFileProblem(privateFile, keySettingName(vm.name, "privateKeyPath", vm.privateKeyPath))
      : undefined,
    vm.kind === "nubes"
      ? publicKeyFileProblem(
          paths.resolve(vm.publicKeyPath),
          keySettingName(vm.name, "publicKeyPath", vm.publicKeyPath),
          privateFile,
        )
      : undefined,
  ];
  return problems.filter((p): p is string => p !== undefined);
}
