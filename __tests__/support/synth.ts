// Synthesizes VmInstallStack from a context object, in-process (fast) or through main.ts in a fresh Node
// process exactly as `cdktf synth` runs it (for what only the real app path shows).
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { App } from "../../construct/cdktf";
import { parseConfig } from "../../construct/config/parse";
import { PROJECT_ROOT } from "../../construct/entry-points";
import type { CatalogEntry } from "../../construct/installers/catalog";
import { VmInstallStack, type VmInstallStackProps } from "../../construct/stack";

export type TfJson = Record<string, any>;

/** A minimal valid context; `patch` is merged on top (shallow at each of vmInstall's keys). */
export function context(patch: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    nubes: { vdcUid: "vdc-1", nsxtUid: "nsxt-1" },
    vms: [{ name: "vm1" }],
    ...patch,
  };
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `vm-install-${prefix}-`));
}

export function synth(
  ctx: Record<string, unknown>,
  outdir = tempDir("synth"),
  installers?: readonly CatalogEntry[],
  props: Pick<VmInstallStackProps, "secretTriggers"> = {},
): { tf: TfJson; outdir: string; stackDir: string } {
  const config = parseConfig(ctx, installers);
  const app = new App({ outdir });
  new VmInstallStack(app, config.stackName, { config, baseDir: PROJECT_ROOT, installers, ...props });
  app.synth();
  const stackDir = path.join(outdir, "stacks", config.stackName);
  return { tf: JSON.parse(fs.readFileSync(path.join(stackDir, "cdk.tf.json"), "utf8")), outdir, stackDir };
}

/**
 * Runs main.ts in a fresh process as cdktf would (context and outdir through its environment), in a project
 * folder of its own (`cwd`, by default a new one): the app prepares the project folder for Terraform.
 */
export function synthApp(
  ctx: Record<string, unknown>,
  opts: { outdir?: string; env?: Record<string, string>; hcl?: boolean; cwd?: string } = {},
): { outdir: string; stdout: string } {
  const outdir = opts.outdir ?? tempDir("app");
  const app = [path.join(PROJECT_ROOT, "bin", "ts-register.js"), path.join(PROJECT_ROOT, "main.ts")];
  const stdout = execFileSync(process.execPath, ["-r", ...app], {
    cwd: opts.cwd ?? tempDir("app-project"),
    env: {
      ...process.env,
      ...opts.env,
      CDKTF_CONTEXT_JSON: JSON.stringify({ vmInstall: ctx }),
      CDKTF_OUTDIR: outdir,
      ...(opts.hcl ? { SYNTH_HCL_OUTPUT: "true" } : {}),
    },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  return { outdir, stdout };
}

/** Every file under `dir`, recursively. */
export function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath ?? (e as any).path, e.name));
}
