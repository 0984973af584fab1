// Regenerates the TypeScript bindings in providers/generated/ from providers/schemas/*.json with
// @cdktf/provider-generator (the generator `cdktf get` uses), without Terraform or a registry: neither
// provider can be downloaded here, and sless is not public at all.
//   npm run providers              -> rewrites providers/generated/
//   npm run providers -- <outDir>  -> writes elsewhere (the drift test compares the two)

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { generateProviderBindingsFromSchema } from "@cdktf/provider-generator";
import { parseOptions } from "../lib/operator/command-options";
import { BadUsage, type CommandSpec, EXIT, runCommand } from "../lib/operator/exit-codes";

const SCHEMAS_DIR = path.join(__dirname, "schemas");
export const GENERATED_DIR = path.join(__dirname, "generated");

/** Writes one folder per schema file (nubes/, sless/) under `outDir`, replacing what was there. */
export async function generateBindings(outDir: string): Promise<string[]> {
  const names = fs
    .readdirSync(SCHEMAS_DIR)
    .filter((f) => f.endsWith(".json"))
    .sort();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "vm-install-providers-"));
  try {
    for (const file of names) {
      const schema = JSON.parse(fs.readFileSync(path.join(SCHEMAS_DIR, file), "utf8"));
      await generateProviderBindingsFromSchema(work, schema);
    }
    // The generator nests everything under providers/<name>/; keep one level.
    fs.rmSync(outDir, { recursive: true, force: true });
    fs.mkdirSync(outDir, { recursive: true });
    const generated = fs.readdirSync(path.join(work, "providers")).sort();
    for (const name of generated) {
      fs.cpSync(path.join(work, "providers", name), path.join(outDir, name), { recursive: true });
    }
    return generated;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

const COMMAND: CommandSpec = {
  name: "providers",
  usage: "usage: npm run providers [-- <outDir>]",
  helpText:
    "usage: npm run providers [-- <outDir>]\n" +
    "  regenerates the bindings from providers/schemas/ into outDir (default providers/generated/)",
};

async function main(argv: string[]): Promise<number> {
  const [given] = parseOptions({}, argv, 1).positionals;
  // outDir is emptied first: an option mistaken for it (after "--") must not be.
  if (given?.startsWith("-")) throw new BadUsage(`unexpected ${given}`);
  const outDir = path.resolve(given ?? GENERATED_DIR);
  try {
    const names = await generateBindings(outDir);
    console.log(`providers: generated ${names.join(", ")} into ${path.relative(process.cwd(), outDir) || "."}`);
    return EXIT.ok;
  } catch (err) {
    console.error(`providers: generation failed: ${err instanceof Error ? err.message : err}`);
    return EXIT.error;
  }
}

// At once: the generator's module leaves work behind that would print after a usage error.
if (require.main === module) runCommand(COMMAND, process.argv.slice(2), main, { exit: true });
