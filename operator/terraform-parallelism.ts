// The `parallelism` setting on cdktf's command line. cdktf's own --parallelism is how many *stacks* it
// runs at once; Terraform's -parallelism (how many resources, so jobs, at once) is --terraform-parallelism,
// and cdktf passes it on only when given. bin/cdktf adds it to every deploy, destroy and diff it runs
// (npm run deploy, the demo, the benchmarks), unless the caller gave one: theirs wins.

/** The cdktf commands that run a Terraform plan or apply and so take --terraform-parallelism. */
const TAKES_PARALLELISM = new Set(["deploy", "apply", "destroy", "diff", "plan", "watch"]);

/** `args` (cdktf's, command first) with --terraform-parallelism=<parallelism> where the command takes it. */
export function withTerraformParallelism(args: readonly string[], parallelism: number): string[] {
  const command = args.find((a) => !a.startsWith("-"));
  if (!command || !TAKES_PARALLELISM.has(command)) return [...args];
  if (args.some((a) => a === "--terraform-parallelism" || a.startsWith("--terraform-parallelism="))) return [...args];
  return [...args, `--terraform-parallelism=${parallelism}`];
}
