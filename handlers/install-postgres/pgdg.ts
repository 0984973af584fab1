// The PGDG apt repository (apt.postgresql.org or a mirror of it), for a major the distribution does not
// ship. The key and the signed-by source line are handlers/common/apt-repository.ts's business; what is
// PGDG-specific lives here: where the key is for a given repository URL, its fingerprint, the
// `<codename>-pgdg main` suite, and the older set-ups of the same repository to clear away. One spec for both
// uses: a run applies it (ensurePgdgRepository), a check foresees it with the same fetch, compare and plan,
// nothing written (foreseePgdgRepository), so the check's lines are the run's.

import {
  type AptRepositoryOutcome,
  type AptRepositorySpec,
  ensureAptRepository,
  foreseeAptRepository,
  legacyKeyring,
} from "../common/apt-repository";
import type { Remote } from "../common/exec";
import type { OsInfo } from "../common/os-release";
import { updateRecord, withAdded } from "../common/package-inventory";
import type { Progress } from "../common/progress";
import {
  foreseeStaleRepositories,
  removeStaleRepositories,
  type StaleRepositoryOptions,
} from "../common/stale-repositories";
import { DEFAULT_PGDG_URL } from "./definition";

/** What earlier versions wrote as PGDG's keyring: the served file, rebuilt by the next run (plan.ts pgdg-keyring). */
export const LEGACY_PGDG_KEYRING = legacyKeyring("pgdg");

/** Where postgresql.org publishes the key of its own repository. */
const DEFAULT_PGDG_KEY_URL = "https://www.postgresql.org/media/keys/ACCC4CF8.asc";

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
  /** The keys the PGDG keyring must hold, exactly (40 hex digits, upper case). */
  fingerprints: string[];
}

export interface PgdgOutcome {
  /** One line per file written or removed. */
  changes: string[];
  /** The source line in effect. */
  line: string;
}

function repositorySpec(os: Pick<OsInfo, "codename">, s: PgdgSettings): AptRepositorySpec {
  return {
    name: "pgdg",
    keyUrl: s.keyUrl,
    uri: s.repoUrl,
    suite: `${os.codename}-pgdg`,
    components: ["main"],
    fingerprints: s.fingerprints,
    settings: { keyUrl: "repo_key_url", fingerprints: "repo_key_fingerprint" },
  };
}

/** Older entries for the same repository, and the keys they name or put into trusted.gpg. */
function staleOptions(s: PgdgSettings, repo: AptRepositoryOutcome): StaleRepositoryOptions {
  return {
    uris: [s.repoUrl],
    keep: { sources: [repo.sourceFile], keyrings: [repo.keyring] },
    trustedFingerprints: s.fingerprints,
  };
}

/** Whether the VM has curl, which fetches the key there. */
async function hasCurl(remote: Remote): Promise<boolean> {
  const tools = await remote.run("command -v curl || true", { label: "looking for curl", timeoutMs: 30_000 });
  return /\/curl$/m.test(tools.stdout);
}

/**
 * Makes sure apt has the PGDG repository for this release, signed by the PGDG key only. `ensureCurl`
 * is called first when the VM has no curl (the key is fetched on the VM, by curl). The key's
 * fingerprints are checked by ensureAptRepository before anything is written, gpg or not.
 */
export async function ensurePgdgRepository(
  remote: Remote,
  os: OsInfo,
  s: PgdgSettings,
  opts: { progress: Progress; ensureCurl: () => Promise<void> },
): Promise<PgdgOutcome> {
  if (!(await hasCurl(remote))) await opts.ensureCurl();
  const repo = await ensureAptRepository(remote, repositorySpec(os, s), opts.progress);
  // Written new by this run: vm-install's, so state absent takes them back.
  if (repo.created.length) await updateRecord(remote, "postgres", (r) => withAdded(r, { files: repo.created }));
  const stale = await removeStaleRepositories(remote, staleOptions(s, repo), opts.progress);
  return { changes: [...repo.changes, ...stale.changes], line: repo.line };
}

/**
 * ensurePgdgRepository's lines, foreseen read-only (`remote` is a check's): the key fetched and checked (a bad
 * key fails the check in the run's words), key and source compared, the stale entries planned on the sources
 * as the run leaves them. Without curl on the VM (a run installs it first) the key is not fetched.
 */
export async function foreseePgdgRepository(
  remote: Remote,
  os: Pick<OsInfo, "codename">,
  s: PgdgSettings,
  progress?: Progress,
): Promise<string[]> {
  const key = (await hasCurl(remote))
    ? { fetch: true as const }
    : { fetch: false as const, why: "its key is fetched once curl is installed" };
  const repo = await foreseeAptRepository(remote, repositorySpec(os, s), key, progress);
  const written = [{ path: repo.sourceFile, text: `${repo.line}\n` }];
  const stale = await foreseeStaleRepositories(remote, staleOptions(s, repo), written, progress);
  return [...repo.changes, ...stale.changes];
}

/** The lines of a PGDG set-up (ensurePgdgRepository's or foreseePgdgRepository's) in the result. */
export const pgdgLines = (changes: readonly string[]): string[] => changes.map((c) => `PGDG repository: ${c}`);

/** The event's PGDG settings, its key's URL worked out (pgdgKeyUrl). */
export function pgdgSettings(event: { repo_url: string; repo_key_url?: string; repo_key_fingerprint: string[] }) {
  return {
    repoUrl: event.repo_url,
    keyUrl: pgdgKeyUrl(event.repo_url, event.repo_key_url),
    fingerprints: event.repo_key_fingerprint,
  };
}

/** The planned words for setting PGDG up; a check and a run say instead what it changes (one line per file). */
export function pgdgSetupLine(
  event: { repo_url: string; repo_key_url?: string },
  os: Pick<OsInfo, "codename">,
): string {
  return (
    `PGDG repository: ${event.repo_url} ${os.codename}-pgdg main set up where it differs ` +
    `(its key from ${pgdgKeyUrl(event.repo_url, event.repo_key_url)}, checked against repo_key_fingerprint)`
  );
}

/** The planned words when the keyring an earlier version wrote is found; a check and a run say what changes. */
export function legacyPgdgLine(repoUrl: string): string {
  return (
    `PGDG repository: ${LEGACY_PGDG_KEYRING}, the key file an earlier version wrote as served ` +
    `(apt trusts every key in it), rebuilt from the verified key of ${repoUrl}`
  );
}
