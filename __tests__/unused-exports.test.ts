// Every export is imported by another file (issue 34): one nothing imports is dead code, or an internal that
// looks like API. Tests use __tests__/ and the rigs they drive (dev/sandbox/, dev/twin/, dev/demo/), product code only where
// its own file uses it too: what only tests reach runs nowhere; a re-export only tests import is a detour. A type
// a used export's declaration names is used, transitively: a caller names what it passes or gets back (a props
// type). The checker finds those, not declaration emit, which inlines a private type without error. bin/ is no
// exception: only what runs without an import (a handler's install) and ALLOWED's few, with why, stay unimported.
import * as fs from "node:fs";
import * as path from "node:path";
import * as ts from "typescript";
import { PROJECT_ROOT } from "../lib/entry-points";
import { type ExportUse, exportUses, ownProgram, publicTypes } from "./support/export-uses";

interface Allowed {
  /** Project-relative; `*` stands for one folder name. */
  file: string;
  symbol: string;
  why: string;
}

const ALLOWED: readonly Allowed[] = [
  {
    file: "handlers/*/handler.ts",
    symbol: "install",
    why: "the job's entry point: lib/jobs/bootstrap.js calls the bundled handler.js's install",
  },
  {
    file: "__tests__/fixtures/installers/install-hello/handler.ts",
    symbol: "install",
    why: "the fixture installer's entry point, as a real handler's (adding-an-installer.test.ts runs its bundle)",
  },
  {
    file: "__tests__/fixtures/installers/install-hello/handler.ts",
    symbol: "handler",
    why: "docs/adding-an-installer.md tells every handler.ts to export it, and this fixture follows those steps",
  },
  {
    file: "lib/construct/bundling/bundle.ts",
    symbol: "esbuildRunCount",
    why: "the only way bundle.test.ts can see that a synth reuses a handler's bundle instead of building it again",
  },
  {
    file: "dev/sandbox/index.ts",
    symbol: "pruneSandboxes",
    why: "dev/sandbox/README.md offers it to the code that starts sandboxes, to remove their leftovers",
  },
];

const TESTS = "__tests__/";
/** Folders whose users are tests: the test rigs, and the demo whose deploy the end-to-end tests share. */
const RIGS = ["dev/sandbox/", "dev/twin/", "dev/demo/"];
const GENERATED = /(^|\/)generated\//;

/** What to do about an export, or undefined while it is used. */
function advice(u: ExportUse): string | undefined {
  const tests = u.users.filter((f) => f.startsWith(TESTS));
  if (u.users.length > tests.length) return undefined;
  const testsServe = u.file.startsWith(TESTS) || RIGS.some((r) => u.file.startsWith(r));
  if (tests.length > 0 && (testsServe || (u.own && !u.reexport))) return undefined;
  if (tests.length > 0 && u.reexport) return `only tests import this re-export (${tests[0]}): import it where declared`;
  if (tests.length > 0) return `only tests use it (${tests[0]}): it runs nowhere; delete it or move it into its test`;
  return u.own ? "only its own file uses it: drop `export`" : "nothing uses it: delete it";
}

const glob = (pattern: string) => new RegExp(`^${pattern.replace(/[.]/g, "\\.").replace(/\*/g, "[^/]+")}$`);
const allowedBy = (u: ExportUse) => ALLOWED.find((a) => a.symbol === u.symbol && glob(a.file).test(u.file));

