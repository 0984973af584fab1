// A bundled handler as a Terraform asset: the directory is copied into cdktf.out and its content hash
// is part of the asset path, so a code change changes source_dir and reruns the job.
import { Construct } from "constructs";
import { type Bundle, bundleHandler } from "../bundling/bundle";
import { AssetType, TerraformAsset, TerraformStack } from "../cdktf";

/** The handler a HandlerAsset bundles and copies into cdktf.out. */
export interface HandlerAssetProps {
  /** Folder under handlersDir holding handler.ts. */
  readonly handler: string;
  /** Where that folder is. @default the project's handlers/ */
  readonly handlersDir?: string;
}

export class HandlerAsset extends Construct {
  /**
   * The one asset of `handler` in the stack that holds `scope`, created on first use. Every job of that
   * handler shares it: one bundle and one copy in cdktf.out, however many VMs the stack has.
   */
  static forHandler(scope: Construct, handler: string, handlersDir?: string): HandlerAsset {
    const stack = TerraformStack.of(scope);
    const id = `handler-${handler}`;
    const existing = stack.node.tryFindChild(id);
    if (existing === undefined) return new HandlerAsset(stack, id, { handler, handlersDir });
    if (existing instanceof HandlerAsset) {
      if (existing.handlersDir === handlersDir) return existing;
      throw new Error(
        `HandlerAsset.forHandler(${handler}): stack ${stack.node.path} already bundles a handler named ` +
          `"${handler}" from ${existing.handlersDir ?? "handlers/"}, not ${handlersDir ?? "handlers/"}; ` +
          "give one of them another name",
      );
    }
    throw new Error(
      `HandlerAsset.forHandler(${handler}): stack ${stack.node.path} already has a child "${id}" ` +
        "that is not a HandlerAsset; rename that construct",
    );
  }

  /** source_dir for the job: the asset's path relative to the stack's folder in cdktf.out. */
  readonly path: string;
  /** Content hash of the bundle directory. */
  readonly assetHash: string;
  readonly bundle: Bundle;
  /** The handlers folder it was bundled from, as given (undefined: the project's handlers/). */
  readonly handlersDir?: string;

  constructor(scope: Construct, id: string, props: HandlerAssetProps) {
    super(scope, id);
    this.handlersDir = props.handlersDir;
    this.bundle = bundleHandler({ handler: props.handler, handlersDir: props.handlersDir });
    const asset = new TerraformAsset(this, "asset", { path: this.bundle.dir, type: AssetType.DIRECTORY });
    this.path = asset.path;
    this.assetHash = asset.assetHash;
  }
}
