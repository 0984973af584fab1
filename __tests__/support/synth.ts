// Synthesizes VmInstallStack from a context object, in-process (fast) or through main.ts in a fresh Node
// process exactly as `cdktf synth` runs it (for what only the real app path shows).
import { execFileSync } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { openSshEd25519, sshString } from "../../handlers/common/ssh-keys";
import { App } from "../../lib/construct/cdktf";
import { parseConfig } from "../../lib/construct/config/parse";
import type { CatalogEntry } from "../../lib/construct/installers/catalog";
import { VmInstallStack, type VmInstallStackProps } from "../../lib/construct/stack";
import { PROJECT_ROOT } from "../../lib/entry-points";
import { ValidationError } from "../../lib/shared/validate";

export type TfJson = Record<string, any>;

/** A minimal valid context; `patch` is merged on top (shallow at each of vmInstall's keys). */
export function context(patch: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    nubes: { vdcUid: "vdc-1", nsxtUid: "nsxt-1" },
    vms: [{ name: "vm1" }],
    ...patch,
  };
}

let keyPair: { privateKeyPath: string; publicKeyPath: string } | undefined;

/** A throwaway ed25519 pair (private 0600), made once per test process: synth checks the key files it is given. */
export function testKeyPair(): { privateKeyPath: string; publicKeyPath: string } {
  if (keyPair) return keyPair;
  const dir = tempDir("keys");
  const { privateKey } = crypto.generateKeyPairSync("ed25519");
  const jwk = privateKey.export({ format: "jwk" });
  const pub = Buffer.from(jwk.x!, "base64url");
  const blob = Buffer.concat([sshString("ssh-ed25519"), sshString(pub)]);
  keyPair = { privateKeyPath: path.join(dir, "vm_key"), publicKeyPath: path.join(dir, "vm_key.pub") };
  fs.writeFileSync(keyPair.privateKeyPath, openSshEd25519(Buffer.from(jwk.d!, "base64url"), pub), { mode: 0o600 });
  fs.writeFileSync(keyPair.publicKeyPath, `ssh-ed25519 ${blob.toString("base64")} test\n`);
  return keyPair;
}

/**
 * `ctx` with testKeyPair() for each VM that names no key file of its own (the public one only for a VM the
 * stack creates), relative to `projectDir` as a user writes them: a test about something else synthesizes
 * as a deployer with keys would.
 */
export function withTestKeys(ctx: Record<string, unknown>, projectDir = PROJECT_ROOT): Record<string, unknown> {
  if (!Array.isArray(ctx.vms)) return ctx;
  const keys = testKeyPair();
  const privateKeyPath = path.relative(projectDir, keys.privateKeyPath);
  const publicKeyPath = path.relative(projectDir, keys.publicKeyPath);
  const vms = ctx.vms.map((vm) =>
    vm && typeof vm === "object"
      ? { privateKeyPath, ...((vm as { kind?: string }).kind === "existing" ? {} : { publicKeyPath }), ...vm }
      : vm,
  );
  return { ...ctx, vms };
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `vm-install-${prefix}-`));
}

export function synth(
  ctx: Record<string, unknown>,
  outdir = tempDir("synth"),
  installers?: readonly CatalogEntry[],
  props: Pick<VmInstallStackProps, "secretTriggers" | "parallelism"> = {},
): { tf: TfJson; outdir: string; stackDir: string } {
  const config = parseConfig(withTestKeys(ctx), installers);
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
      CDKTF_CONTEXT_JSON: JSON.stringify({ vmInstall: withTestKeys(ctx) }),
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

/** The problems parseConfig names for `ctx`; throws when it accepts it. */
export function configProblems(ctx: unknown): string[] {
  try {
    parseConfig(ctx);
  } catch (err) {
    if (err instanceof ValidationError) return err.problems;
    throw err;
  }
  throw new Error("expected the configuration to be rejected");
}