/** The files tsconfig.json type-checks, and dev/twin/, which `npm run twin` runs though tsconfig does not name it. */
function projectProgram(): ts.Program {
  const config = ts.getParsedCommandLineOfConfigFile(
    path.join(PROJECT_ROOT, "tsconfig.json"),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(`tsconfig.json: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
      },
    },
  );
  if (!config) throw new Error("tsconfig.json could not be read");
  const twin = fs
    .readdirSync(path.join(PROJECT_ROOT, "dev", "twin"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => path.join(PROJECT_ROOT, "dev", "twin", f));
  return ownProgram([...config.fileNames, ...twin], config.options);
}

/** A program of in-memory files under /virtual, for the checker's own cases. */
function virtualProgram(files: Record<string, string>): ts.Program {
  const options: ts.CompilerOptions = {
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
  };
  const host: ts.CompilerHost = {
    ...ts.createCompilerHost(options),
    getCurrentDirectory: () => "/virtual",
    fileExists: (f) => f in files,
    readFile: (f) => files[f],
    directoryExists: (d) => Object.keys(files).some((f) => f.startsWith(`${d}/`)),
    realpath: (f) => f,
  };
  return ownProgram(Object.keys(files), options, host);
}

interface Verdict {
  u: ExportUse;
  /** What to do about it, or undefined while it is used. */
  why: string | undefined;
}

/** Each export's verdict: a type the declaration of a used or ALLOWED export names is used, by its callers. */
function verdicts(program: ts.Program, root: string, inScope: (file: string) => boolean): Verdict[] {
  const uses = exportUses(program, root, inScope);
  const used = uses.filter((u) => !advice(u) || allowedBy(u));
  const surface = publicTypes(program, root, inScope, used);
  const named = new Set(surface.map((t) => `${t.file}: ${t.symbol}`));
  return uses.map((u) => ({ u, why: named.has(`${u.file}: ${u.symbol}`) ? undefined : advice(u) }));
}

let uses: Verdict[];

beforeAll(() => {
  const inScope = (f: string) => !GENERATED.test(f) && !f.startsWith("node_modules/");
  uses = verdicts(projectProgram(), PROJECT_ROOT, inScope);
});

describe("unused exports", () => {
  it("reads the uses it checks (a resolver that found none would flag everything, or nothing)", () => {
    const root = uses.find(({ u }) => u.file === "lib/entry-points.ts" && u.symbol === "PROJECT_ROOT");
    expect(root?.u.users.length).toBeGreaterThan(20);
    expect(uses.filter(({ u }) => u.file.startsWith("handlers/")).length).toBeGreaterThan(200);
  });

  it("has no export that nothing imports, but those ALLOWED", () => {
    const unused = uses
      .filter(({ u, why }) => why !== undefined && !allowedBy(u))
      .map(({ u, why }) => `  ${u.file}: ${u.symbol} (${why})`);
    if (unused.length > 0)
      throw new Error(
        `${unused.length} export(s) that nothing imports: remove the export or the symbol, or add it to ALLOWED ` +
          `in __tests__/unused-exports.test.ts with a reason\n${unused.join("\n")}`,
      );
  });

  it("allows only exports that need it (an entry that allows nothing is stale: remove it)", () => {
    const stale = ALLOWED.filter((a) => !uses.some(({ u, why }) => allowedBy(u) === a && why !== undefined));
    expect(stale.map((a) => `${a.file}: ${a.symbol}`)).toEqual([]);
  });

  it("follows imports through renames, re-exports, namespaces and typeof import (the checker itself)", () => {
    const program = virtualProgram({
      "/virtual/lib.ts": [
        "export function used() {}",
        "export function ownOnly() {}",
        "ownOnly();",
        "export function dead() {}",
        "export interface Shape { a?: number }",
        "export const viaNamespace = 1, viaTypeof = 2, renamed = 3, relayed = 4;",
      ].join("\n"),
      "/virtual/relay.ts": 'import { relayed, used as u } from "./lib";\nu();\nexport { relayed, u };',
      "/virtual/barrel.ts":
        'export { used, renamed as alias } from "./lib";\nexport { dead as unreached } from "./lib";',
      "/virtual/app.ts": [
        'import { alias, used } from "./barrel";',
        'import * as lib from "./lib";',
        'import type { Shape } from "./lib";',
        'const { viaTypeof } = require("./lib") as typeof import("./lib");',
        "export const app: Shape = { a: lib.viaNamespace + viaTypeof + alias };",
        "used();",
      ].join("\n"),
    });
    const seen = exportUses(program, "/virtual", () => true).map(
      (u) => `${u.file}: ${u.symbol} ${advice(u) ?? "used"}`,
    );
    expect(seen.sort()).toEqual([
      "app.ts: app nothing uses it: delete it",
      "barrel.ts: alias used",
      "barrel.ts: unreached nothing uses it: delete it",
      "barrel.ts: used used",
      "lib.ts: Shape used",
      "lib.ts: dead nothing uses it: delete it",
      "lib.ts: ownOnly only its own file uses it: drop `export`",
      "lib.ts: relayed used",
      "lib.ts: renamed used",
      "lib.ts: used used",
      "lib.ts: viaNamespace used",
      "lib.ts: viaTypeof used",
      "relay.ts: relayed nothing uses it: delete it",
      "relay.ts: u only its own file uses it: drop `export`",
    ]);
  });

  it("counts the types a used export's declaration names as used, through members and aliases", () => {
    const program = virtualProgram({
      "/virtual/job.ts": [
        "export interface JobProps { retry: Retry; kind: Kind }",
        "export type Retry = { times: number; wait: Wait };",
        "export interface Wait { sec: number }",
        "export enum Kind { Once }",
        "export interface Peeked { key: string }",
        "export interface Spare { n: number }",
        "export interface Held { n: number }",
        "export class Job { constructor(props: JobProps) {} private peek(p: Peeked) { return p; } }",
        "export function spare(s: Spare) { return s; }",
        "const table: { [name: string]: Held } = {};",
        "export const held = table.a;",
      ].join("\n"),
      // Files that only import, read up to their imports: one whose code goes on past an import, all of it.
      "/virtual/app.ts": 'import { Job } from "./job";\nnew Job({} as never);',
      "/virtual/late.ts": 'import { Job } from "./job";\nJob;\nimport { held } from "./job";\nheld;',
    });
    const seen = verdicts(program, "/virtual", () => true)
      .filter(({ u }) => u.file === "job.ts")
      .map(({ u, why }) => `${u.symbol} ${why ?? "used"}`);
    expect(seen.sort()).toEqual([
      "Held used",
      "Job used",
      "JobProps used",
      "Kind used",
      "Peeked only its own file uses it: drop `export`",
      "Retry used",
      "Spare only its own file uses it: drop `export`",
      "Wait used",
      "held used",
      "spare nothing uses it: delete it",
    ]);
  });

  it("counts tests as users of product code only for an internal its own file uses", () => {
    const use = (file: string, own: boolean, users: string[], reexport = false) =>
      advice({ file, symbol: "s", own, reexport, users });
    expect(use("handlers/x.ts", true, ["__tests__/x.test.ts"])).toBeUndefined();
    expect(use("handlers/x.ts", false, ["__tests__/x.test.ts"])).toMatch(/^only tests use it/);
    expect(use("handlers/x.ts", true, ["__tests__/x.test.ts"], true)).toMatch(/^only tests import this re-export/);
    expect(use("dev/sandbox/x.ts", false, ["__tests__/e2e/x.test.ts"])).toBeUndefined();
    expect(use("__tests__/support/x.ts", false, ["__tests__/x.test.ts"])).toBeUndefined();
    expect(use("handlers/x.ts", false, ["lib/construct/y.ts"])).toBeUndefined();
  });
});
