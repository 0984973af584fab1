// Plan-time checks of nubes_vc_vm_v3 beyond the schema: what the twin must be able to boot.
import { type CtyObject, UNKNOWN } from "../protocol/cty-value";
import { type Diagnostic, errorDiagnostic } from "../protocol/diagnostics";
import { deleteModeProblems } from "./delete-mode";
import { cloudInitProblems } from "./vm-user-data";

/** Sandbox names are 1-32 characters a-z 0-9 -; the twin names a VM's sandbox with this prefix. */
const SANDBOX_PREFIX = "nubes-";
const SANDBOX_NAME = /^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$/;
const UNIX_USER = /^[a-z_][a-z0-9_-]{0,31}$/;
/** base-passwd's users and groups, on every Debian and Ubuntu image before cloud-init runs: cloud-init's
 * useradd fails on a group of that name (measured: "group operator exists", exit 9, so the VM has no
 * login user), and an existing account would only get the key. */
const SYSTEM_NAMES = new Set(
  (
    "root daemon bin sys sync games man lp mail news uucp proxy www-data backup list irc _apt nobody " +
    "adm tty disk kmem dialout fax voice cdrom floppy tape sudo audio dip operator src shadow utmp " +
    "video sasl plugdev staff users nogroup"
  ).split(" "),
);
const SYSTEM_NAME_DETAIL = "cloud-init's useradd fails on a group of that name: pick another (vms[].user).";
const PUBLIC_KEY = /^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)) [A-Za-z0-9+/]+=*( .*)?$/;

export function sandboxNameOf(vmName: string): string {
  return `${SANDBOX_PREFIX}${vmName}`;
}

const known = (v: unknown): v is string | number | boolean => v !== null && v !== UNKNOWN;

function portProblems(list: unknown): Diagnostic[] {
  let ports: unknown;
  try {
    ports = JSON.parse(String(list));
  } catch {
    ports = undefined;
  }
  const ok =
    Array.isArray(ports) &&
    ports.every((p) => typeof p === "string" && /^\d{1,5}$/.test(p) && Number(p) >= 1 && Number(p) <= 65535);
  return ok
    ? []
    : [
        errorDiagnostic(
          "nubes_vc_vm_v3: access_port_list is not a JSON list of port strings",
          `got ${String(list)}; expected e.g. ["22"] (vms[].accessPorts)`,
          "access_port_list",
        ),
      ];
}

export function vmProblems(config: CtyObject): Diagnostic[] {
  const out = deleteModeProblems("nubes_vc_vm_v3", config);
  const { vm_name, user_login, user_public_key, access_port_list, vm_cpu, vm_ram } = config;
  if (known(vm_name) && !SANDBOX_NAME.test(sandboxNameOf(String(vm_name)))) {
    out.push(
      errorDiagnostic(
        `nubes_vc_vm_v3: vm_name ${JSON.stringify(vm_name)} cannot name a twin VM`,
        `The twin boots sandbox "${SANDBOX_PREFIX}<vm_name>": use at most 26 characters a-z, 0-9 and -.`,
        "vm_name",
      ),
    );
  }
  if (known(user_login) && !UNIX_USER.test(String(user_login))) {
    out.push(
      errorDiagnostic(
        `nubes_vc_vm_v3: user_login ${JSON.stringify(user_login)} is not a Unix user name`,
        "Use lowercase letters, digits, _ and - (vms[].user).",
        "user_login",
      ),
    );
  }
  if (known(user_login) && SYSTEM_NAMES.has(String(user_login))) {
    const summary = `nubes_vc_vm_v3: user_login ${JSON.stringify(user_login)} is a system name of the image`;
    out.push(errorDiagnostic(summary, SYSTEM_NAME_DETAIL, "user_login"));
  }
  if (known(user_public_key) && !PUBLIC_KEY.test(String(user_public_key).trim())) {
    out.push(
      errorDiagnostic(
        "nubes_vc_vm_v3: user_public_key is not one OpenSSH public key line",
        "Give the contents of a .pub file, e.g. ssh-ed25519 AAAA... (vms[].publicKeyPath).",
        "user_public_key",
      ),
    );
  }
  if (known(access_port_list)) out.push(...portProblems(access_port_list));
  out.push(...cloudInitProblems(config));
  for (const [name, v] of [
    ["vm_cpu", vm_cpu],
    ["vm_ram", vm_ram],
  ] as const) {
    if (typeof v === "number" && !(v >= 1))
      out.push(errorDiagnostic(`nubes_vc_vm_v3: ${name} must be at least 1`, `got ${v}`, name));
  }
  return out;
}
