// The PGDG apt repository (apt.postgresql.org or a mirror of it), for a major the distribution does not
// ship. The key and the signed-by source line are handlers/common/apt-repository.ts's business; what is
// PGDG-specific lives here: where the key is for a given repository URL, its fingerprint, the
// `<codename>-pgdg main` suite, and the older set-ups of the same repository to clear away.

import { quote } from "../../shared/shell-quote";
import { ensureAptRepository } from "../common/apt-repository";
import type { Remote } from "../common/exec";
import type { OsInfo } from "../common/os-release";
import type { Progress } from "../common/progress";
import { removeStaleRepositories } from "../common/stale-repositories";
import { DEFAULT_PGDG_URL, PGDG_KEY_FINGERPRINT } from "./definition";

export { DEFAULT_PGDG_URL, PGDG_KEY_FINGERPRINT };

/** Where postgresql.org publishes the key of its own repository. */
export const DEFAULT_PGDG_KEY_URL = "https://www.postgresql.org/media/keys/ACCC4CF8.asc";

/**
 * The key's URL for a repository URL: postgresql.org's own address for the official repository, and
 * `<repo_url>/ACCC4CF8.asc` for a mirror (apt.postgresql.org keeps the key at its root, and so does a
 * mirror of the whole tree). An explicit repo_key_url overrides both.
 */
export function pgdgKeyUrl(repoUrl: string, explicit?: string): string {
  if (explicit) return explicit;
  const base = repoUrl.replace(/\/+$/, "");
  return base === DEFAULT_PGDG_URL ? DEFAULT_PGDG_KEY_URL : `${base}/ACCC4CF8.asc`;
}

export interface PgdgSettings {
  repoUrl: string;
  keyUrl: string;
  /** The key apt is allowed to trust for this repository (40 hex digits). */
  fingerprint: string;
}

export interface PgdgOutcome {
  /** One line per file written or removed. */
  changes: string[];
  /** The source line in effect. */
  line: string;
}

/**
 * Makes sure apt has the PGDG repository for this release, signed by the PGDG key only. `ensureCurl`
 * is called first when the VM has no curl (the key is fetched on the VM, by curl). When gpg is on the
 * VM the key's fingerprint is checked and a wrong key is taken out again before apt ever uses it.
 */
export async function ensurePgdgRepository(
  remote: Remote,
  os: OsInfo,
  s: PgdgSettings,
  opts: { progress: Progress; ensureCurl: () => Promise<void> },
): Promise<PgdgOutcome> {
  const tools = await remote.run("command -v curl || true; command -v gpg || true", { label: "looking for curl and gpg", timeoutMs: 30_000 });
  if (!/\/curl$/m.test(tools.stdout)) await opts.ensureCurl();

  const repo = await ensureAptRepository(
    remote,
    { name: "pgdg", keyUrl: s.keyUrl, uri: s.repoUrl, suite: `${os.codename}-pgdg`, components: ["main"] },
    opts.progress,
  );

  if (/\/gpg$/m.test(tools.stdout)) {
    const listed = await remote.run(`h=$(mktemp -d) && gpg --homedir "$h" --batch --show-keys --with-colons ${quote(repo.keyring)} 2>/dev/null; rm -rf "$h"`, {
      check: false,
      label: `checking the fingerprint of ${repo.keyring}`,
      timeoutMs: 30_000,
    });
    const fingerprints = [...listed.stdout.matchAll(/^fpr:+([0-9A-F]{40}):/gm)].map((m) => m[1]);
    if (!fingerprints.includes(s.fingerprint)) {
      await remote.run(`rm -f ${quote(repo.keyring)} ${quote(repo.sourceFile)}`, {
        sudo: true,
        label: "removing the untrusted PGDG key and source",
        timeoutMs: 30_000,
      });
      throw new Error(
        `the key served at ${s.keyUrl} is ${fingerprints.length ? fingerprints.join(", ") : "not a readable OpenPGP key"}, not the PGDG key ${s.fingerprint}; ` +
          `removed it again. Point repo_key_url at the PGDG key, or set repo_key_fingerprint when your mirror signs with its own key`,
      );
    }
  } else {
    opts.progress.info(`gpg is not on the VM: the fingerprint of ${repo.keyring} was not checked (apt still checks every signature against it)`);
  }

  const stale = await removeStaleRepositories(
    remote,
    {
      uris: [s.repoUrl],
      keep: { sources: [repo.sourceFile], keyrings: [repo.keyring] },
      trustedFingerprints: [s.fingerprint],
    },
    opts.progress,
  );
  return { changes: [...repo.changes, ...stale.changes], line: repo.line };
}
