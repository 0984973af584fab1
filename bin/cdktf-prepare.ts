// Run once by bin/cdktf before cdktf (one Node start, not four: about 0.5 s of every command). It writes the
// files Terraform reads at plan time that synth must not write into cdktf.out: Nubes VMs' host keys, the
// stack's PostgreSQL CA, the local target's secret triggers from the TF_VAR_ values cdktf does not pass to
// synth; stops a deploy or destroy that lacks an installer's secret variable (unset-secrets.ts); and prints
// NUL-ended records for bin/cdktf (PrepareRecord). A configuration that does not parse is left to synth to
// report, with every other problem; cdktf's arguments then go as given.
import * as fs from "node:fs";
import { CONTEXT_KEY, parseConfig } from "../lib/construct/config/parse";
import { writeHostKeys } from "../lib/construct/delivered-host-keys";
import { unsetSecretsMessage, unsetSecretVariables } from "../lib/construct/installers/unset-secrets";
import { writeSecretTriggers } from "../lib/construct/jobs/secret-trigger";
import { writeStackCa } from "../lib/construct/postgres-ca";
import { withTerraformParallelism } from "../lib/construct/terraform-parallelism";

/**
 * One record: its kind, then its fields, each ended by NUL. "out" <cdktf's output folder>; "arg" <one of
 * cdktf's arguments, with the project's settings that belong there (lib/construct/terraform-parallelism.ts)>;
 * "ok" last, so that bin/cdktf tells a finished run from one that failed half-way.
 */
type PrepareRecord = ["out", string] | ["arg", string] | ["ok"];

function readProjectJson(): { output?: unknown; context?: Record<string, unknown> } {
  try {
    return JSON.parse(fs.readFileSync("cdktf.json", "utf8"));
  } catch {
    return {};
  }
}

async function prepare(args: string[]): Promise<PrepareRecord[]> {
  const json = readProjectJson();
  const records: PrepareRecord[] = [["out", typeof json.output === "string" ? json.output : "cdktf.out"]];
  let config: ReturnType<typeof parseConfig> | undefined;
  try {
    config = parseConfig(json.context?.[CONTEXT_KEY]);
  } catch {
    config = undefined;
  }
  if (config) {
    writeHostKeys(process.cwd(), config);
    await writeStackCa(process.cwd(), config);
    writeSecretTriggers(process.cwd(), config, process.env);
    const unset = unsetSecretVariables(config, process.env, args);
    if (unset.length > 0) throw new Unset(unsetSecretsMessage(args.find((a) => !a.startsWith("-")) ?? "", unset));
  }
  const cdktfArgs = config ? withTerraformParallelism(args, config.parallelism) : args;
  return [...records, ...cdktfArgs.map((a): PrepareRecord => ["arg", a]), ["ok"]];
}

/** A stop whose message is whole as it is (one line per variable, each with its own prefix). */
class Unset extends Error {}

prepare(process.argv.slice(2))
  .then((records) => process.stdout.write(records.map((r) => r.map((f) => `${f}\0`).join("")).join("")))
  .catch((err) => {
    console.error(
      err instanceof Unset ? err.message : `vm-install: ${err instanceof Error ? err.message : String(err)}`,
    );
    process.exit(1);
  });
