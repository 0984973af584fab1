// Run by bin/cdktf before cdktf: the files Terraform reads at plan time that synth must not write into
// cdktf.out. The local target's secret triggers (construct/jobs/secret-trigger.ts) from the TF_VAR_ values in
// this environment, which cdktf does not pass to synth; the host key of each Nubes VM that has none yet
// (construct/delivered-host-keys.ts). A configuration that does not parse is left to synth to report, with
// every other problem.

import * as fs from "node:fs";
import { CONTEXT_KEY, parseConfig } from "../construct/config/parse";
import { writeHostKeys } from "../construct/delivered-host-keys";
import { writeSecretTriggers } from "../construct/jobs/secret-trigger";

let config: ReturnType<typeof parseConfig> | undefined;
try {
  config = parseConfig(JSON.parse(fs.readFileSync("cdktf.json", "utf8")).context?.[CONTEXT_KEY]);
} catch {
  config = undefined;
}
if (config) {
  writeSecretTriggers(process.cwd(), config, process.env);
  writeHostKeys(process.cwd(), config);
}
