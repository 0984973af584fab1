// Fixture job directories for the runner tests: plain-JS handler.js files in temp dirs, the shape
// bundleHandler produces, so the runner is tested without depending on the real installers.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

const roots: string[] = [];

/** A fresh temp directory, removed by cleanupFixtures(). */
export function tempDir(prefix = "runner-"): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  roots.push(dir);
  return dir;
}

/** A job directory holding one file, `<module>.js` (default handler.js), with the given source. */
export function jobDir(source: string, module = "handler"): string {
  const dir = tempDir("runner-job-");
  fs.writeFileSync(path.join(dir, `${module}.js`), source);
  return dir;
}

export function cleanupFixtures(): void {
  for (const dir of roots.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/** True once `pid` is gone (or a zombie nobody has reaped yet: it runs nothing). */
export function processGone(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

export async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

/** The words /bin/sh makes of a command line, as a provisioner's shell will: what the program's argv is. */
export function shellWords(commandLine: string): string[] {
  const out = execFileSync("/bin/sh", ["-c", `printf '%s\\0' ${commandLine}`], { encoding: "utf8" });
  return out.split("\0").slice(0, -1);
}
