// https://terra.k8c.ru/providers/nubes/nubes/latest/docs
// generated from terraform resource schema

import { Construct } from 'constructs';
import * as cdktf from 'cdktf';

// Configuration

export interface NubesProviderConfig {
  /**
  * Nubes API endpoint.
  *
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs#api_endpoint NubesProvider#api_endpoint}
  */
  readonly apiEndpoint?: string;
  /**
  * Nubes API token (env NUBES_API_TOKEN).
  *
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs#api_token NubesProvider#api_token}
  */
  readonly apiToken?: string;
  /**
  * Alias name
  *
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs#alias NubesProvider#alias}
  */
  readonly alias?: string;
}

/**
* Represents a {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs nubes}
*/
export class NubesProvider extends cdktf.TerraformProvider {

  // =================
  // STATIC PROPERTIES
  // =================
  public static readonly tfResourceType = "nubes";

  // ==============
  // STATIC Methods
  // ==============
  /**
  * Generates CDKTF code for importing a NubesProvider resource upon running "cdktf plan <stack-name>"
  * @param scope The scope in which to define this construct
  * @param importToId The construct id used in the generated config for the NubesProvider to import
  * @param importFromId The id of the existing NubesProvider that should be imported. Refer to the {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs#import import section} in the documentation of this resource for the id to use
  * @param provider? Optional instance of the provider where the NubesProvider to import is found
  */
  public static generateConfigForImport(scope: Construct, importToId: string, importFromId: string, provider?: cdktf.TerraformProvider) {
        return new cdktf.ImportableResource(scope, importToId, { terraformResourceType: "nubes", importId: importFromId, provider });
      }

  // ===========
  // INITIALIZER
  // ===========

  /**
  * Create a new {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs nubes} Resource
  *
  * @param scope The scope in which to define this construct
  * @param id The scoped construct ID. Must be unique amongst siblings in the same scope
  * @param options NubesProviderConfig = {}
  */
  public constructor(scope: Construct, id: string, config: NubesProviderConfig = {}) {
    super(scope, id, {
      terraformResourceType: 'nubes',
      terraformGeneratorMetadata: {
        providerName: 'nubes'
      },
      terraformProviderSource: 'terra.k8c.ru/nubes/nubes'
    });
    this._apiEndpoint = config.apiEndpoint;
    this._apiToken = config.apiToken;
    this._alias = config.alias;
  }

  // ==========
  // ATTRIBUTES
  // ==========

  // api_endpoint - computed: false, optional: true, required: false
  private _apiEndpoint?: string; 
  public get apiEndpoint() {
    return this._apiEndpoint;
  }
  public set apiEndpoint(value: string | undefined) {
    this._apiEndpoint = value;
  }
  public resetApiEndpoint() {
    this._apiEndpoint = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get apiEndpointInput() {
    return this._apiEndpoint;
  }

  // api_token - computed: false, optional: true, required: false
  private _apiToken?: string; 
  public get apiToken() {
    return this._apiToken;
  }
  public set apiToken(value: string | undefined) {
    this._apiToken = value;
  }
  public resetApiToken() {
    this._apiToken = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get apiTokenInput() {
    return this._apiToken;
  }

  // alias - computed: false, optional: true, required: false
  private _alias?: string; 
  public get alias() {
    return this._alias;
  }
  public set alias(value: string | undefined) {
    this._alias = value;
  }
  public resetAlias() {
    this._alias = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get aliasInput() {
    return this._alias;
  }

  // =========
  // SYNTHESIS
  // =========

  protected synthesizeAttributes(): { [name: string]: any } {
    return {
      api_endpoint: cdktf.stringToTerraform(this._apiEndpoint),
      api_token: cdktf.stringToTerraform(this._apiToken),
      alias: cdktf.stringToTerraform(this._alias),
    };
  }

  protected synthesizeHclAttributes(): { [name: string]: any } {
    const attrs = {
      api_endpoint: {
        value: cdktf.stringToHclTerraform(this._apiEndpoint),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      api_token: {
        value: cdktf.stringToHclTerraform(this._apiToken),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      alias: {
        value: cdktf.stringToHclTerraform(this._alias),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
    };

    // remove undefined attributes
    return Object.fromEntries(Object.entries(attrs).filter(([_, value]) => value !== undefined && value.value !== undefined ))
  }
}
