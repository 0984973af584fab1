// The whole deployment: the two providers, the secrets as sensitive variables, and one VmInstallation
// per configured VM.
import { Construct } from "constructs";
import { NubesProvider } from "../providers/generated/nubes/provider";
import { SlessProvider } from "../providers/generated/sless/provider";
import type { VmInstallConfig } from "./config/types";
import { TerraformStack, TerraformVariable } from "./cdktf";
import { VmInstallation } from "./vm-installation";

export interface VmInstallStackProps {
  /** The validated configuration (lib/config parseConfig). */
  readonly config: VmInstallConfig;
  /** Folder that relative key paths are resolved from. @default process.cwd() */
  readonly baseDir?: string;
}

export class VmInstallStack extends TerraformStack {
  readonly installations: VmInstallation[];
  private readonly secrets = new Map<string, TerraformVariable>();

  constructor(scope: Construct, id: string, props: VmInstallStackProps) {
    super(scope, id);
    const { config } = props;

    // Provider addresses are settings (the sless provider is not public; Nubes may move): they replace
    // the source baked into the generated bindings.
    this.addOverride("terraform.required_providers.nubes", {
      source: config.nubes.providerSource,
      version: config.nubes.providerVersion,
    });
    this.addOverride("terraform.required_providers.sless", {
      source: config.sless.providerSource,
      ...(config.sless.providerVersion ? { version: config.sless.providerVersion } : {}),
    });

    new NubesProvider(this, "nubes", {
      apiEndpoint: config.nubes.endpoint,
      apiToken: this.secretVariable("nubes_api_token", "Nubes API token (TF_VAR_nubes_api_token)").value,
    });
    new SlessProvider(this, "sless", {
      endpoint: config.sless.endpoint,
      token: this.secretVariable("sless_token", "sless API token, a JWT (TF_VAR_sless_token)").value,
    });

    this.installations = config.vms.map(
      (vm) =>
        new VmInstallation(this, vm.name, {
          vm,
          nubes: config.nubes,
          sless: config.sless,
          runId: config.runId,
          baseDir: props.baseDir,
          secretVariable: (name) => this.secretVariable(name, `PostgreSQL password (TF_VAR_${name})`),
        }),
    );
  }

  /** One sensitive string variable per name, set through TF_VAR_<name>; never given a default. */
  private secretVariable(name: string, description: string): TerraformVariable {
    let variable = this.secrets.get(name);
    if (!variable) {
      variable = new TerraformVariable(this, name, { type: "string", sensitive: true, description });
      variable.overrideLogicalId(name);
      this.secrets.set(name, variable);
    }
    return variable;
  }
}
