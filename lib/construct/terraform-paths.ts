// Paths as the synthesized configuration holds them. Terraform runs in the stack's folder
// (cdktf.out/stacks/<stack>), so a path relative to that folder still points at the same file when the
// project, cdktf.out included, is copied or checked out elsewhere: nothing in cdk.tf.json names the
// synthesizing machine's folders. An absolute path a user wrote in cdktf.json stays as written.
import * as path from "node:path";

export class TerraformPaths {
  /**
   * @param stackDir where Terraform runs: <outdir>/stacks/<stack>
   * @param projectDir what relative settings (key paths) are relative to: the cdktf project
   */
  constructor(
    readonly stackDir: string,
    readonly projectDir: string,
  ) {}

  /** A path setting as this machine reads it now (for checks at synth). */
  resolve(setting: string): string {
    return path.resolve(this.projectDir, setting);
  }

  /** A path setting as the configuration holds it: relative to the stack folder unless written absolute. */
  setting(setting: string): string {
    return path.isAbsolute(setting) ? setting : this.placed(this.resolve(setting));
  }

  /** A file or folder the project places or ships (results, state, the job runner): always relative. */
  placed(absolute: string): string {
    return path.relative(this.stackDir, absolute) || ".";
  }
}
