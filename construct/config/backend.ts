// Where the stack's Terraform state lives: `backend` in context.vmInstall. "local" (a file beside the
// project, the default), or shared by a team: "pg" (a PostgreSQL database) or "s3" (AWS S3 or any
// S3-compatible store). Credentials never come from cdktf.json: pg reads PG_CONN_STR, s3 the AWS_*
// variables, as Terraform's own backends do; a sless stack's state holds the SSH key and the password, so
// a shared backend must be encrypted and access-controlled (README, Secrets).
import { boolean, object, oneOf, optional, refine, required, string, type Validator } from "../../shared/validate";

export type BackendConfig =
  | { readonly type: "local" }
  | { readonly type: "pg"; readonly schemaName?: string }
  | {
      readonly type: "s3";
      readonly bucket: string;
      readonly key: string;
      readonly region: string;
      readonly endpoint?: string;
      readonly usePathStyle?: boolean;
    };

type RawBackend = {
  type: "local" | "pg" | "s3";
  schemaName?: string;
  bucket?: string;
  key?: string;
  region?: string;
  endpoint?: string;
  usePathStyle?: boolean;
};

const PG_NAME = string({
  pattern: /^[a-z_][a-z0-9_]{0,62}$/,
  allowed: "a PostgreSQL schema name (lowercase letters, digits, _)",
});
const BUCKET = string({ pattern: /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, allowed: "an S3 bucket name" });
const STATE_KEY = string({
  pattern: /^[A-Za-z0-9!_.*'()/-]{1,1024}$/,
  allowed: "an object key such as vm-install/terraform.tfstate",
});
const REGION = string({
  pattern: /^[a-z0-9-]{1,32}$/,
  allowed: 'a region name such as "eu-central-1" (any name an S3-compatible store accepts)',
});
const ENDPOINT = string({
  pattern: /^https?:\/\/[^\s"'`$\\]+$/,
  allowed: "an http(s) URL of an S3-compatible endpoint",
});

/** Which keys each type takes, and which of them it requires. */
const KEYS: Record<RawBackend["type"], { takes: (keyof RawBackend)[]; needs: (keyof RawBackend)[] }> = {
  local: { takes: [], needs: [] },
  pg: { takes: ["schemaName"], needs: [] },
  s3: { takes: ["bucket", "key", "region", "endpoint", "usePathStyle"], needs: ["bucket", "key", "region"] },
};

export const backendSetting: Validator<RawBackend> = refine(
  object<RawBackend>({
    type: required(
      oneOf(["local", "pg", "s3"] as const),
      'where the state lives: "local" (a file beside the project), "pg" or "s3" (shared)',
    ),
    schemaName: optional(
      PG_NAME,
      undefined,
      'pg: the schema holding the state (default "terraform_remote_state"); the connection string comes from PG_CONN_STR',
    ),
    bucket: optional(BUCKET, undefined, "s3: the bucket (required)"),
    key: optional(STATE_KEY, undefined, "s3: the state object's key (required)"),
    region: optional(
      REGION,
      undefined,
      "s3: the region (required); credentials come from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or a profile",
    ),
    endpoint: optional(
      ENDPOINT,
      undefined,
      "s3: the endpoint of an S3-compatible store (MinIO, Ceph, a cloud's S3 API)",
    ),
    usePathStyle: optional(
      boolean(),
      undefined,
      "s3: bucket in the path, not the host name (most S3-compatible stores need it)",
    ),
  }),
  (value, path, problems) => {
    const { takes, needs } = KEYS[value.type];
    for (const key of Object.keys(value) as (keyof RawBackend)[]) {
      if (key !== "type" && !takes.includes(key))
        problems.push(
          `${path}.${key}: not a setting of backend "${value.type}"${takes.length ? `; it takes ${takes.join(", ")}` : ""}`,
        );
    }
    for (const key of needs)
      if (value[key] === undefined) problems.push(`${path}.${key}: required for backend "${value.type}"`);
  },
  "Where the Terraform state lives (default local); credentials come from the environment, never from cdktf.json.",
);

export const DEFAULT_BACKEND: BackendConfig = { type: "local" };
