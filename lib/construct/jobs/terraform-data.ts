// Terraform's built-in terraform_data, as the local target uses it. cdktf's own DataResource makes every
// instance run `terraform version` at synth to check for Terraform >= 1.4: with one per job that is 60
// process spawns for 20 VMs, most of a 20-VM synth. This one checks once per process instead.
import { execFileSync } from "node:child_process";
import type { Construct, IValidation } from "constructs";
import {
  anyToHclTerraform,
  anyToTerraform,
  hashMapper,
  hashMapperHcl,
  type TerraformMetaArguments,
  TerraformResource,
  TerraformStack,
} from "../cdktf";

/** A terraform_data's arguments: its input, the triggers that replace it, and Terraform's meta-arguments. */
export interface TerraformDataConfig extends TerraformMetaArguments {
  /** Stored in state and reflected in `output` after apply. */
  readonly input?: Record<string, string>;
  /** A change replaces the resource (and reruns its provisioners). */
  readonly triggersReplace?: Record<string, string>;
}

/** `terraform version`'s verdict, asked once per process: it does not change during a synth. */
let versionProblems: string[] | undefined;
/** Stacks that already carry the check. */
const checked = new WeakSet<TerraformStack>();

/** terraform_data needs Terraform >= 1.4. */
class TerraformSupportsData implements IValidation {
  validate(): string[] {
    if (versionProblems) return versionProblems;
    try {
      const text = execFileSync("terraform", ["version"], { stdio: "pipe", encoding: "utf8" });
      const [major, minor] = (/(\d+)\.(\d+)\.\d+/.exec(text) ?? []).slice(1).map(Number);
      versionProblems =
        major === undefined
          ? [`could not read Terraform's version from \`terraform version\`: ${text.split("\n")[0]}`]
          : major > 1 || (major === 1 && minor >= 4)
            ? []
            : [
                `Terraform ${major}.${minor} is too old for the local job target ` +
                  "(terraform_data needs 1.4 or later): upgrade Terraform",
              ];
    } catch (err) {
      versionProblems = [
        `the local job target needs Terraform >= 1.4, and \`terraform version\` failed: ${(err as Error).message}`,
      ];
    }
    return versionProblems;
  }
}

export class TerraformData extends TerraformResource {
  constructor(
    scope: Construct,
    id: string,
    private readonly config: TerraformDataConfig,
  ) {
    super(scope, id, {
      terraformResourceType: "terraform_data",
      terraformGeneratorMetadata: { providerName: "terraform" },
      ...config,
    });
    const stack = TerraformStack.of(this);
    if (!checked.has(stack)) {
      checked.add(stack);
      stack.node.addValidation(new TerraformSupportsData());
    }
  }

  protected synthesizeAttributes(): Record<string, unknown> {
    return {
      input: hashMapper(anyToTerraform)(this.config.input),
      triggers_replace: hashMapper(anyToTerraform)(this.config.triggersReplace),
    };
  }

  protected synthesizeHclAttributes(): Record<string, unknown> {
    return {
      input: hashMapperHcl(anyToHclTerraform)(this.config.input),
      triggers_replace: hashMapperHcl(anyToHclTerraform)(this.config.triggersReplace),
    };
  }
}
