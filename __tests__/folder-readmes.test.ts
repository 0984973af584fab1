// The folders a new installer is built from say what each of their files holds (issue 34): the README's
// `| file | what it gives |` table names every .ts file there and no file that is gone, so the map a
// newcomer reads first is the folder as it is.
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_ROOT } from "../lib/entry-points";

const FOLDERS = ["handlers/common", "lib/shared"];

/** The files each row of the README's file table names (its first cell's `name.ts`), with what it says of them. */
function listedFiles(readme: string): Array<{ files: string[]; says: string }> {
  const lines = readme.split("\n");
  const start = lines.findIndex((l) => /^\|\s*file\s*\|/.test(l));
  if (start < 0) return [];
  const rows = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    const [first = "", ...rest] = line.slice(1).split(" | ");
    rows.push({ files: [...first.matchAll(/`([\w.-]+\.ts)`/g)].map((m) => m[1]), says: rest.join(" | ") });
  }
  return rows;
}

/** What is wrong with `folder`'s README: a file it does not name, a name that is no file, a row that says nothing. */
function readmeProblems(folder: string, readme: string, files: readonly string[]): string[] {
  const rows = listedFiles(readme);
  if (rows.length === 0) return [`${folder}/README.md: no "| file | what it gives |" table`];
  const listed = rows.flatMap((r) => r.files);
  return [
    ...files.filter((f) => !listed.includes(f)).map((f) => `${folder}/${f}: not in ${folder}/README.md: add a row`),
    ...listed.filter((f) => !files.includes(f)).map((f) => `${folder}/README.md names ${f}, which is not there`),
    ...listed.filter((f, i) => listed.indexOf(f) !== i).map((f) => `${folder}/README.md names ${f} twice`),
    ...rows
      .filter((r) => r.files.length === 0 || r.says.trim().length < 10)
      .map(
        (r) =>
          `${folder}/README.md: a row ${
            r.files.length ? `for ${r.files.join(", ")} says nothing of them` : "names no file"
          }`,
      ),
  ];
}

describe("folder READMEs", () => {
  it.each(FOLDERS)("%s/README.md names every .ts file there, each with what it holds", (folder) => {
    const dir = path.join(PROJECT_ROOT, folder);
    const files = fs.readdirSync(dir).filter((f) => f.endsWith(".ts"));
    expect(files.length).toBeGreaterThan(5);
    expect(readmeProblems(folder, fs.readFileSync(path.join(dir, "README.md"), "utf8"), files)).toEqual([]);
  });

  it("finds a file left out, one listed that is gone and a row that says nothing (the checker itself)", () => {
    const readme = [
      "# x",
      "",
      "| file | what it gives |",
      "|---|---|",
      "| `a.ts`, `b.ts` | the a and b of it, in some detail |",
      "| `gone.ts` | something that was here once |",
      "| `c.ts` |  |",
      "",
      "| `d.ts` | after the table: not a row of it |",
    ].join("\n");
    expect(readmeProblems("f", readme, ["a.ts", "b.ts", "c.ts", "d.ts"])).toEqual([
      "f/d.ts: not in f/README.md: add a row",
      "f/README.md names gone.ts, which is not there",
      "f/README.md: a row for c.ts says nothing of them",
    ]);
    expect(readmeProblems("f", "# no table\n", ["a.ts"])).toEqual(['f/README.md: no "| file | what it gives |" table']);
  });
});
