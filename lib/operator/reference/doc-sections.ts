// The docs' generated sections, each between two markers in its page: `npm run docs` rewrites what lies
// between them, and __tests__/reference.test.ts fails when the committed text differs.
import { type CatalogEntry, INSTALLERS } from "../../construct/installers/catalog";
import { exitCodesReference } from "../exit-codes";
import { configurationReference } from "./configuration-reference";
import { commonReference, installerReference } from "./settings-reference";
import { vmFactsReference } from "./vm-facts-reference";

interface DocSection {
  /** The marker's name: `<!-- generated:NAME (npm run docs) -->` ... `<!-- /generated:NAME -->`. */
  readonly name: string;
  /** The page it is in, relative to the project root. */
  readonly page: string;
  /** Where it goes, for the error when the markers are missing. */
  readonly where: string;
  readonly generate: () => string;
}

/** An installer's own page: its settings table and result fields. */
export const installerPage = (def: CatalogEntry): string => `docs/${def.handler}.md`;

function docSections(catalog: readonly CatalogEntry[] = INSTALLERS): DocSection[] {
  return [
    ...catalog.map((def) => ({
      name: def.handler,
      page: installerPage(def),
      where: `${def.handler}'s settings table`,
      generate: () => installerReference(def),
    })),
    {
      name: "every-installer",
      page: "docs/installers.md",
      where: "the table of what every installer takes",
      generate: commonReference,
    },
    {
      name: "configuration",
      page: "docs/configuration.md",
      where: "the Configuration table",
      generate: () => configurationReference(catalog),
    },
    { name: "exit-codes", page: "docs/exit-codes.md", where: "the Exit codes table", generate: exitCodesReference },
    {
      name: "vm-facts",
      page: "docs/vm-facts.md",
      where: "the table of what the installers read from the VM",
      generate: vmFactsReference,
    },
  ];
}

const markers = (name: string) => [`<!-- generated:${name} (npm run docs) -->`, `<!-- /generated:${name} -->`];

/** The pages the sections are in, each once. */
export function docPages(catalog: readonly CatalogEntry[] = INSTALLERS): string[] {
  return [...new Set(docSections(catalog).map((s) => s.page))];
}

/**
 * What an installer's page starts as when `npm run docs` finds none (a new installer): its title and the
 * markers; the prose around them, and a link from the README's index, are the author's.
 */
export function newPage(page: string, catalog: readonly CatalogEntry[] = INSTALLERS): string {
  const def = catalog.find((d) => installerPage(d) === page);
  if (!def) return "";
  const [begin, end] = markers(def.handler);
  return `# ${def.handler} (\`installers.${def.key}\`)\n\n${begin}\n${end}\n`;
}

/** `text` (the page `page`) with its generated sections put in; throws when a section's markers are missing. */
export function withSections(page: string, text: string, catalog: readonly CatalogEntry[] = INSTALLERS): string {
  return docSections(catalog)
    .filter((s) => s.page === page)
    .reduce((current, section) => {
      const [begin, end] = markers(section.name);
      const start = current.indexOf(begin);
      const stop = current.indexOf(end);
      if (start < 0 || stop < start)
        throw new Error(
          `${page} has no "${begin}" ... "${end}" section; put the two markers where ${section.where} go`,
        );
      return `${current.slice(0, start + begin.length)}\n${section.generate()}\n${current.slice(stop)}`;
    }, text);
}
