// Which files use each export of the project, by the compiler's own symbol resolution rather than by
// name: an import (named, renamed, namespace, `typeof import`) is followed through every re-export to the
// declaration it names, so a symbol reached through a barrel or under another name still counts as used.
// __tests__/unused-exports.test.ts reads it over one program of every file.
import * as path from "node:path";
import * as ts from "typescript";

export interface ExportUse {
  /** Project-relative, `/`-separated. */
  file: string;
  symbol: string;
  /** Whether the file that exports it refers to it too (for a re-export: to what it re-exports). */
  own: boolean;
  /** Exported by an `export { ... }` of a name declared elsewhere, not by its declaration. */
  reexport: boolean;
  /** The other files that refer to it (an import, a re-export's importer, `ns.symbol`), sorted. */
  users: string[];
}

/**
 * A program of `roots` in which every file under node_modules is empty and the default lib is left out:
 * only the project's own symbols are looked up, and reading the dependencies' types (cdktf's alone are
 * megabytes) would take longer than all the rest. JSDoc is not parsed either: no type here is written in it.
 */
export function ownProgram(roots: readonly string[], options: ts.CompilerOptions, base?: ts.CompilerHost): ts.Program {
  const lean: ts.CompilerOptions = { ...options, noLib: true, types: [], noEmit: true };
  const host = base ?? ts.createCompilerHost(lean);
  const getSourceFile = host.getSourceFile.bind(host);
  const leanHost: ts.CompilerHost = {
    ...host,
    jsDocParsingMode: ts.JSDocParsingMode.ParseNone,
    getSourceFile: (file, language, onError, create) =>
      file.includes("/node_modules/")
        ? ts.createSourceFile(file, "export {};", language)
        : getSourceFile(file, language, onError, create),
  };
  return ts.createProgram(roots, lean, leanHost);
}

