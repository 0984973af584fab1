// A private key file that others can read is refused the way OpenSSH refuses it (ssh's sshkey_perm_ok):
// a key anyone else on the machine may have copied is no proof of who deploys. Checked at synth for a
// key that is already there, and again by the job runner when it reads the key.
import * as fs from "node:fs";

/** OpenSSH's own refusal for `file`, or undefined when the file is private (or absent: reading it will say). */
export function privateKeyPermissionProblem(file: string): string | undefined {
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
