// A Nubes VM's cloud_init as Terraform builds it at plan time: the user's document (vms[].cloudInit, read
// and checked at synth by lib/construct/config/cloud-init.ts) merged with the stack's part, the delivered host key
// and, when the user lists users, the login user. The key exists only in Terraform (the record that
// keeps the first key in state), so the document is assembled there, not at synth.
import type { VmConfig } from "./config/types";
import type { TerraformPaths } from "./terraform-paths";

/** A VM's delivered key: the record's address, and its attributes as Terraform expressions (bare references). */
export interface DeliveredKeyRecord {
  readonly address: string;
  readonly public: string;
  readonly private: string;
  /** As an interpolation, for the jobs' pin. */
  readonly sha256: string;
  readonly sha256Ref: string;
}

/**
 * A text as an HCL quoted string: Terraform reads `${` and `%{` in it as template syntax, which the
 * user's cloud-init (a shell line under runcmd, say) may hold as plain text.
 */
function hclString(text: string): string {
  return JSON.stringify(text).replace(/([$%])\{/g, (_, sigil: string) => `${sigil}${sigil}{`);
}

/**
 * The VM's cloud_init: the user's document merged with the stack's part, the delivered host key as the
 * only one the VM keeps (ssh_deletekeys drops the image's, ssh_genkeytypes [] makes none). Assembled by
 * Terraform, since the key is only known there; sensitive because the key is. Undefined when there is
 * neither (a first-contact VM without cloudInit has none, as before).
 */
export function vmCloudInit(
  vm: VmConfig,
  paths: TerraformPaths,
  document: Record<string, unknown> | undefined,
  key: DeliveredKeyRecord | undefined,
): string | undefined {
  if (!document && !key) return undefined;
  const user = document ? `jsondecode(${hclString(JSON.stringify(document))})` : "{}";
  const parts = [
    ...(key
      ? [
          `ssh_keys = { ed25519_private = ${key.private}, ed25519_public = ${key.public} }, ` +
            "ssh_deletekeys = true, ssh_genkeytypes = []",
        ]
      : []),
    ...(Array.isArray(document?.users) ? [`users = ${withLoginUser(vm, paths, document.users)}`] : []),
  ];
  return `#cloud-config\n\${yamlencode(merge(${user}, ${parts.length ? `{ ${parts.join(", ")} }` : "{}"}))}`;
}

/**
 * The user's `users:` with the login user appended, as the platform makes it from user_login and
 * user_public_key. cloud-init merges user-data parts key by key, a later part's list replacing an
 * earlier one's (dict(replace)+list()), so a `users:` of the user's own would otherwise drop the
 * platform's login user, whatever part the platform puts it in.
 */
function withLoginUser(vm: VmConfig, paths: TerraformPaths, users: unknown[]): string {
  const publicKey = `chomp(file(${JSON.stringify(paths.setting(vm.publicKeyPath))}))`;
  const login =
    `{ name = ${JSON.stringify(vm.user)}, ssh_authorized_keys = [${publicKey}], ` +
    'sudo = "ALL=(ALL) NOPASSWD:ALL", shell = "/bin/bash", lock_passwd = true }';
  return `concat(jsondecode(${hclString(JSON.stringify(users))}), [${login}])`;
}
