// The stack's Terraform backend, through cdktf's own backend classes. Nothing secret is written: the pg
// connection string (PG_CONN_STR) and the S3 credentials (AWS_*) stay in the environment of whoever runs
// Terraform, and Terraform's own backends lock the state (pg: an advisory lock; s3: a lock object).
import * as path from "node:path";
import type { Construct } from "constructs";
import { LocalBackend, PgBackend, S3Backend } from "./cdktf";
import type { BackendConfig } from "./config/backend";
import type { TerraformPaths } from "./terraform-paths";

export function configureBackend(
  stack: Construct,
  stackName: string,
  backend: BackendConfig,
  paths: TerraformPaths,
): void {
  switch (backend.type) {
    case "local":
      // cdktf's default local backend names the state by its absolute path; the same file, relative.
      new LocalBackend(stack, { path: paths.placed(path.join(paths.projectDir, `terraform.${stackName}.tfstate`)) });
      return;
    case "pg": {
      // cdktf requires conn_str; Terraform reads PG_CONN_STR only when it is absent, so it goes again.
      const pg = new PgBackend(stack, { connStr: "from PG_CONN_STR", schemaName: backend.schemaName });
      pg.addOverride("conn_str", undefined);
      return;
    }
    case "s3":
      // use_lockfile: Terraform >= 1.10 locks with an object beside the state (cdktf 0.21 predates the key).
      new S3Backend(stack, {
        bucket: backend.bucket,
        key: backend.key,
        region: backend.region,
        encrypt: true,
        ...(backend.endpoint
          ? {
              endpoints: { s3: backend.endpoint },
              skipCredentialsValidation: true,
              skipRegionValidation: true,
              skipRequestingAccountId: true,
              skipMetadataApiCheck: true,
            }
          : {}),
        ...(backend.usePathStyle !== undefined ? { usePathStyle: backend.usePathStyle } : {}),
      }).addOverride("use_lockfile", true);
      return;
  }
}
