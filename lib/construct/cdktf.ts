// The one place the construct library imports cdktf (the generated bindings in providers/generated do too,
// and are regenerated on a switch). cdktf is deprecated upstream; its drop-in fork cdktn needs only this
// line and a regeneration changed.

export type { ITerraformDependable, TerraformMetaArguments } from "cdktf";
export {
  Annotations,
  App,
  AssetType,
  anyToHclTerraform,
  anyToTerraform,
  Fn,
  hashMapper,
  hashMapperHcl,
  LocalBackend,
  Op,
  PgBackend,
  S3Backend,
  TerraformAsset,
  TerraformLocal,
  TerraformOutput,
  TerraformResource,
  TerraformStack,
  TerraformVariable,
} from "cdktf";
