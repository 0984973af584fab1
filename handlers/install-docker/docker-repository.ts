// Docker's apt repository (official channel): its key and source in place, older set-ups of it away. One spec
// for both uses: a run applies it (configureRepository), a check foresees it with the same fetch, compare and
// plan, nothing written (foreseeRepository), so the check's lines are the run's.

import type { Apt } from "../common/apt";
import { type AptRepositorySpec, ensureAptRepository, foreseeAptRepository } from "../common/apt-repository";
import type { OsInfo } from "../common/os-release";
import { updateRecord, withAdded } from "../common/package-inventory";
import type { Progress } from "../common/progress";
import {
  foreseeStaleRepositories,
  removeStaleRepositories,
  type StaleRepositoryOptions,
} from "../common/stale-repositories";
import { DOCKER_UPSTREAM } from "./definition";
import { DOCKER_KEY_FINGERPRINT, LEGACY_DOCKER_KEYRINGS } from "./docker-packages";

/** Docker's repository as configured (official channel). */
export interface DockerRepository {
  uri: string;
  suite: string;
  line: string;
  keyring: string;
  source_file: string;
}

/** The repository at `base` (repo_url + the OS family), signed by `fingerprints`. */
interface DockerSource {
  base: string;
  fingerprints: string[];
}

function repositorySpec(os: OsInfo, { base, fingerprints }: DockerSource): AptRepositorySpec {
  return {
    name: "docker",
    keyUrl: `${base}/gpg`,
    uri: base,
    suite: os.codename,
    components: ["stable"],
    fingerprints,
    settings: { keyUrl: "repo_url", fingerprints: "repo_key_fingerprint" },
  };
}

/** Older entries for this repository, or Docker's own at download.docker.com, and their keys. */
function staleOptions(
  os: OsInfo,
  { base, fingerprints }: DockerSource,
  repo: { sourceFile: string; keyring: string },
): StaleRepositoryOptions {
  return {
    uris: [...new Set([base, `${DOCKER_UPSTREAM}/${os.family}`])],
    keep: { sources: [repo.sourceFile], keyrings: [repo.keyring] },
    keyrings: LEGACY_DOCKER_KEYRINGS,
    trustedFingerprints: [...new Set([DOCKER_KEY_FINGERPRINT, ...fingerprints])],
  };
}

/**
 * Docker's key and source in place, older ones away: what changed, whether any apt source did, for which
 * architectures, and the repository as configured.
 */
export async function configureRepository(
  apt: Apt,
  os: OsInfo,
  source: DockerSource,
  progress: Progress,
): Promise<{ changes: string[]; changed: boolean; architectures: string[]; repository: DockerRepository }> {
  // The new source first, then the old ones away: a key that cannot be fetched leaves the VM as it was,
  // and the clean-up knows exactly which file and keyring are the ones to keep.
  const repo = await ensureAptRepository(apt.remote, repositorySpec(os, source), progress);
  const stale = await removeStaleRepositories(apt.remote, staleOptions(os, source, repo), progress);
  await recordWrittenFiles(apt.remote, repo);
  return {
    changes: [...repo.changes, ...stale.changes],
    changed: repo.changed || stale.changed,
    architectures: repo.architectures,
    repository: {
      uri: repo.uri,
      suite: os.codename,
      line: repo.line,
      keyring: repo.keyring,
      source_file: repo.sourceFile,
    },
  };
}

/**
 * configureRepository's lines, foreseen read-only: the key fetched and checked (a bad key fails the check in the
 * run's words), key and source compared, the stale entries planned on the sources as the run leaves them. With
 * prerequisites of the fetch missing (`missing`: a run installs them first) the key is not fetched.
 */
export async function foreseeRepository(
  apt: Apt,
  os: OsInfo,
  source: DockerSource,
  missing: string[],
  progress: Progress,
): Promise<string[]> {
  const key = missing.length
    ? { fetch: false as const, why: `its key is fetched once ${missing.join(" and ")} ${verb(missing)} installed` }
    : { fetch: true as const };
  const repo = await foreseeAptRepository(apt.remote, repositorySpec(os, source), key, progress);
  const written = [{ path: repo.sourceFile, text: `${repo.line}\n` }];
  const stale = await foreseeStaleRepositories(apt.remote, staleOptions(os, source, repo), written, progress);
  return [...repo.changes, ...stale.changes];
}

const verb = (names: string[]) => (names.length === 1 ? "is" : "are");

/** The source and keyring this run wrote new are vm-install's: recorded, so state absent removes them. */
async function recordWrittenFiles(remote: Apt["remote"], repo: { created: string[] }) {
  if (repo.created.length) await updateRecord(remote, "docker", (record) => withAdded(record, { files: repo.created }));
}
