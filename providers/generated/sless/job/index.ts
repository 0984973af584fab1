// https://sless.kube5s.ru/providers/sless/sless/latest/docs/resources/job
// generated from terraform resource schema

import { Construct } from 'constructs';
import * as cdktf from 'cdktf';

// Configuration

export interface JobConfig extends cdktf.TerraformMetaArguments {
  /**
  * Docs at Terraform Registry: {@link https://sless.kube5s.ru/providers/sless/sless/latest/docs/resources/job#name Job#name}
  */
  readonly name: string;
  /**
  * Docs at Terraform Registry: {@link https://sless.kube5s.ru/providers/sless/sless/latest/docs/resources/job#runtime Job#runtime}
  */
  readonly runtime: string;
  /**
  * Docs at Terraform Registry: {@link https://sless.kube5s.ru/providers/sless/sless/latest/docs/resources/job#entrypoint Job#entrypoint}
  */
  readonly entrypoint: string;
  /**
  * Docs at Terraform Registry: {@link https://sless.kube5s.ru/providers/sless/sless/latest/docs/resources/job#source_dir Job#source_dir}
  */
  readonly sourceDir: string;
  /**
  * Docs at Terraform Registry: {@link https://sless.kube5s.ru/providers/sless/sless/latest/docs/resources/job#env_vars Job#env_vars}
  */
  readonly envVars?: { [key: string]: string };
  /**
  * Docs at Terraform Registry: {@link https://sless.kube5s.ru/providers/sless/sless/latest/docs/resources/job#event_json Job#event_json}
  */
  readonly eventJson?: string;
  /**
  * Docs at Terraform Registry: {@link https://sless.kube5s.ru/providers/sless/sless/latest/docs/resources/job#run_id Job#run_id}
  */
  readonly runId?: number;
  /**
  * Docs at Terraform Registry: {@link https://sless.kube5s.ru/providers/sless/sless/latest/docs/resources/job#wait_timeout_sec Job#wait_timeout_sec}
  */
  readonly waitTimeoutSec?: number;
}

/**
* Represents a {@link https://sless.kube5s.ru/providers/sless/sless/latest/docs/resources/job sless_job}
*/
export class Job extends cdktf.TerraformResource {

  // =================
  // STATIC PROPERTIES
  // =================
  public static readonly tfResourceType = "sless_job";

  // ==============
  // STATIC Methods
  // ==============
  /**
  * Generates CDKTF code for importing a Job resource upon running "cdktf plan <stack-name>"
  * @param scope The scope in which to define this construct
  * @param importToId The construct id used in the generated config for the Job to import
  * @param importFromId The id of the existing Job that should be imported. Refer to the {@link https://sless.kube5s.ru/providers/sless/sless/latest/docs/resources/job#import import section} in the documentation of this resource for the id to use
  * @param provider? Optional instance of the provider where the Job to import is found
  */
  public static generateConfigForImport(scope: Construct, importToId: string, importFromId: string, provider?: cdktf.TerraformProvider) {
        return new cdktf.ImportableResource(scope, importToId, { terraformResourceType: "sless_job", importId: importFromId, provider });
      }

  // ===========
  // INITIALIZER
  // ===========

  /**
  * Create a new {@link https://sless.kube5s.ru/providers/sless/sless/latest/docs/resources/job sless_job} Resource
  *
  * @param scope The scope in which to define this construct
  * @param id The scoped construct ID. Must be unique amongst siblings in the same scope
  * @param options JobConfig
  */
  public constructor(scope: Construct, id: string, config: JobConfig) {
    super(scope, id, {
      terraformResourceType: 'sless_job',
      terraformGeneratorMetadata: {
        providerName: 'sless'
      },
      provider: config.provider,
      dependsOn: config.dependsOn,
      count: config.count,
      lifecycle: config.lifecycle,
      provisioners: config.provisioners,
      connection: config.connection,
      forEach: config.forEach
    });
    this._name = config.name;
    this._runtime = config.runtime;
    this._entrypoint = config.entrypoint;
    this._sourceDir = config.sourceDir;
    this._envVars = config.envVars;
    this._eventJson = config.eventJson;
    this._runId = config.runId;
    this._waitTimeoutSec = config.waitTimeoutSec;
  }

  // ==========
  // ATTRIBUTES
  // ==========

  // id - computed: true, optional: false, required: false
  public get id() {
    return this.getStringAttribute('id');
  }

  // name - computed: false, optional: false, required: true
  private _name?: string; 
  public get name() {
    return this.getStringAttribute('name');
  }
  public set name(value: string) {
    this._name = value;
  }
  // Temporarily expose input value. Use with caution.
  public get nameInput() {
    return this._name;
  }

