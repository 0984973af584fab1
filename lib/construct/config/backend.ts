// Where the stack's Terraform state lives: `backend`. Credentials never come from cdktf.json: pg reads
// PG_CONN_STR, s3 the AWS_* variables, as Terraform's own backends do; a sless stack's state holds the SSH
// key and the password, so a shared backend must be encrypted and access-controlled (docs/secrets.md).
import { type ConfigOf, group, type SettingsRule, setting } from "../../shared/settings";
import { boolean, oneOf, string } from "../../shared/validate";

const BACKEND_SETTINGS = {
  type: setting(oneOf(["local", "pg", "s3"] as const), {
    required: true,
    doc: 'Where the state lives: "local" (a file beside the project), "pg" or "s3" (shared).',
  }),
  schemaName: setting(
    string({ pattern: /^[a-z_][a-z0-9_]{0,62}$/, allowed: "a PostgreSQL schema name (lowercase letters, digits, _)" }),
    {
      defaultDoc: '"terraform_remote_state" (Terraform\'s)',
      doc: "pg: the schema holding the state; the connection string comes from PG_CONN_STR.",
    },
  ),
  bucket: setting(string({ pattern: /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, allowed: "an S3 bucket name" }), {
    defaultDoc: "none; required for s3",
    doc: "s3: the bucket.",
  }),
  key: setting(
    string({
      pattern: /^[A-Za-z0-9!_.*'()/-]{1,1024}$/,
      allowed: "an object key such as vm-install/terraform.tfstate",
    }),
    { defaultDoc: "none; required for s3", doc: "s3: the state object's key." },
  ),
  region: setting(
    string({
      pattern: /^[a-z0-9-]{1,32}$/,
      allowed: 'a region name such as "eu-central-1" (any name an S3-compatible store accepts)',
    }),
    {
      defaultDoc: "none; required for s3",
      doc: "s3: the region; credentials come from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or a profile.",
    },
  ),
  endpoint: setting(
    string({ pattern: /^https?:\/\/[^\s"'`$\\]+$/, allowed: "an http(s) URL of an S3-compatible endpoint" }),
    { defaultDoc: "AWS S3", doc: "s3: the endpoint of an S3-compatible store (MinIO, Ceph, a cloud's S3 API)." },
  ),
  usePathStyle: setting(boolean(), {
    defaultDoc: "the backend's (false)",
    doc: "s3: bucket in the path, not the host name (most S3-compatible stores need it).",
  }),
} as const;

type BackendKey = Exclude<keyof typeof BACKEND_SETTINGS, "type">;
type BackendType = "local" | "pg" | "s3";

/** Which keys each type takes, and which of them it requires. */
const KEYS = {
  local: { takes: [], needs: [] },
  pg: { takes: ["schemaName"], needs: [] },
  s3: { takes: ["bucket", "key", "region", "endpoint", "usePathStyle"], needs: ["bucket", "key", "region"] },
} as const satisfies Record<BackendType, { takes: readonly BackendKey[]; needs: readonly BackendKey[] }>;

type Written = ConfigOf<typeof BACKEND_SETTINGS>;
type Keys = typeof KEYS;
/** One of three shapes, as KEYS says: each type with the keys it takes, those it needs required. */
export type BackendConfig = {
  [T in BackendType]: { readonly type: T } & Pick<Written, Keys[T]["takes"][number]> &
    Required<Pick<Written, Keys[T]["needs"][number]>>;
}[BackendType];

const BACKEND_RULES: readonly SettingsRule[] = [
  {
    doc: "each type takes only its own keys: pg schemaName; s3 bucket, key, region (required), endpoint, usePathStyle",
    check: (given: Written) => {
      const { takes, needs } = KEYS[given.type] as { takes: readonly string[]; needs: readonly string[] };
      const them = takes.length ? `; it takes ${takes.join(", ")}` : "";
      return [
        ...Object.keys(given)
          .filter((key) => key !== "type" && !takes.includes(key))
          .map((key) => `${key}: not a setting of backend "${given.type}"${them}`),
        ...needs
          .filter((key) => given[key as BackendKey] === undefined)
          .map((key) => `${key}: required for backend "${given.type}"`),
      ];
    },
  },
];

export const backendSetting = group(BACKEND_SETTINGS, {
  rules: BACKEND_RULES,
  default: { type: "local" },
  doc: "Where the Terraform state lives: a local file, or shared in pg or s3; credentials only from the environment.",
  resolve: (value: unknown) => value as BackendConfig,
});
