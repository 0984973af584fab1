// Run by bin/cdktf before cdktf: the files Terraform reads at plan time that synth must not write into
// cdktf.out: each Nubes VM's host key (construct/delivered-host-keys.ts), the stack's PostgreSQL CA (then its
// TF_VAR_ variables here; --ca-env prints them NUL-separated for bin/cdktf to export), the local target's
// secret triggers from the TF_VAR_ values here, which cdktf does not pass to synth. Given cdktf's arguments
// after --, it stops a deploy or destroy lacking a secret variable. A configuration that does not parse is
// left to synth to report, with every other problem.

import * as fs from "node:fs";
import { CONTEXT_KEY, parseConfig } from "../construct/config/parse";
import { writeHostKeys } from "../construct/delivered-host-keys";
import { unsetSecretsMessage, unsetSecretVariables } from "../construct/installers/unset-secrets";
import { writeSecretTriggers } from "../construct/jobs/secret-trigger";
import { caEnvironment, writeStackCa } from "../construct/postgres-ca";

let config: ReturnType<typeof parseConfig> | undefined;
try {
  config = parseConfig(JSON.parse(fs.readFileSync("cdktf.json", "utf8")).context?.[CONTEXT_KEY]);
} catch {
  config = undefined;
}

async function main(): Promise<void> {
  if (!config) return;
  const caEnv = caEnvironment(process.cwd(), config);
  if (process.argv.includes("--ca-env")) {
    for (const [name, value] of Object.entries(caEnv)) process.stdout.write(`${name}\0${value}\0`);
    return;
  }
  writeHostKeys(process.cwd(), config);
  await writeStackCa(process.cwd(), config);
  Object.assign(process.env, caEnvironment(process.cwd(), config));
  writeSecretTriggers(process.cwd(), config, process.env);
  const cdktfArgs = process.argv.slice(process.argv.indexOf("--") + 1);
  const unset = process.argv.includes("--") ? unsetSecretVariables(config, process.env, cdktfArgs) : [];
  if (unset.length > 0) {
    console.error(unsetSecretsMessage(cdktfArgs.find((a) => !a.startsWith("-")) ?? "", unset));
    process.exit(1);
  }
}

main().catch((err) => {
  console.error(`vm-install: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
