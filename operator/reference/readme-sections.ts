// The README's generated sections, each between two markers: `npm run docs` rewrites what lies between
// them, and __tests__/reference.test.ts fails when the committed text differs.
import { type CatalogEntry, INSTALLERS } from "../../construct/installers/catalog";
import { exitCodesReference } from "../exit-codes";
import { configurationReference } from "./configuration-reference";
import { installersReference } from "./settings-reference";
import { vmFactsReference } from "./vm-facts-reference";

export interface ReadmeSection {
  /** The marker's name: `<!-- generated:NAME (npm run docs) -->` ... `<!-- /generated:NAME -->`. */
  readonly name: string;
  /** Where it goes, for the error when the markers are missing. */
  readonly where: string;
  readonly generate: (catalog: readonly CatalogEntry[]) => string;
}

export const README_SECTIONS: readonly ReadmeSection[] = [
  { name: "installers", where: "the installer tables", generate: installersReference },
  { name: "configuration", where: "the Configuration table", generate: configurationReference },
  { name: "exit-codes", where: "the Exit codes table", generate: exitCodesReference },
  { name: "vm-facts", where: "the table of what the installers read from the VM", generate: vmFactsReference },
];

/** `readme` with every generated section put in; throws when a section's markers are missing. */
export function withSections(readme: string, catalog: readonly CatalogEntry[] = INSTALLERS): string {
  return README_SECTIONS.reduce((text, section) => {
    const begin = `<!-- generated:${section.name} (npm run docs) -->`;
    const end = `<!-- /generated:${section.name} -->`;
    const start = text.indexOf(begin);
    const stop = text.indexOf(end);
    if (start < 0 || stop < start)
      throw new Error(
        `README.md has no "${begin}" ... "${end}" section; put the two markers where ${section.where} go`,
      );
    return `${text.slice(0, start + begin.length)}\n${section.generate(catalog)}\n${text.slice(stop)}`;
  }, readme);
}
