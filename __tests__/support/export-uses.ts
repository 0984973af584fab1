// Which files use each export of the project, by the compiler's own symbol resolution rather than by
// name: an import (named, renamed, namespace, `typeof import`) is followed through every re-export to the
// declaration it names, so a symbol reached through a barrel or under another name still counts as used.
// And which types the declarations of the used ones name: their callers name those too (publicTypes).
// __tests__/unused-exports.test.ts reads both over one program of every file.
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

/** A type the declaration of a public export names, directly or through another such type's. */
export interface SurfaceType {
  /** Project-relative, `/`-separated: where it is declared. */
  file: string;
  symbol: string;
}

/** The symbol each ExportUse stands for, for publicTypes. */
const declared = new WeakMap<ExportUse, ts.Symbol>();

/**
 * A program of `roots` in which every file under node_modules is empty and the default lib is left out:
 * only the project's own symbols are looked up, and reading the dependencies' types (cdktf's alone are
 * megabytes) would take longer than all the rest. JSDoc is not parsed either: no type here is written in it.
 * Nor is the code of a file that only imports (most tests; 30% of the text): it uses what its imports name.
 */
export function ownProgram(roots: readonly string[], options: ts.CompilerOptions, base?: ts.CompilerHost): ts.Program {
  const lean: ts.CompilerOptions = { ...options, noLib: true, types: [], noEmit: true };
  const host = base ?? ts.createCompilerHost(lean);
  const leanHost: ts.CompilerHost = {
    ...host,
    jsDocParsingMode: ts.JSDocParsingMode.ParseNone,
    getSourceFile: (file, language) => {
      const text = file.includes("/node_modules/") ? "export {};" : host.readFile(file);
      if (text === undefined) return undefined;
      return ts.createSourceFile(file, importsOnly(text) ?? text, language);
    },
  };
  return ts.createProgram(roots, lean, leanHost);
}

/**
 * The imports a file opens with, when they are all it takes from the project's other files: it has no export
 * (its code might use one), no import past its opening ones, and no module of ours as an object (`import * as
 * ns`, `import("./x")`, `require("./x")`) whose members its code would name. Otherwise undefined.
 */
function importsOnly(text: string): string | undefined {
  if (/\bexport\b|\bimport\s*\*\s*as\s+\w+\s+from\s*["']\.|\b(?:import|require)\s*\(\s*["']\./.test(text))
    return undefined;
  const head = /^(?:\s+|\/\/[^\n]*|\/\*[\s\S]*?\*\/|import\b[^;]*;)*/.exec(text)?.[0] ?? "";
  return /^\s*import\b/m.test(text.slice(head.length)) ? undefined : head;
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
    // Called on every node of every file: a look at its kind first, the checker only past it.
    const visit = (node: ts.Node): void => {
      if (node.kind === IDENTIFIER) {
        const id = node as ts.Identifier;
        if (!names.has(id.text)) return;
        if (isMember(id)) members.push({ id, file });
        else if (isUse(id)) mark(symbolAt(checker, id), file, isImport(id.parent));
        return;
      }
      const specifier = MODULE_OBJECTS.has(node.kind) ? moduleObjectAt(node) : undefined;
      const module = specifier && checker.getSymbolAtLocation(specifier);
      if (module) modules.add(module);
      forEachChild(node, visit);
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
      const use = { file, symbol: e.name, own, reexport, users: [...by].sort() };
      declared.set(use, e);
      return use;
    }),
  );
}

const TYPE = ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias | ts.SymbolFlags.Enum | ts.SymbolFlags.Class;

/**
 * The types (interface, alias, enum, class) of the files `inScope` accepts that the declarations of `roots`
 * (uses exportUses gave for this program) name, transitively: a parameter's or return type, a public member's,
 * a const's type, an interface's members, an alias's definition. Not what a body or a private member names.
 */
export function publicTypes(
  program: ts.Program,
  root: string,
  inScope: (file: string) => boolean,
  roots: readonly ExportUse[],
): SurfaceType[] {
  const checker = program.getTypeChecker();
  const relative = (node: ts.Node) => path.relative(root, node.getSourceFile().fileName).split(path.sep).join("/");
  const target = (s: ts.Symbol) =>
    checker.getExportSymbolOfSymbol(s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s);
  const found = new Map<ts.Symbol, SurfaceType>();
  const queue = roots.flatMap((u) => {
    const s = declared.get(u);
    return s ? [target(s)] : [];
  });
  for (let next = queue.pop(); next; next = queue.pop()) {
    for (const d of next.declarations ?? []) {
      if (d.getSourceFile().isDeclarationFile || !inScope(relative(d))) continue;
      const ids = namedIn(d).map((id) => checker.getSymbolAtLocation(id));
      for (const named of [...ids, ...inferred(checker, d)]) {
        const s = named && target(named);
        const at = s?.declarations?.[0];
        if (!s || !at || !(s.flags & TYPE) || found.has(s) || at.getSourceFile().isDeclarationFile) continue;
        if (!inScope(relative(at))) continue;
        found.set(s, { file: relative(at), symbol: s.name });
        queue.push(s);
      }
    }
  }
  return [...found.values()];
}

