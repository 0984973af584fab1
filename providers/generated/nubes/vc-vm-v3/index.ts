// https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vc_vm_v3
// generated from terraform resource schema

import { Construct } from 'constructs';
import * as cdktf from 'cdktf';

// Configuration

export interface VcVmV3Config extends cdktf.TerraformMetaArguments {
  /**
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vc_vm_v3#resource_name VcVmV3#resource_name}
  */
  readonly resourceName: string;
  /**
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vc_vm_v3#vapp_uid VcVmV3#vapp_uid}
  */
  readonly vappUid: string;
  /**
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vc_vm_v3#vm_name VcVmV3#vm_name}
  */
  readonly vmName: string;
  /**
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vc_vm_v3#vm_cpu VcVmV3#vm_cpu}
  */
  readonly vmCpu: number;
  /**
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vc_vm_v3#vm_ram VcVmV3#vm_ram}
  */
  readonly vmRam: number;
  /**
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vc_vm_v3#vm_disk VcVmV3#vm_disk}
  */
  readonly vmDisk?: number;
  /**
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vc_vm_v3#image_vm VcVmV3#image_vm}
  */
  readonly imageVm: string;
  /**
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vc_vm_v3#user_login VcVmV3#user_login}
  */
  readonly userLogin: string;
  /**
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vc_vm_v3#user_public_key VcVmV3#user_public_key}
  */
  readonly userPublicKey: string;
  /**
  * JSON list of ports, e.g. ["22"].
  *
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vc_vm_v3#access_port_list VcVmV3#access_port_list}
  */
  readonly accessPortList: string;
  /**
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vc_vm_v3#need_add_zabbix_template VcVmV3#need_add_zabbix_template}
  */
  readonly needAddZabbixTemplate: boolean | cdktf.IResolvable;
  /**
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vc_vm_v3#ip_space_name VcVmV3#ip_space_name}
  */
  readonly ipSpaceName?: string;
  /**
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vc_vm_v3#access_ip_list VcVmV3#access_ip_list}
  */
  readonly accessIpList?: string;
  /**
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vc_vm_v3#cloud_init VcVmV3#cloud_init}
  */
  readonly cloudInit?: string;
  /**
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vc_vm_v3#delete_mode VcVmV3#delete_mode}
  */
  readonly deleteMode?: string;
  /**
  * Docs at Terraform Registry: {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vc_vm_v3#resume_if_exists VcVmV3#resume_if_exists}
  */
  readonly resumeIfExists?: boolean | cdktf.IResolvable;
}

/**
* Represents a {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vc_vm_v3 nubes_vc_vm_v3}
*/
export class VcVmV3 extends cdktf.TerraformResource {

  // =================
  // STATIC PROPERTIES
  // =================
  public static readonly tfResourceType = "nubes_vc_vm_v3";

  // ==============
  // STATIC Methods
  // ==============
  /**
  * Generates CDKTF code for importing a VcVmV3 resource upon running "cdktf plan <stack-name>"
  * @param scope The scope in which to define this construct
  * @param importToId The construct id used in the generated config for the VcVmV3 to import
  * @param importFromId The id of the existing VcVmV3 that should be imported. Refer to the {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vc_vm_v3#import import section} in the documentation of this resource for the id to use
  * @param provider? Optional instance of the provider where the VcVmV3 to import is found
  */
  public static generateConfigForImport(scope: Construct, importToId: string, importFromId: string, provider?: cdktf.TerraformProvider) {
        return new cdktf.ImportableResource(scope, importToId, { terraformResourceType: "nubes_vc_vm_v3", importId: importFromId, provider });
      }

  // ===========
  // INITIALIZER
  // ===========

