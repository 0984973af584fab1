// The `parallelism` setting on cdktf's command line. cdktf's own --parallelism is how many *stacks* it
// runs at once; Terraform's -parallelism (how many resources, so jobs, at once) is --terraform-parallelism,
// and cdktf passes it on only when given. bin/cdktf adds it to every deploy, destroy and diff it runs
// (npm run deploy, the demo, the benchmarks), unless the caller gave one: theirs wins. A plain `npx cdktf`
// run is checked at synth instead: with sless jobs only Terraform's -parallelism holds the setting.
import type { VmInstallConfig } from "./config/types";

/** The cdktf commands that run a Terraform plan or apply and so take --terraform-parallelism. */
const TAKES_PARALLELISM = new Set(["deploy", "apply", "destroy", "diff", "plan", "watch"]);
/** The ones among them that run jobs (a diff only plans). */
const RUNS_JOBS = new Set(["deploy", "apply", "destroy", "watch"]);
/** Terraform's -parallelism when none is given. */
const TERRAFORM_DEFAULT_PARALLELISM = 10;

const givesParallelism = (args: readonly string[]) =>
  args.some((a) => a === "--terraform-parallelism" || a.startsWith("--terraform-parallelism="));

/** `args` (cdktf's, command first) with --terraform-parallelism=<parallelism> where the command takes it. */
export function withTerraformParallelism(args: readonly string[], parallelism: number): string[] {
  const command = args.find((a) => !a.startsWith("-"));
  if (!command || !TAKES_PARALLELISM.has(command)) return [...args];
  if (givesParallelism(args)) return [...args];
  return [...args, `--terraform-parallelism=${parallelism}`];
}

/**
 * Whether the Terraform this cdktf run starts holds `parallelism`: "held" (the local target's runners hold it
 * themselves, it is Terraform's default, the command runs no job, or the caller gave -parallelism on cdktf's
 * command line or in TF_CLI_ARGS*), "not-held", or "unknown" (cdktf's command line could not be read).
 * `cdktfArgs` is cdktf's whole command line (node, its script, then the command).
 */
export function parallelismHeld(
  config: Pick<VmInstallConfig, "jobTarget" | "parallelism">,
  cdktfArgs: readonly string[] | undefined,
  cdktfEnv: Readonly<Record<string, string | undefined>>,
): "held" | "not-held" | "unknown" {
  if (config.jobTarget !== "sless" || config.parallelism === TERRAFORM_DEFAULT_PARALLELISM) return "held";
  const tfArgs = Object.entries(cdktfEnv).filter(([name]) => name === "TF_CLI_ARGS" || name.startsWith("TF_CLI_ARGS_"));
  if (tfArgs.some(([, value]) => /(^|\s)--?parallelism(=|\s)/.test(value ?? ""))) return "held";
  if (!cdktfArgs) return "unknown";
  const args = cdktfArgs.slice(1);
  const command = cdktfCommand(args);
  if (!command || !RUNS_JOBS.has(command) || givesParallelism(args)) return "held";
  return "not-held";
}

/**
 * cdktf's command in `args` ([node's options] <cdktf's script> [cdktf's options] <command> ...): node's options
 * may take values (`--require x.js`), so the script is the first argument named cdktf, else the first that
 * is no option; after it, the one global option that takes a value (`--log-level debug`) is skipped.
 */
function cdktfCommand(args: readonly string[]): string | undefined {
  const named = args.findIndex((a) => /(^|\/)cdktf(\.js)?$/.test(a));
  const script = named >= 0 ? named : args.findIndex((a) => !a.startsWith("-"));
  if (script < 0) return undefined;
  for (let i = script + 1; i < args.length; i++) {
    if (args[i] === "--log-level") i++;
    else if (!args[i].startsWith("-")) return args[i];
  }
  return undefined;
}

/** The one line a plan stops with when the setting would not hold. */
export function unheldParallelismMessage(parallelism: number): string {
  return (
    `vm-install: cdktf.json's parallelism is ${parallelism}, but this cdktf was run without ` +
    `--terraform-parallelism, so Terraform would run up to ${TERRAFORM_DEFAULT_PARALLELISM} jobs at once: ` +
    `pass --terraform-parallelism=${parallelism}, or run \`npm run deploy\` (or \`npm run destroy\`), which adds it.`
  );
}

/** The synth warning when cdktf's command line could not be read. */
export function unknownParallelismMessage(parallelism: number): string {
  return (
    `cdktf.json's parallelism is ${parallelism}, which holds for sless jobs only when cdktf is given ` +
    `--terraform-parallelism=${parallelism} (npm run deploy adds it); cdktf's command line could not be read here`
  );
}
