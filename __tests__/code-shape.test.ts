// The size limits the code is kept to, so a handler reads as phases and a file as one concern: no
// function in handlers/, shared/, construct/, operator/ or twin/ over 60 lines, no file there over 350 (generated provider
// bindings aside). Measured with TypeScript's own parser: a function is any declaration, method,
// arrow or function expression, from its first line to its last.
import * as fs from "node:fs";
import * as path from "node:path";
import * as ts from "typescript";
import { PROJECT_ROOT } from "../construct/entry-points";

const MAX_FUNCTION_LINES = 60;
const MAX_FILE_LINES = 350;
const FOLDERS = ["handlers", "shared", "construct", "operator", "twin"];

function sourceFiles(): string[] {
  return FOLDERS.flatMap((folder) =>
    fs
      .readdirSync(path.join(PROJECT_ROOT, folder), { recursive: true, encoding: "utf8" })
      .filter((f) => /\.(ts|js)$/.test(f))
      .map((f) => path.join(folder, f)),
  ).sort();
}

function longFunctions(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      const name = node.name && ts.isIdentifier(node.name) ? node.name.text : `(anonymous at line ${first + 1})`;
      if (lines > MAX_FUNCTION_LINES) out.push(`${file}: ${name} is ${lines} lines`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

describe("code shape", () => {
  const files = sourceFiles().map((file) => ({ file, text: fs.readFileSync(path.join(PROJECT_ROOT, file), "utf8") }));

  it("looks at the project's own code", () => {
    expect(files.map((f) => f.file)).toEqual(
      expect.arrayContaining([
        "handlers/install-postgres/handler.ts",
        "construct/config/parse.ts",
        "shared/validate.ts",
      ]),
    );
  });

  it(`has no function over ${MAX_FUNCTION_LINES} lines`, () => {
    expect(files.flatMap((f) => longFunctions(f.file, f.text))).toEqual([]);
  });

  it(`has no file over ${MAX_FILE_LINES} lines`, () => {
    const long = files
      .map((f) => ({ file: f.file, lines: f.text.split("\n").length }))
      .filter((f) => f.lines > MAX_FILE_LINES);
    expect(long.map((f) => `${f.file}: ${f.lines} lines`)).toEqual([]);
  });
});
