// install-docker's look on the scripted double: Docker installed and running (Debian 12, distro channel),
// admin in group docker, and daemon.json as the case needs it. Shared by the daemon.json test files.
import { dpkgLine } from "./fixtures";
import type { Answer } from "./look-answers";
import type { Step } from "./scripted-remote";

const sec = (name: string, code: number, text: string): Record<string, Answer> => ({
  [name]: { text: `${text}\n`, code },
});

/** The look's one command; `daemonJson` undefined: no daemon.json on the VM. */
export function dockerLook(daemonJson: string | undefined): Step {
  const facts = {
    ...sec("docker", 0, "Docker version 20.10.24+dfsg1, build 297e128"),
    ...sec("compose", 1, "docker: 'compose' is not a docker command."),
    ...sec("active", 0, "active"),
    ...sec("enabled", 0, "enabled"),
    ...sec("dpkg", 0, dpkgLine("docker.io", "20.10.24+dfsg1-1+b3").trimEnd()),
    ...sec("group", 0, "docker:x:999:admin"),
    ...sec("user:admin", 0, "admin docker"),
    ...sec("curl", 0, "/usr/bin/curl"),
    ...sec("legacy_keyring", 1, ""),
    ...(daemonJson === undefined ? sec("daemon_json", 3, "") : sec("daemon_json", 0, daemonJson)),
  };
  return { match: /^printf '%s ' docker; /, sudo: false, facts };
}
