// `npm run docs`: writes what is generated from the declarations (lib/operator/reference): the tables of the
// docs/ pages (between generated:* markers; an installer's page is started when missing) and
// vm-install.schema.json, the JSON Schema cdktf.json points its editor at. `--check` writes nothing and fails
// (error) on a difference.
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_ROOT } from "../lib/entry-points";
import { optionsSynopsis, parseOptions } from "../lib/operator/command-options";
import { type CommandSpec, EXIT, runCommand } from "../lib/operator/exit-codes";
import { docPages, newPage, withSections } from "../lib/operator/reference/doc-sections";
import { cdktfJsonSchema } from "../lib/operator/reference/settings-reference";

export const SCHEMA_FILE = "vm-install.schema.json";
const OPTIONS = { check: { type: "boolean" } } as const;
const COMMAND: CommandSpec = { name: "docs", usage: `usage: npm run docs [-- ${optionsSynopsis(OPTIONS)}]` };

/** `text`, the page `page` (relative to the project), with its generated sections put in. */
export function withReference(page: string, text: string): string {
  return withSections(page, text || newPage(page));
}

export function schemaText(): string {
  return `${JSON.stringify(cdktfJsonSchema(), null, 2)}\n`;
}

function main(argv: string[]): number {
  const check = parseOptions(OPTIONS, argv).values.check === true;
  const files: [string, (old: string) => string][] = [
    ...docPages().map((page): [string, (old: string) => string] => [
      path.join(PROJECT_ROOT, page),
      (old) => withReference(page, old),
    ]),
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
