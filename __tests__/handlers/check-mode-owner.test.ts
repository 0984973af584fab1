// Only the kit knows check mode (installer-model.ts): an installer that branched on it would make a
// check's would_change a second decision beside the run's. The compiler resolves every `check` in
// handlers/ to its declaration; one declared by the kit (the event's key, the look-only Apt's option, a
// context or run field) and read outside the kit fails. exec.ts's RunOptions.check (fail on a non-zero
// exit) is another word and passes.
import * as fs from "node:fs";
import * as path from "node:path";
import * as ts from "typescript";

const ROOT = path.join(__dirname, "..", "..");
const HANDLERS = path.join(ROOT, "handlers");
/** The kit: it decides check mode (handler-kit, installer-model, installer-result, check-mode), declares the
 * event's key (handler-input), and gives inspect and a check their look-only Apt (apt, dpkg-repair-run). */
const KIT = [
  "handler-kit.ts",
  "installer-model.ts",
  "installer-result.ts",
  "check-mode.ts",
  "handler-input.ts",
  "apt.ts",
  "dpkg-repair-run.ts",
].map((f) => path.join(HANDLERS, "common", f));

function handlerFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? handlerFiles(p) : e.name.endsWith(".ts") ? [p] : [];
  });
}

/** Each `check` outside the kit that names a declaration of the kit's: "file:line". */
function checkReads(files: string[], extra: Record<string, string> = {}): string[] {
  const options: ts.CompilerOptions = { strict: true, noEmit: true, types: ["node"], skipLibCheck: true };
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  host.readFile = (f) => extra[f] ?? read(f);
  const exists = host.fileExists.bind(host);
  host.fileExists = (f) => f in extra || exists(f);
  const program = ts.createProgram([...files, ...Object.keys(extra)], options, host);
  const checker = program.getTypeChecker();
  const found: string[] = [];
  for (const source of program.getSourceFiles()) {
    const file = path.normalize(source.fileName);
    if (!file.startsWith(HANDLERS) || KIT.includes(file)) continue;
    const visit = (node: ts.Node): void => {
      if (ts.isIdentifier(node) && node.text === "check") {
        const symbol = checker.getSymbolAtLocation(node);
        const declared = symbol?.declarations?.map((d) => path.normalize(d.getSourceFile().fileName)) ?? [];
        // A destructured `{ check }` binds a local: its property is the object type's.
        const property = ts.isBindingElement(node.parent)
          ? checker.getTypeAtLocation(node.parent.parent).getProperty("check")
          : undefined;
        const also = property?.declarations?.map((d) => path.normalize(d.getSourceFile().fileName)) ?? [];
        if ([...declared, ...also].some((f) => KIT.includes(f))) {
          const { line } = source.getLineAndCharacterOfPosition(node.getStart());
          found.push(`${path.relative(ROOT, file)}:${line + 1}`);
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

describe("check mode is the kit's alone", () => {
  const files = handlerFiles(HANDLERS);

  test("no file under handlers/ outside the kit reads a `check` the kit declares", () => {
    expect(checkReads(files)).toEqual([]);
  }, 60_000);

  test("the finder sees such a read: the event's key, a destructured one, the look-only Apt's option", () => {
    const probe = path.join(HANDLERS, "install-packages", "check-probe.ts");
    const text = [
      'import type { CommonEvent } from "../common/handler-input";',
      'import type { Apt } from "../common/apt";',
      "export const a = (e: CommonEvent) => e.check;",
      "export const b = ({ check }: CommonEvent) => check;",
      "export const c = (apt: Apt) => (apt as unknown as { opts: ConstructorParameters<typeof Apt>[2] }).opts.check;",
      "",
    ].join("\n");
    const seen = checkReads(files, { [probe]: text });
    expect(seen).toEqual([
      "handlers/install-packages/check-probe.ts:3",
      "handlers/install-packages/check-probe.ts:4",
      "handlers/install-packages/check-probe.ts:5",
    ]);
  }, 60_000);
});
