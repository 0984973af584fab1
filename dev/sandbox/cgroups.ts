// Each sandbox in cgroups of its own. On a host whose PID 1 is not systemd (this machine, CI), systemd-nspawn
// puts the container's systemd under payload/ of the cgroup it was started in, so the sandboxes of one test
// run shared one cgroup per unit name: a stop in one left the other's unit stuck, or its next start failing
// ("docker.service failed because of unavailable resources", seen in CI). The boot script moves itself into
// the sandbox's own cgroup before nspawn starts; teardown removes it.
import * as fs from "node:fs";
import * as path from "node:path";
import { quote } from "../../lib/shared/shell-quote";

/** Where units are tracked: cgroup v1's named hierarchy and cgroup v2's (hybrid), or v2 alone at the top. */
const HIERARCHIES = ["/sys/fs/cgroup/systemd", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"];
const PARENT = "vm-install-sandbox";

/** The sandbox's own cgroup in each hierarchy this host has. */
export function sandboxCgroups(name: string): string[] {
  return HIERARCHIES.filter((h) => fs.existsSync(path.join(h, "cgroup.procs"))).map((h) => path.join(h, PARENT, name));
}

/**
 * Shell lines for the boot script: the script's own process (it then execs nspawn) joins the sandbox's cgroup
 * in every hierarchy. A host where that fails still boots, with the warning in the console log.
 */
export function joinOwnCgroups(name: string): string {
  const dirs = HIERARCHIES.map((h) => quote(path.join(h, PARENT, name))).join(" ");
  return `for cg in ${dirs}; do
  [ -f "$(dirname "$(dirname "$cg")")/cgroup.procs" ] || continue
  { mkdir -p "$cg" && echo $$ > "$cg/cgroup.procs"; } ||
    echo "vm-install sandbox: could not join $cg; units may share cgroups with other sandboxes"
done
`;
}

/**
 * Removes the sandbox's cgroups, deepest first. Once its processes are gone they are empty; a process still
 * exiting keeps one busy for a moment, so each is tried for 2 s. Returns those left (an empty one is harmless).
 */
export async function removeOwnCgroups(name: string, sleep: (ms: number) => Promise<void>): Promise<string[]> {
  const left: string[] = [];
  for (const top of sandboxCgroups(name)) {
    if (!fs.existsSync(top)) continue;
    for (const dir of subtree(top)) {
      for (let round = 0; ; round++) {
        try {
          fs.rmdirSync(dir);
          break;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === "ENOENT") break;
          if (round >= 20) {
            left.push(dir);
            break;
          }
          await sleep(100);
        }
      }
    }
  }
  return left;
}

/** `top` and every cgroup under it, children before their parent. */
function subtree(top: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    let entries: fs.Dirent[] = [];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) if (e.isDirectory()) walk(path.join(dir, e.name));
    out.push(dir);
  };
  walk(top);
  return out;
}
