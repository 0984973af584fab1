// The Debian releases a sandbox can boot. Each has an image of its own (the release is part of the build
// script, so of its hash, and of the image's file names), installed from the host's own mirror.

/** Codename -> Debian version. Bookworm is the default; trixie is the second release the suites run on. */
export const RELEASES = { bookworm: "12", trixie: "13" } as const;
export type Release = keyof typeof RELEASES;
export const DEFAULT_RELEASE: Release = "bookworm";
/** Set it (e.g. VM_INSTALL_SANDBOX_RELEASE=trixie) to boot every sandbox a process starts on that release. */
export const RELEASE_ENV = "VM_INSTALL_SANDBOX_RELEASE";

export const SUPPORTED_RELEASES = Object.keys(RELEASES) as Release[];

const describeSupported = () => SUPPORTED_RELEASES.map((r) => `${r} (Debian ${RELEASES[r]})`).join(", ");

/** A release name as given by a user (`--release`, the environment, startSandbox): checked, or refused
 * with the supported ones. */
export function parseRelease(value: string, from = "release"): Release {
  if ((SUPPORTED_RELEASES as string[]).includes(value)) return value as Release;
  throw new Error(`${from}: unknown sandbox release ${JSON.stringify(value)}; supported: ${describeSupported()}`);
}

/** The release asked for: the explicit one, else $VM_INSTALL_SANDBOX_RELEASE when set and not empty, else bookworm. */
export function resolveRelease(explicit?: string, env: NodeJS.ProcessEnv = process.env): Release {
  if (explicit !== undefined) return parseRelease(explicit);
  const fromEnv = env[RELEASE_ENV];
  if (fromEnv) return parseRelease(fromEnv, RELEASE_ENV);
  return DEFAULT_RELEASE;
}

/** The suites a release's image lists, as a fresh install of it has them. */
export function releaseSuites(release: Release): string[] {
  return [release, `${release}-updates`, `${release}-security`];
}

/** The release of `--release` given as parseArgs gives it (every value), else resolveRelease's; at most one. */
export function releaseOption(values: readonly string[] | undefined): Release {
  if (values === undefined || values.length === 0) return resolveRelease();
  if (values.length > 1) throw new Error("--release given twice");
  return parseRelease(values[0], "--release");
}