/** Every export declared in the files `inScope` accepts (project-relative paths), with who uses it. */
export function exportUses(program: ts.Program, root: string, inScope: (file: string) => boolean): ExportUse[] {
  const checker = program.getTypeChecker();
  const relative = (sf: ts.SourceFile) => path.relative(root, sf.fileName).split(path.sep).join("/");
  const files = program
    .getSourceFiles()
    .filter((sf) => !sf.isDeclarationFile && !relative(sf).startsWith("..") && inScope(relative(sf)));
  const exported = files.map((sf) => ({ sf, exports: declaredExports(checker, sf) }));
  // Only an identifier spelled like some export can refer to one: asking the checker about the others (most
  // of them) would cost seconds and find nothing.
  const names = new Set(exported.flatMap(({ exports }) => exports.flatMap((e) => [e.name, ...localNames(e)])));
  const uses = new Map<ts.Symbol, Set<string>>();
  // Uses past the file's imports: a re-export's file uses what it re-exports only if its code names it.
  const inCode = new Map<ts.Symbol, Set<string>>();
  const mark = (symbol: ts.Symbol | undefined, file: string, importing = false) => {
    for (const s of aliasChain(checker, symbol)) {
      for (const map of importing ? [uses] : [uses, inCode]) map.set(s, (map.get(s) ?? new Set()).add(file));
    }
  };
  const members: Array<{ id: ts.Identifier; file: string }> = [];
  const modules = new Set<ts.Symbol>();
  for (const sf of files) {
    const file = relative(sf);
    const visit = (node: ts.Node): void => {
      const specifier = moduleObjectAt(node);
      const module = specifier && checker.getSymbolAtLocation(specifier);
      if (module) modules.add(module);
      if (ts.isIdentifier(node) && names.has(node.text)) {
        if (isMember(node)) members.push({ id: node, file });
        else if (isUse(node)) mark(symbolAt(checker, node), file, isImport(node.parent));
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  // `ns.a` and `const { a } = ...` name a property, which takes the type of what holds it: slow to ask for
  // every one, and only a module object (`import * as ns`, `typeof import(...)`) can hold an export.
  const memberNames = new Set(
    [...modules].flatMap((m) => (m.exports ? checker.getExportsOfModule(m).map((e) => e.name) : [])),
  );
  for (const { id, file } of members.filter((m) => memberNames.has(m.id.text))) {
    const parent = id.parent;
    if (ts.isBindingElement(parent) && ts.isObjectBindingPattern(parent.parent))
      mark(checker.getTypeAtLocation(parent.parent).getProperty(id.text), file);
    else mark(checker.getSymbolAtLocation(id), file);
  }
  return exported.flatMap(({ sf, exports }) =>
    exports.map((e) => {
      const file = relative(sf);
      const by = new Set([...(uses.get(e) ?? []), ...(uses.get(checker.getExportSymbolOfSymbol(e)) ?? [])]);
      by.delete(file);
      const own = aliasChain(checker, e).some((s) => inCode.get(s)?.has(file));
      const target = e.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(e) : e;
      const reexport = !(target.declarations ?? []).some((d) => d.getSourceFile() === sf);
      return { file, symbol: e.name, own, reexport, users: [...by].sort() };
    }),
  );
}

/** The module's exports declared in this very file (a re-export's specifier is one; `export *` is not). */
function declaredExports(checker: ts.TypeChecker, sf: ts.SourceFile): ts.Symbol[] {
  const module = checker.getSymbolAtLocation(sf);
  if (!module) return [];
  return checker.getExportsOfModule(module).filter((e) => (e.declarations ?? []).some((d) => d.getSourceFile() === sf));
}

/** What `export { a as b }` calls `b` inside its file: a use of `a` there is its own file's use. */
function localNames(e: ts.Symbol): string[] {
  return (e.declarations ?? []).flatMap((d) =>
    ts.isExportSpecifier(d) && d.propertyName && ts.isIdentifier(d.propertyName) ? [d.propertyName.text] : [],
  );
}

/** The symbol and, through imports and re-exports, every one it stands for, down to the declaration. */
function aliasChain(checker: ts.TypeChecker, symbol: ts.Symbol | undefined): ts.Symbol[] {
  const chain: ts.Symbol[] = [];
  let s = symbol;
  while (s && !chain.includes(s)) {
    chain.push(s, checker.getExportSymbolOfSymbol(s));
    s = s.flags & ts.SymbolFlags.Alias ? checker.getImmediateAliasedSymbol(s) : undefined;
  }
  return chain;
}

/** The module specifier of an expression or type that stands for a whole module. */
function moduleObjectAt(node: ts.Node): ts.Node | undefined {
  if (ts.isNamespaceImport(node)) return node.parent.parent.moduleSpecifier;
  if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference))
    return node.moduleReference.expression;
  if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) return node.argument.literal;
  if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) return node.arguments[0];
  return undefined;
}

/** A property's name where it is read: `x.id`, or `id` destructured from an object (`{ id }`, `{ id: y }`). */
function isMember(id: ts.Identifier): boolean {
  const parent = id.parent;
  if (ts.isPropertyAccessExpression(parent)) return parent.name === id;
  if (!ts.isBindingElement(parent) || !ts.isObjectBindingPattern(parent.parent)) return false;
  return parent.propertyName ? parent.propertyName === id : parent.name === id;
}

function symbolAt(checker: ts.TypeChecker, id: ts.Identifier): ts.Symbol | undefined {
  const parent = id.parent;
  return ts.isShorthandPropertyAssignment(parent) && parent.name === id
    ? checker.getShorthandAssignmentValueSymbol(parent)
    : checker.getSymbolAtLocation(id);
}

/**
 * Whether `id` refers to a symbol rather than declaring one: the name of a declaration (a function, a
 * variable, a property key) is not a use, nor is an `export { id }`, which makes the export it is looked for.
 */
function isUse(id: ts.Identifier): boolean {
  const parent = id.parent as ts.Node & { name?: ts.Node };
  if (ts.isExportSpecifier(parent)) return false;
  return parent.name !== id || ts.isShorthandPropertyAssignment(parent) || isImport(parent);
}

function isImport(node: ts.Node): boolean {
  return (
    ts.isImportSpecifier(node) ||
    ts.isImportClause(node) ||
    ts.isNamespaceImport(node) ||
    ts.isImportEqualsDeclaration(node)
  );
}
