// Docker's package names and keys, as Docker's install docs give them; what the state, the channel
// installers and the clean-up all refer to.

export { DOCKER_KEY_FINGERPRINT } from "./definition";
/** Keyrings earlier versions of Docker's docs (and common guides) told people to create. */
export const LEGACY_DOCKER_KEYRINGS = [
  "/usr/share/keyrings/docker-archive-keyring.gpg",
  "/usr/share/keyrings/docker.gpg",
  "/etc/apt/keyrings/docker.gpg",
  "/etc/apt/keyrings/docker.asc",
  "/etc/apt/trusted.gpg.d/docker.gpg",
  "/etc/apt/trusted.gpg.d/docker.asc",
];
/**
 * What Docker's docs remove before installing docker-ce ("Uninstall old versions"), and the parts Debian 13
 * split off docker.io, which docker.io pulls in through Recommends: docker-buildx ships the same plugin
 * file as Docker's docker-buildx-plugin, whose unpacking dpkg then refuses (docker/docs#25650 added it to
 * that list), and docker-cli the same /usr/bin/docker as docker-ce-cli (it declares the conflict, so apt
 * would drop it unreported otherwise).
 */
export const CONFLICTING_PACKAGES = [
  "docker.io",
  "docker-cli",
  "docker-buildx",
  "docker-doc",
  "docker-compose",
  "docker-compose-v2",
  "podman-docker",
  "containerd",
  "runc",
];
/** Docker's packages; docker-buildx-plugin only when the repository offers it (mirrors may not). */
export const OFFICIAL_PACKAGES = ["docker-ce", "docker-ce-cli", "containerd.io"];
export const OPTIONAL_OFFICIAL_PACKAGES = ["docker-buildx-plugin"];
export const COMPOSE_PLUGIN = "docker-compose-plugin";
/**
 * The distribution's compose, best first: Ubuntu's v2 plugin (universe), Docker's plugin when its
 * repository happens to be configured, then "docker-compose" (v1, Python, on Debian 12 and Ubuntu 22.04;
 * v2 from Debian 13 on). Which one exists is read from apt, not assumed per release.
 */
export const DISTRO_COMPOSE_CHOICES = ["docker-compose-v2", "docker-compose-plugin", "docker-compose"];
export const PREREQUISITES = ["ca-certificates", "curl"];
/** Every package the state looks at. */
export const WATCHED = [
  ...new Set([
    ...OFFICIAL_PACKAGES,
    ...OPTIONAL_OFFICIAL_PACKAGES,
    COMPOSE_PLUGIN,
    ...CONFLICTING_PACKAGES,
    ...PREREQUISITES,
  ]),
];
/** Those that are Docker's own (reported with their versions). */
export const DOCKER_PACKAGES = WATCHED.filter((p) => !PREREQUISITES.includes(p));
