// https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vapp
// generated from terraform resource schema

import { Construct } from 'constructs';
import * as cdktf from 'cdktf';

// Configuration

export interface VappConfig extends cdktf.TerraformMetaArguments {
  /**
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vapp#resource_name Vapp#resource_name}
  */
  readonly resourceName: string;
  /**
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vapp#nsxt_uid Vapp#nsxt_uid}
  */
  readonly nsxtUid: string;
  /**
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vapp#vapp_name Vapp#vapp_name}
  */
  readonly vappName: string;
  /**
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vapp#vdc_uid Vapp#vdc_uid}
  */
  readonly vdcUid: string;
  /**
  * state_only (default): destroy forgets the vApp and leaves it running; suspend; delete.
  *
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vapp#delete_mode Vapp#delete_mode}
  */
  readonly deleteMode?: string;
  /**
  * Adopt an existing vApp of the same name (default true).
  *
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vapp#resume_if_exists Vapp#resume_if_exists}
  */
  readonly resumeIfExists?: boolean | cdktf.IResolvable;
}

/**
* Represents a {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vapp nubes_vapp}
*/
export class Vapp extends cdktf.TerraformResource {

  // =================
  // STATIC PROPERTIES
  // =================
  public static readonly tfResourceType = "nubes_vapp";

  // ==============
  // STATIC Methods
  // ==============
  /**
  * Generates CDKTF code for importing a Vapp resource upon running "cdktf plan <stack-name>"
  * @param scope The scope in which to define this construct
  * @param importToId The construct id used in the generated config for the Vapp to import
  * @param importFromId The id of the existing Vapp that should be imported. Refer to the {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vapp#import import section} in the documentation of this resource for the id to use
  * @param provider? Optional instance of the provider where the Vapp to import is found
  */
  public static generateConfigForImport(scope: Construct, importToId: string, importFromId: string, provider?: cdktf.TerraformProvider) {
        return new cdktf.ImportableResource(scope, importToId, { terraformResourceType: "nubes_vapp", importId: importFromId, provider });
      }

  // ===========
  // INITIALIZER
  // ===========

  /**
  * Create a new {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vapp nubes_vapp} Resource
  *
  * @param scope The scope in which to define this construct
  * @param id The scoped construct ID. Must be unique amongst siblings in the same scope
  * @param options VappConfig
  */
  public constructor(scope: Construct, id: string, config: VappConfig) {
    super(scope, id, {
      terraformResourceType: 'nubes_vapp',
      terraformGeneratorMetadata: {
        providerName: 'nubes'
      },
      provider: config.provider,
      dependsOn: config.dependsOn,
      count: config.count,
      lifecycle: config.lifecycle,
      provisioners: config.provisioners,
      connection: config.connection,
      forEach: config.forEach
    });
    this._resourceName = config.resourceName;
    this._nsxtUid = config.nsxtUid;
    this._vappName = config.vappName;
    this._vdcUid = config.vdcUid;
    this._deleteMode = config.deleteMode;
    this._resumeIfExists = config.resumeIfExists;
  }

  // ==========
  // ATTRIBUTES
  // ==========

  // id - computed: true, optional: false, required: false
  public get id() {
    return this.getStringAttribute('id');
  }

  // resource_name - computed: false, optional: false, required: true
  private _resourceName?: string; 
  public get resourceName() {
    return this.getStringAttribute('resource_name');
  }
  public set resourceName(value: string) {
    this._resourceName = value;
  }
  // Temporarily expose input value. Use with caution.
  public get resourceNameInput() {
    return this._resourceName;
  }

  // nsxt_uid - computed: false, optional: false, required: true
  private _nsxtUid?: string; 
  public get nsxtUid() {
    return this.getStringAttribute('nsxt_uid');
  }
  public set nsxtUid(value: string) {
    this._nsxtUid = value;
  }
  // Temporarily expose input value. Use with caution.
  public get nsxtUidInput() {
    return this._nsxtUid;
  }

  // vapp_name - computed: false, optional: false, required: true
  private _vappName?: string; 
  public get vappName() {
    return this.getStringAttribute('vapp_name');
  }
  public set vappName(value: string) {
    this._vappName = value;
  }
  // Temporarily expose input value. Use with caution.
  public get vappNameInput() {
    return this._vappName;
  }

  // vdc_uid - computed: false, optional: false, required: true
  private _vdcUid?: string; 
  public get vdcUid() {
    return this.getStringAttribute('vdc_uid');
  }
  public set vdcUid(value: string) {
    this._vdcUid = value;
  }
  // Temporarily expose input value. Use with caution.
  public get vdcUidInput() {
    return this._vdcUid;
  }

  // delete_mode - computed: true, optional: true, required: false
  private _deleteMode?: string; 
  public get deleteMode() {
    return this.getStringAttribute('delete_mode');
  }
  public set deleteMode(value: string) {
    this._deleteMode = value;
  }
  public resetDeleteMode() {
    this._deleteMode = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get deleteModeInput() {
    return this._deleteMode;
  }

  // resume_if_exists - computed: true, optional: true, required: false
  private _resumeIfExists?: boolean | cdktf.IResolvable; 
  public get resumeIfExists() {
    return this.getBooleanAttribute('resume_if_exists');
  }
  public set resumeIfExists(value: boolean | cdktf.IResolvable) {
    this._resumeIfExists = value;
  }
  public resetResumeIfExists() {
    this._resumeIfExists = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get resumeIfExistsInput() {
    return this._resumeIfExists;
  }

  // =========
  // SYNTHESIS
  // =========

  protected synthesizeAttributes(): { [name: string]: any } {
    return {
      resource_name: cdktf.stringToTerraform(this._resourceName),
      nsxt_uid: cdktf.stringToTerraform(this._nsxtUid),
      vapp_name: cdktf.stringToTerraform(this._vappName),
      vdc_uid: cdktf.stringToTerraform(this._vdcUid),
      delete_mode: cdktf.stringToTerraform(this._deleteMode),
      resume_if_exists: cdktf.booleanToTerraform(this._resumeIfExists),
    };
  }

  protected synthesizeHclAttributes(): { [name: string]: any } {
    const attrs = {
      resource_name: {
        value: cdktf.stringToHclTerraform(this._resourceName),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      nsxt_uid: {
        value: cdktf.stringToHclTerraform(this._nsxtUid),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      vapp_name: {
        value: cdktf.stringToHclTerraform(this._vappName),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      vdc_uid: {
        value: cdktf.stringToHclTerraform(this._vdcUid),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      delete_mode: {
        value: cdktf.stringToHclTerraform(this._deleteMode),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      resume_if_exists: {
        value: cdktf.booleanToHclTerraform(this._resumeIfExists),
        isBlock: false,
        type: "simple",
        storageClassType: "boolean",
      },
    };

    // remove undefined attributes
    return Object.fromEntries(Object.entries(attrs).filter(([_, value]) => value !== undefined && value.value !== undefined ))
  }
}
