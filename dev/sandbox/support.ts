// What the host must offer before anything is created: checked up front so a missing tool is one clear
// line instead of a half-built sandbox and an exit code from deep inside a shell pipeline.
import * as fs from "node:fs";
import { which } from "./run";

/** command -> Debian package providing it (the ones bin/setup installs). */
const REQUIRED: Array<[string, string]> = [
  ["systemd-nspawn", "systemd-container"],
  ["debootstrap", "debootstrap"],
  ["nft", "nftables"],
  ["zstd", "zstd"],
  ["ip", "iproute2"],
  ["ssh-keygen", "openssh-client"],
  ["unshare", "util-linux"],
  ["nsenter", "util-linux"],
  ["tar", "tar"],
];

class SandboxUnsupportedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SandboxUnsupportedError";
  }
}

/** Lists everything that is missing, not just the first thing, so one `bin/setup` run fixes all of it. */
export function sandboxSupportProblems(): string[] {
  const problems: string[] = [];
  const uid = process.getuid?.();
  if (uid !== 0) {
    problems.push(
      `not root (uid ${uid ?? "unknown"}): the sandbox needs root for network namespaces, mounts and systemd-nspawn`,
    );
  }
  const missing = REQUIRED.filter(([cmd]) => !which(cmd));
  if (missing.length) {
    const pkgs = [...new Set(missing.map(([, pkg]) => pkg))].join(" ");
    problems.push(`missing ${missing.map(([c]) => c).join(", ")} (Debian packages: ${pkgs}): run bin/setup`);
  }
  try {
    if (!/\toverlay$/m.test(fs.readFileSync("/proc/filesystems", "utf8"))) {
      problems.push("the kernel has no overlay filesystem (modprobe overlay)");
    }
  } catch {
    problems.push("cannot read /proc/filesystems: /proc is not mounted");
  }
  return problems;
}

/** Throws one Error naming everything that is missing and what to run about it. */
export function checkSandboxSupport(): void {
  const problems = sandboxSupportProblems();
  if (problems.length) throw new SandboxUnsupportedError(`sandbox VM unsupported here: ${problems.join("; ")}`);
}
