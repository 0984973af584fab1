// Regenerates the TypeScript bindings in providers/generated/ from providers/schemas/*.json with
// @cdktf/provider-generator (the generator `cdktf get` uses), without Terraform or a registry: neither
// provider can be downloaded here, and sless is not public at all.
//   npm run providers              -> rewrites providers/generated/
//   npm run providers -- <outDir>  -> writes elsewhere (the drift test compares the two)

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { generateProviderBindingsFromSchema } from "@cdktf/provider-generator";
import { EXIT } from "../operator/exit-codes";

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

const USAGE = "usage: npm run providers [-- <outDir>]";

if (require.main === module) {
  const args = process.argv.slice(2);
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(
      `${USAGE}\n  regenerates the bindings from providers/schemas/ into outDir (default providers/generated/)\n`,
    );
    process.exit(EXIT.ok);
  }
  // outDir is emptied first: an option mistaken for it must not be.
  if (args.length > 1 || args[0]?.startsWith("-")) {
    process.stderr.write(`providers: unexpected ${args.join(" ")}\n${USAGE}\n`);
    process.exit(EXIT.usage);
  }
  const outDir = path.resolve(args[0] ?? GENERATED_DIR);
  generateBindings(outDir).then(
    (names) =>
      console.log(`providers: generated ${names.join(", ")} into ${path.relative(process.cwd(), outDir) || "."}`),
    (err) => {
      console.error(`providers: generation failed: ${err instanceof Error ? err.message : err}`);
      process.exit(1);
    },
  );
}
