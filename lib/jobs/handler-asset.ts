// A bundled handler as a Terraform asset: the directory is copied into cdktf.out and its content hash
// is part of the asset path, so a code change changes source_dir and reruns the job.
import { Construct } from "constructs";
import { bundleHandler, Bundle } from "../bundling/bundle";
import { AssetType, TerraformAsset } from "../cdktf";

export interface HandlerAssetProps {
  /** Folder under handlers/. */
  readonly handler: string;
}

export class HandlerAsset extends Construct {
  /** source_dir for the job: the asset's path relative to the stack's folder in cdktf.out. */
  readonly path: string;
  /** Content hash of the bundle directory. */
  readonly assetHash: string;
  readonly bundle: Bundle;

  constructor(scope: Construct, id: string, props: HandlerAssetProps) {
    super(scope, id);
    this.bundle = bundleHandler({ handler: props.handler });
    const asset = new TerraformAsset(this, "asset", { path: this.bundle.dir, type: AssetType.DIRECTORY });
    this.path = asset.path;
    this.assetHash = asset.assetHash;
  }
}
