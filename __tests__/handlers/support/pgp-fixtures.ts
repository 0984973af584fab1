// The test-only OpenPGP keys in __tests__/fixtures/pgp (see its README) and what gpg printed for them.
import * as fs from "node:fs";
import * as path from "node:path";

const DIR = path.join(__dirname, "..", "..", "fixtures", "pgp");

/** Primary-key fingerprints as `gpg --show-keys --with-colons` printed them (fpr lines of pub). */
export const ALPHA_FPR = "65BCE0E8CBCA4D562DB7E9CCEB56BEEFDC00166A";
/** alpha's cv25519 subkey: belongs to alpha, never a primary of its own. */
export const ALPHA_SUBKEY_FPR = "F00374A46B486AB654ADDFAABF5BEE5D45ED9F77";
export const BETA_FPR = "F6E23F56EB2274F6B22474C3279DFF154D4949E4";
export const DOCKER_FPR = "9DC858229FC7DD38854AE2D88D81803C0EBFCD88";
export const PGDG_FPR = "B97B0AFCAA1A47F044F244A07FCC7D46ACCC4CF8";

/** A fixture's bytes: alpha.asc, alpha.gpg, beta.asc, beta.gpg, docker-release.asc, pgdg.asc. */
export function pgpKey(file: string): Buffer {
  return fs.readFileSync(path.join(DIR, file));
}

/** What the key-fetch command prints for `key`: the VM's architecture, then the key in base64. */
export function fetched(key: Buffer, arch = "amd64"): string {
  return `${arch}\n${key.toString("base64")}`;
}