  /**
  * Create a new {@link https://terra.k8c.ru/providers/nubes/nubes/latest/docs/resources/vc_vm_v3 nubes_vc_vm_v3} Resource
  *
  * @param scope The scope in which to define this construct
  * @param id The scoped construct ID. Must be unique amongst siblings in the same scope
  * @param options VcVmV3Config
  */
  public constructor(scope: Construct, id: string, config: VcVmV3Config) {
    super(scope, id, {
      terraformResourceType: 'nubes_vc_vm_v3',
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
    this._vappUid = config.vappUid;
    this._vmName = config.vmName;
    this._vmCpu = config.vmCpu;
    this._vmRam = config.vmRam;
    this._vmDisk = config.vmDisk;
    this._imageVm = config.imageVm;
    this._userLogin = config.userLogin;
    this._userPublicKey = config.userPublicKey;
    this._accessPortList = config.accessPortList;
    this._needAddZabbixTemplate = config.needAddZabbixTemplate;
    this._ipSpaceName = config.ipSpaceName;
    this._accessIpList = config.accessIpList;
    this._cloudInit = config.cloudInit;
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

  // vapp_uid - computed: false, optional: false, required: true
  private _vappUid?: string; 
  public get vappUid() {
    return this.getStringAttribute('vapp_uid');
  }
  public set vappUid(value: string) {
    this._vappUid = value;
  }
  // Temporarily expose input value. Use with caution.
  public get vappUidInput() {
    return this._vappUid;
  }

  // vm_name - computed: false, optional: false, required: true
  private _vmName?: string; 
  public get vmName() {
    return this.getStringAttribute('vm_name');
  }
  public set vmName(value: string) {
    this._vmName = value;
  }
  // Temporarily expose input value. Use with caution.
  public get vmNameInput() {
    return this._vmName;
  }

  // vm_cpu - computed: false, optional: false, required: true
  private _vmCpu?: number; 
  public get vmCpu() {
    return this.getNumberAttribute('vm_cpu');
  }
  public set vmCpu(value: number) {
    this._vmCpu = value;
  }
  // Temporarily expose input value. Use with caution.
  public get vmCpuInput() {
    return this._vmCpu;
  }

  // vm_ram - computed: false, optional: false, required: true
  private _vmRam?: number; 
  public get vmRam() {
    return this.getNumberAttribute('vm_ram');
  }
  public set vmRam(value: number) {
    this._vmRam = value;
  }
  // Temporarily expose input value. Use with caution.
  public get vmRamInput() {
    return this._vmRam;
  }

  // vm_disk - computed: false, optional: true, required: false
  private _vmDisk?: number; 
  public get vmDisk() {
    return this.getNumberAttribute('vm_disk');
  }
  public set vmDisk(value: number) {
    this._vmDisk = value;
  }
  public resetVmDisk() {
    this._vmDisk = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get vmDiskInput() {
    return this._vmDisk;
  }

  // image_vm - computed: false, optional: false, required: true
  private _imageVm?: string; 
  public get imageVm() {
    return this.getStringAttribute('image_vm');
  }
  public set imageVm(value: string) {
    this._imageVm = value;
  }
  // Temporarily expose input value. Use with caution.
  public get imageVmInput() {
    return this._imageVm;
  }

  // user_login - computed: false, optional: false, required: true
  private _userLogin?: string; 
  public get userLogin() {
    return this.getStringAttribute('user_login');
  }
  public set userLogin(value: string) {
    this._userLogin = value;
  }
  // Temporarily expose input value. Use with caution.
  public get userLoginInput() {
    return this._userLogin;
  }

  // user_public_key - computed: false, optional: false, required: true
  private _userPublicKey?: string; 
  public get userPublicKey() {
    return this.getStringAttribute('user_public_key');
  }
  public set userPublicKey(value: string) {
    this._userPublicKey = value;
  }
  // Temporarily expose input value. Use with caution.
  public get userPublicKeyInput() {
    return this._userPublicKey;
  }

  // access_port_list - computed: false, optional: false, required: true
  private _accessPortList?: string; 
  public get accessPortList() {
    return this.getStringAttribute('access_port_list');
  }
  public set accessPortList(value: string) {
    this._accessPortList = value;
  }
  // Temporarily expose input value. Use with caution.
  public get accessPortListInput() {
    return this._accessPortList;
  }

  // need_add_zabbix_template - computed: false, optional: false, required: true
  private _needAddZabbixTemplate?: boolean | cdktf.IResolvable; 
  public get needAddZabbixTemplate() {
    return this.getBooleanAttribute('need_add_zabbix_template');
  }
  public set needAddZabbixTemplate(value: boolean | cdktf.IResolvable) {
    this._needAddZabbixTemplate = value;
  }
  // Temporarily expose input value. Use with caution.
  public get needAddZabbixTemplateInput() {
    return this._needAddZabbixTemplate;
  }

  // ip_space_name - computed: false, optional: true, required: false
  private _ipSpaceName?: string; 
  public get ipSpaceName() {
    return this.getStringAttribute('ip_space_name');
  }
  public set ipSpaceName(value: string) {
    this._ipSpaceName = value;
  }
  public resetIpSpaceName() {
    this._ipSpaceName = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get ipSpaceNameInput() {
    return this._ipSpaceName;
  }

  // access_ip_list - computed: false, optional: true, required: false
  private _accessIpList?: string; 
  public get accessIpList() {
    return this.getStringAttribute('access_ip_list');
  }
  public set accessIpList(value: string) {
    this._accessIpList = value;
  }
  public resetAccessIpList() {
    this._accessIpList = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get accessIpListInput() {
    return this._accessIpList;
  }

  // cloud_init - computed: false, optional: true, required: false
  private _cloudInit?: string; 
  public get cloudInit() {
    return this.getStringAttribute('cloud_init');
  }
  public set cloudInit(value: string) {
    this._cloudInit = value;
  }
  public resetCloudInit() {
    this._cloudInit = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get cloudInitInput() {
    return this._cloudInit;
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

  // state_out_flat - computed: true, optional: false, required: false
  private _stateOutFlat = new cdktf.StringMap(this, "state_out_flat");
  public get stateOutFlat() {
    return this._stateOutFlat;
  }

  // =========
  // SYNTHESIS
  // =========

  protected synthesizeAttributes(): { [name: string]: any } {
    return {
      resource_name: cdktf.stringToTerraform(this._resourceName),
      vapp_uid: cdktf.stringToTerraform(this._vappUid),
      vm_name: cdktf.stringToTerraform(this._vmName),
      vm_cpu: cdktf.numberToTerraform(this._vmCpu),
      vm_ram: cdktf.numberToTerraform(this._vmRam),
      vm_disk: cdktf.numberToTerraform(this._vmDisk),
      image_vm: cdktf.stringToTerraform(this._imageVm),
      user_login: cdktf.stringToTerraform(this._userLogin),
      user_public_key: cdktf.stringToTerraform(this._userPublicKey),
      access_port_list: cdktf.stringToTerraform(this._accessPortList),
      need_add_zabbix_template: cdktf.booleanToTerraform(this._needAddZabbixTemplate),
      ip_space_name: cdktf.stringToTerraform(this._ipSpaceName),
      access_ip_list: cdktf.stringToTerraform(this._accessIpList),
      cloud_init: cdktf.stringToTerraform(this._cloudInit),
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
      vapp_uid: {
        value: cdktf.stringToHclTerraform(this._vappUid),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      vm_name: {
        value: cdktf.stringToHclTerraform(this._vmName),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      vm_cpu: {
        value: cdktf.numberToHclTerraform(this._vmCpu),
        isBlock: false,
        type: "simple",
        storageClassType: "number",
      },
      vm_ram: {
        value: cdktf.numberToHclTerraform(this._vmRam),
        isBlock: false,
        type: "simple",
        storageClassType: "number",
      },
      vm_disk: {
        value: cdktf.numberToHclTerraform(this._vmDisk),
        isBlock: false,
        type: "simple",
        storageClassType: "number",
      },
      image_vm: {
        value: cdktf.stringToHclTerraform(this._imageVm),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      user_login: {
        value: cdktf.stringToHclTerraform(this._userLogin),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      user_public_key: {
        value: cdktf.stringToHclTerraform(this._userPublicKey),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      access_port_list: {
        value: cdktf.stringToHclTerraform(this._accessPortList),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      need_add_zabbix_template: {
        value: cdktf.booleanToHclTerraform(this._needAddZabbixTemplate),
        isBlock: false,
        type: "simple",
        storageClassType: "boolean",
      },
      ip_space_name: {
        value: cdktf.stringToHclTerraform(this._ipSpaceName),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      access_ip_list: {
        value: cdktf.stringToHclTerraform(this._accessIpList),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      cloud_init: {
        value: cdktf.stringToHclTerraform(this._cloudInit),
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
