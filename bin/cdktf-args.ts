// Run by bin/cdktf before cdktf: prints cdktf's arguments, NUL-separated, with the project's settings that
// belong on its command line added (operator/terraform-parallelism.ts). A configuration that does not parse
// leaves them as given: synth reports it, with every other problem, in cdktf's own output.
import * as fs from "node:fs";
import { CONTEXT_KEY, parseConfig } from "../construct/config/parse";
import { withTerraformParallelism } from "../operator/terraform-parallelism";

let args = process.argv.slice(2);
try {
  const config = parseConfig(JSON.parse(fs.readFileSync("cdktf.json", "utf8")).context?.[CONTEXT_KEY]);
  args = withTerraformParallelism(args, config.parallelism);
} catch {
  // As given (see above).
}
process.stdout.write(args.map((a) => `${a}\0`).join(""));
