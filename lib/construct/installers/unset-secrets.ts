// A deploy or destroy with an installer's secret variable unset stops at Terraform's prompt for it, which
// cdktf run piped neither shows nor answers: it waits for ever. bin/cdktf names the missing ones first.
// A destroy needs them too: Terraform asks for every variable of the stack, and onDestroy "uninstall"
// hands them to the absent runs (--secret-env).
import type { VmInstallConfig } from "../config/types";
import { type CatalogEntry, INSTALLERS } from "./catalog";
import { secretVariableNames } from "./installer-event";

/** The cdktf commands that apply: Terraform prompts there for a variable without a value. */
const APPLYING = new Set(["deploy", "apply", "destroy"]);

/**
 * Each secret variable cdktf's `args` need that `env` lacks or holds empty (the stack's variable check would
 * refuse it in Terraform, whose words cdktf may drop as Terraform exits), with what it holds; none for other
 * commands.
 */
export function unsetSecretVariables(
  config: VmInstallConfig,
  env: NodeJS.ProcessEnv,
  args: readonly string[],
  installers: readonly CatalogEntry[] = INSTALLERS,
): UnsetSecret[] {
  const command = args.find((a) => !a.startsWith("-"));
  if (!command || !APPLYING.has(command)) return [];
  // The local target's runner reads the secrets from this environment (--secret-env): only TF_VAR_ counts there.
  const given = config.jobTarget === "local" ? new Set<string>() : cdktfVarArgs(args);
  if (given === "var-file") return [];
  const holds = new Map<string, string[]>();
  for (const vm of config.vms)
    for (const def of installers) {
      if (!vm.installers[def.key]?.enabled) continue;
      for (const [field, name] of Object.entries(secretVariableNames(vm, def)))
        holds.set(name, [...(holds.get(name) ?? []), `${def.handler}'s ${field} on vms[${vm.name}]`]);
    }
  return [...holds]
    .filter(([name]) => !env[`TF_VAR_${name}`] && !given.has(name))
    .map(([name, what]) => ({
      variable: `TF_VAR_${name}`,
      holds: what,
      ...(env[`TF_VAR_${name}`] === "" ? { empty: true } : {}),
    }));
}

/** A secret variable a command needs: its name, what it holds, and whether it is set but empty. */
export interface UnsetSecret {
  variable: string;
  holds: string[];
  empty?: boolean;
}

/**
 * The variables cdktf's `--var name=value` (or `--var=name=value`) sets: Terraform takes those as it takes
 * TF_VAR_, and sless jobs get them through Terraform. A `--var-file` may set any of them, and only Terraform
 * reads it: "var-file", check nothing.
 */
function cdktfVarArgs(args: readonly string[]): Set<string> | "var-file" {
  const names = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--var-file" || a.startsWith("--var-file=")) return "var-file";
    const value = a === "--var" ? args[++i] : a.startsWith("--var=") ? a.slice("--var=".length) : undefined;
    if (value?.includes("=")) names.add(value.slice(0, value.indexOf("=")).trim());
  }
  return names;
}

/** What bin/cdktf stops with, one line per variable. */
export function unsetSecretsMessage(command: string, unset: UnsetSecret[]): string {
  const lines = unset.map(
    (u) =>
      `vm-install: cdktf ${command} needs ${u.variable} set${u.empty ? ", not empty" : ""} ` +
      `(${u.holds.join(", ")}); export ${u.variable}=...`,
  );
  const why = unset.some((u) => !u.empty)
    ? "Terraform asks for every variable of the stack, on a destroy too, and would wait for the answer"
    : "the stack refuses an empty secret";
  return [...lines, `vm-install: ${why}; nothing was run`].join("\n");
}