  // runtime - computed: false, optional: false, required: true
  private _runtime?: string; 
  public get runtime() {
    return this.getStringAttribute('runtime');
  }
  public set runtime(value: string) {
    this._runtime = value;
  }
  // Temporarily expose input value. Use with caution.
  public get runtimeInput() {
    return this._runtime;
  }

  // entrypoint - computed: false, optional: false, required: true
  private _entrypoint?: string; 
  public get entrypoint() {
    return this.getStringAttribute('entrypoint');
  }
  public set entrypoint(value: string) {
    this._entrypoint = value;
  }
  // Temporarily expose input value. Use with caution.
  public get entrypointInput() {
    return this._entrypoint;
  }

  // source_dir - computed: false, optional: false, required: true
  private _sourceDir?: string; 
  public get sourceDir() {
    return this.getStringAttribute('source_dir');
  }
  public set sourceDir(value: string) {
    this._sourceDir = value;
  }
  // Temporarily expose input value. Use with caution.
  public get sourceDirInput() {
    return this._sourceDir;
  }

  // env_vars - computed: false, optional: true, required: false
  private _envVars?: { [key: string]: string }; 
  public get envVars() {
    return this.getStringMapAttribute('env_vars');
  }
  public set envVars(value: { [key: string]: string }) {
    this._envVars = value;
  }
  public resetEnvVars() {
    this._envVars = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get envVarsInput() {
    return this._envVars;
  }

  // event_json - computed: false, optional: true, required: false
  private _eventJson?: string; 
  public get eventJson() {
    return this.getStringAttribute('event_json');
  }
  public set eventJson(value: string) {
    this._eventJson = value;
  }
  public resetEventJson() {
    this._eventJson = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get eventJsonInput() {
    return this._eventJson;
  }

  // run_id - computed: false, optional: true, required: false
  private _runId?: number; 
  public get runId() {
    return this.getNumberAttribute('run_id');
  }
  public set runId(value: number) {
    this._runId = value;
  }
  public resetRunId() {
    this._runId = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get runIdInput() {
    return this._runId;
  }

  // wait_timeout_sec - computed: false, optional: true, required: false
  private _waitTimeoutSec?: number; 
  public get waitTimeoutSec() {
    return this.getNumberAttribute('wait_timeout_sec');
  }
  public set waitTimeoutSec(value: number) {
    this._waitTimeoutSec = value;
  }
  public resetWaitTimeoutSec() {
    this._waitTimeoutSec = undefined;
  }
  // Temporarily expose input value. Use with caution.
  public get waitTimeoutSecInput() {
    return this._waitTimeoutSec;
  }

  // phase - computed: true, optional: false, required: false
  public get phase() {
    return this.getStringAttribute('phase');
  }

  // message - computed: true, optional: false, required: false
  public get message() {
    return this.getStringAttribute('message');
  }

  // =========
  // SYNTHESIS
  // =========

  protected synthesizeAttributes(): { [name: string]: any } {
    return {
      name: cdktf.stringToTerraform(this._name),
      runtime: cdktf.stringToTerraform(this._runtime),
      entrypoint: cdktf.stringToTerraform(this._entrypoint),
      source_dir: cdktf.stringToTerraform(this._sourceDir),
      env_vars: cdktf.hashMapper(cdktf.stringToTerraform)(this._envVars),
      event_json: cdktf.stringToTerraform(this._eventJson),
      run_id: cdktf.numberToTerraform(this._runId),
      wait_timeout_sec: cdktf.numberToTerraform(this._waitTimeoutSec),
    };
  }

  protected synthesizeHclAttributes(): { [name: string]: any } {
    const attrs = {
      name: {
        value: cdktf.stringToHclTerraform(this._name),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      runtime: {
        value: cdktf.stringToHclTerraform(this._runtime),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      entrypoint: {
        value: cdktf.stringToHclTerraform(this._entrypoint),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      source_dir: {
        value: cdktf.stringToHclTerraform(this._sourceDir),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      env_vars: {
        value: cdktf.hashMapperHcl(cdktf.stringToHclTerraform)(this._envVars),
        isBlock: false,
        type: "map",
        storageClassType: "stringMap",
      },
      event_json: {
        value: cdktf.stringToHclTerraform(this._eventJson),
        isBlock: false,
        type: "simple",
        storageClassType: "string",
      },
      run_id: {
        value: cdktf.numberToHclTerraform(this._runId),
        isBlock: false,
        type: "simple",
        storageClassType: "number",
      },
      wait_timeout_sec: {
        value: cdktf.numberToHclTerraform(this._waitTimeoutSec),
        isBlock: false,
        type: "simple",
        storageClassType: "number",
      },
    };

    // remove undefined attributes
    return Object.fromEntries(Object.entries(attrs).filter(([_, value]) => value !== undefined && value.value !== undefined ))
  }
}