/**
 * The types an unannotated const holds, as far as its type names them, where it copies another value (`= x`,
 * `= x.y`, `= table[key]`). Not a call's: inferring its type arguments costs more than all the rest of this.
 */
function inferred(checker: ts.TypeChecker, d: ts.Declaration): ts.Symbol[] {
  if (!ts.isVariableDeclaration(d) || d.type || !d.initializer) return [];
  const init = d.initializer;
  const copied = ts.isIdentifier(init) || ts.isPropertyAccessExpression(init) || ts.isElementAccessExpression(init);
  const type = copied ? checker.getTypeAtLocation(d.name) : undefined;
  const names = (t: ts.Type, depth: number): ts.Symbol[] => {
    if (depth > 2) return [];
    const parts = [
      ...(t.isUnionOrIntersection() ? t.types : []),
      ...(t.aliasTypeArguments ?? []),
      ...(t.flags & ts.TypeFlags.Object && (t as ts.ObjectType).objectFlags & ts.ObjectFlags.Reference
        ? checker.getTypeArguments(t as ts.TypeReference)
        : []),
    ];
    const own = [t.aliasSymbol, t.getSymbol()].filter((s): s is ts.Symbol => s !== undefined);
    return [...own, ...parts.flatMap((p) => names(p, depth + 1))];
  };
  return type ? names(type, 0) : [];
}

/** The identifiers of the types a declaration's caller sees: its signature, its members, its definition. */
function namedIn(d: ts.Declaration): ts.Identifier[] {
  const ids: ts.Identifier[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node)) ids.push(node);
    else ts.forEachChild(node, visit);
  };
  for (const node of surfaceOf(d)) visit(node);
  return ids;
}

function surfaceOf(d: ts.Declaration): readonly ts.Node[] {
  if (ts.isInterfaceDeclaration(d)) return [...(d.typeParameters ?? []), ...(d.heritageClauses ?? []), ...d.members];
  if (ts.isTypeAliasDeclaration(d)) return [...(d.typeParameters ?? []), d.type];
  if (ts.isFunctionDeclaration(d)) return signatureOf(d);
  if (ts.isVariableDeclaration(d)) return d.type ? [d.type] : initializerSurface(d.initializer);
  if (!ts.isClassDeclaration(d)) return [];
  const members = d.members.filter((m) => !(m.name && ts.isPrivateIdentifier(m.name)) && !isPrivate(m));
  return [...(d.typeParameters ?? []), ...(d.heritageClauses ?? []), ...members.flatMap(memberSurface)];
}

/** What a class member shows: a method's or accessor's signature, a property's declared type. */
function memberSurface(m: ts.ClassElement): readonly ts.Node[] {
  if (ts.isPropertyDeclaration(m)) return m.type ? [m.type] : initializerSurface(m.initializer);
  if (ts.isIndexSignatureDeclaration(m)) return [m];
  return ts.isFunctionLike(m) ? signatureOf(m) : [];
}

function signatureOf(f: ts.SignatureDeclaration): readonly ts.Node[] {
  const params = f.parameters.flatMap((p) => (p.type ? [p.type] : []));
  return [...(f.typeParameters ?? []), ...params, ...(f.type ? [f.type] : [])];
}

/** An initializer's type where it is written: a signature (`= (x: T) => ...`), `as T`, `new T()`, `f<T>()`. */
function initializerSurface(e: ts.Expression | undefined): readonly ts.Node[] {
  let inner = e;
  while (inner && ts.isParenthesizedExpression(inner)) inner = inner.expression;
  if (!inner) return [];
  if (ts.isArrowFunction(inner) || ts.isFunctionExpression(inner)) return signatureOf(inner);
  if ((ts.isAsExpression(inner) || ts.isTypeAssertionExpression(inner)) && !ts.isConstTypeReference(inner.type))
    return [inner.type];
  if (ts.isNewExpression(inner)) return [inner.expression, ...(inner.typeArguments ?? [])];
  return ts.isCallExpression(inner) ? (inner.typeArguments ?? []) : [];
}

function isPrivate(node: ts.Node): boolean {
  return ts.canHaveModifiers(node) && !!ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword);
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

const { forEachChild } = ts;
const IDENTIFIER = ts.SyntaxKind.Identifier;
/** The kinds moduleObjectAt looks at. */
const MODULE_OBJECTS = new Set([
  ts.SyntaxKind.NamespaceImport,
  ts.SyntaxKind.ImportEqualsDeclaration,
  ts.SyntaxKind.ImportType,
  ts.SyntaxKind.CallExpression,
]);

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
