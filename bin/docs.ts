// `npm run docs`: writes what is generated from the settings' declarations (operator/reference): the
// README's installer and Configuration tables (between generated:* markers) and vm-install.schema.json,
// the JSON Schema cdktf.json points its editor at. `--check` writes nothing and fails (error) on a difference.
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_ROOT } from "../construct/entry-points";
import { BadUsage, type CommandSpec, EXIT, runCommand } from "../operator/exit-codes";
import { withSections } from "../operator/reference/readme-sections";
import { cdktfJsonSchema } from "../operator/reference/settings-reference";

export const SCHEMA_FILE = "vm-install.schema.json";
export const COMMAND: CommandSpec = { name: "docs", usage: "usage: npm run docs [-- --check]" };

/** `readme` with its generated sections (installer tables, Configuration table) put in. */
export function withReference(readme: string): string {
  return withSections(readme);
}

export function schemaText(): string {
  return `${JSON.stringify(cdktfJsonSchema(), null, 2)}\n`;
}

function main(argv: string[]): number {
  const unknown = argv.filter((a) => a !== "--check");
  if (unknown.length) throw new BadUsage(`unexpected ${unknown.join(" ")}`);
  const check = argv.includes("--check");
  const files: [string, (old: string) => string][] = [
    [path.join(PROJECT_ROOT, "README.md"), withReference],
    [path.join(PROJECT_ROOT, SCHEMA_FILE), () => schemaText()],
  ];
  let stale = 0;
  for (const [file, generate] of files) {
    const old = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
    const next = generate(old);
    if (next === old) continue;
    stale++;
    if (check)
      process.stderr.write(
        `docs: ${path.relative(PROJECT_ROOT, file)} is not what the definitions generate; run npm run docs\n`,
      );
    else fs.writeFileSync(file, next);
  }
  if (!check) process.stdout.write(`docs: ${stale ? `updated ${stale} file(s)` : "up to date"}\n`);
  return check && stale ? EXIT.error : EXIT.ok;
}

if (require.main === module) runCommand(COMMAND, process.argv.slice(2), main);
