// install-docker as both sides see it: its cdktf.json settings, their event keys, defaults and rules.
import { APT_LIST_SETTINGS, defineInstallerDefinition } from "../../lib/shared/installer-definition";
import { keyFingerprints, repoUrl, unixUser } from "../../lib/shared/names";
import { ABSENT_RESULT, REMOVAL_SETTINGS } from "../../lib/shared/removal-settings";
import { setting } from "../../lib/shared/settings";
import { boolean, integer, list, oneOf, string } from "../../lib/shared/validate";
import { DAEMON_JSON, daemonConfigRule, MIRROR_URL } from "./daemon-config";

/** Docker's upstream repository base; also what stale-entry clean-up recognises when repoUrl is a mirror. */
export const DOCKER_UPSTREAM = "https://download.docker.com/linux";
/** Docker's release signing key (docs: "9DC8 5822 9FC7 DD38 854A E2D8 8D81 803C 0EBF CD88"). */
export const DOCKER_KEY_FINGERPRINT = "9DC858229FC7DD38854AE2D88D81803C0EBFCD88";
const DOCKER_CHANNELS = ["official", "distro"] as const;
const DOCKER_VERIFY_MODES = ["hello-world", "daemon"] as const;
export type DockerChannel = (typeof DOCKER_CHANNELS)[number];
export type DockerVerify = (typeof DOCKER_VERIFY_MODES)[number];

export const dockerDefinition = defineInstallerDefinition({
  key: "docker",
  handler: "install-docker",
  doc:
    "Docker Engine from Docker's repository (or the distribution's docker.io), compose, users in the docker " +
    "group, verified with hello-world or docker info",
  enabledByDefault: false,
  waitTimeoutSec: 900,
  settings: {
    compose: setting(boolean(), {
      event: "compose",
      default: true,
      doc: 'Install compose as well (the v2 plugin; the distribution\'s compose on channel "distro").',
    }),
    channel: setting(oneOf(DOCKER_CHANNELS), {
      event: "channel",
      default: "official",
      doc: '"official": Docker\'s apt repository; "distro": the distribution\'s docker.io.',
    }),
    repoUrl: setting(repoUrl, {
      event: "repo_url",
      default: DOCKER_UPSTREAM,
      doc:
        "Docker's repository base or a mirror of it (/debian or /ubuntu is added; its key is " +
        "<repoUrl>/<debian|ubuntu>/gpg).",
    }),
    repoKeyFingerprint: setting(keyFingerprints, {
      event: "repo_key_fingerprint",
      default: [DOCKER_KEY_FINGERPRINT],
      doc:
        "The key(s) the fetched keyring must hold, exactly, before apt may trust it (channel official); set it " +
        "only for a mirror that signs with its own key.",
    }),
    users: setting(list(unixUser, { unique: true }), {
      event: "users",
      defaultDoc: "the VM's login user (SSH_USER)",
      doc:
        "Users added to the docker group (root-equivalent: list only who should be). A user vm-install added and " +
        "a later run no longer lists is removed again; a member it did not add is never removed.",
    }),
    verify: setting(oneOf(DOCKER_VERIFY_MODES), {
      event: "verify",
      default: "hello-world",
      doc: '"hello-world" runs docker run --rm hello-world (needs a registry); "daemon" checks docker info only.',
    }),
    logRotation: setting(boolean(), {
      event: "log_rotation",
      default: true,
      doc:
        `Containers log to json-file rotated at logMaxSize, logMaxFile files kept (${DAEMON_JSON} log-driver, ` +
        "log-opts; a restart of dockerd, for containers created after it; another driver's log-opts are replaced). " +
        "false takes back what vm-install wrote there (still as it wrote it), putting back the admin's log-driver " +
        "and log options it had replaced; the admin's own values stay.",
    }),
    logMaxSize: setting(string({ pattern: /^[1-9][0-9]{0,5}[kmg]$/, allowed: "a size such as 10m, 500k or 1g" }), {
      event: "log_max_size",
      default: "10m",
      doc: 'Size at which a container\'s log file is rotated (log-opts max-size: "10m", "500k", "1g").',
    }),
    logMaxFile: setting(integer(1, 100), {
      event: "log_max_file",
      default: 3,
      doc: "Rotated log files kept per container (log-opts max-file).",
    }),
    registryMirrors: setting(
      list(string({ pattern: MIRROR_URL, allowed: "http(s)://host[:port], no path or credentials" }), { unique: true }),
      {
        event: "registry_mirrors",
        default: [],
        doc:
          "Registry mirrors for Docker Hub images (registry-mirrors; applied by a reload). http:// works without " +
          "insecure-registries (dockerd pulls through a mirror over the URL's scheme). Mirrors vm-install wrote " +
          "and no longer listed are removed (a restart); registry-mirrors the admin wrote are never removed, even " +
          "when this is empty. hello-world's verification names a mirror that does not answer.",
      },
    ),
    daemonConfig: setting(daemonConfigRule, {
      event: "daemon_config",
      default: {},
      doc:
        `Other ${DAEMON_JSON} keys, as dockerd names them (e.g. {"live-restore": true}); merged with the ` +
        "file's keys. A key vm-install wrote and no longer asked for is removed, or set back to the admin's " +
        "value it replaced, while the file holds the value it wrote (recorded in /var/lib/vm-install/grants.json; " +
        "a key changed or removed by hand since is forgotten); the admin's keys are never removed. A file " +
        "dockerd refuses is rolled back and the job fails with dockerd's words. Refused: the typed settings' " +
        "keys, hosts, data-root, graph, exec-root, pidfile, tlskey, userns-remap, storage-driver, " +
        "authorization-plugins, and anything that looks like a credential (a URL with a user part, with or " +
        "without a scheme; any user part in a proxy).",
    }),
    ...APT_LIST_SETTINGS,
    ...REMOVAL_SETTINGS,
  },
  result: {
    docker_version: "the docker CLI's version; absent only in a check of a VM without Docker",
    server_version:
      "the daemon's version, from the verification; in check mode from docker info, when docker.service runs",
    compose:
      'whether compose works; compose_version and compose_command ("docker compose" or "docker-compose") with it',
    channel: "the channel asked for",
    packages: "installed version of each Docker package present",
    users_added:
      "users this run added to the docker group; none in check mode, where would_change says who a run would add",
    revoked:
      'grants this run took back, e.g. "group docker: deploy" (members vm-install had added, recorded in ' +
      "/var/lib/vm-install/grants.json, that users no longer lists)",
    removed: "conflicting packages this run removed (channel official); with state absent, Docker's packages it purged",
    repository: "Docker's repository as configured: {uri, suite, line, keyring, source_file} (channel official)",
    apt_update: "{ran, reason}",
    verify: "{mode, detail}: how the installation was checked and what it said",
    state: ABSENT_RESULT.state,
    kept: ABSENT_RESULT.kept,
  },
});
