// The project's own programs that other code starts as processes (the cdktf wrapper, the job runner's CLI,
// the loader that lets Node run them as TypeScript). Named once, from the project root, so no module finds
// another through a path string of its own; __tests__/layout.test.ts checks that each one exists.
import * as path from "node:path";

/** The project root: handlers/, bin/ and node_modules/ are found from here whatever the cwd. */
export const PROJECT_ROOT = path.resolve(__dirname, "..");

/** The entry points of a checkout at `root` (another checkout's, for a job target built against it). */
export function entryPoints(root: string = PROJECT_ROOT) {
  return {
    /** bin/cdktf: runs cdktf with the project's Terraform settings and the VMs' delivered host keys made. */
    cdktfWrapper: path.join(root, "bin", "cdktf"),
    /** bin/ts-register.js: the transpile-only loader `node -r` preloads to run .ts files. */
    tsRegister: path.join(root, "bin", "ts-register.js"),
    /** bin/invoke.ts: the job runner's CLI, which the local job target calls. */
    invokeCli: path.join(root, "bin", "invoke.ts"),
  } as const;
}

export const ENTRY_POINTS = entryPoints();
