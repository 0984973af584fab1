// The layout docs/architecture.md promises: the directions of DIRECTIONS (synth code imports no operator tool,
// product code no rig, rigs no test); no module imports itself through others (a cycle makes load order decide
// what a file sees); the project's own programs are named in one place; the top level is the design card's; and
// the Architecture listing names every folder, so a newcomer's map of the tree is the tree.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as ts from "typescript";
import { ENTRY_POINTS, PROJECT_ROOT } from "../lib/entry-points";

const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: PROJECT_ROOT, encoding: "utf8" })
  .split("\0")
  .filter((f) => f !== "" && fs.existsSync(path.join(PROJECT_ROOT, f)));
const SOURCE_ROOTS = ["main.ts", "lib", "handlers", "providers", "bin", "dev"];
const sources = tracked.filter(
  (f) => /\.(ts|js)$/.test(f) && SOURCE_ROOTS.some((r) => f === r || f.startsWith(`${r}/`)) && !/generated/.test(f),
);

/** The project files `file` imports (import, import type, export from, require, import()), as tracked paths. */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(PROJECT_ROOT, file), "utf8");
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.map((ref) => ref.fileName)
    .filter((spec) => spec.startsWith("."))
    .map((spec) => resolve(path.posix.join(path.posix.dirname(file), spec)))
    .filter((f): f is string => f !== undefined);
}

function resolve(base: string): string | undefined {
  const candidates = [base, `${base}.ts`, `${base}.js`, `${base}/index.ts`, `${base}/index.js`];
  return candidates.find((c) => sources.includes(c) || tracked.includes(c));
}

const graph = new Map(sources.map((f) => [f, importsOf(f)]));

/** Who may not import whom: files under any of `from` import nothing under any of `never`. */
const DIRECTIONS: { rule: string; from: string[]; never: string[] }[] = [
  {
    rule: "the construct library (synth) uses no day-two tool, script, rig or test",
    from: ["main.ts", "lib/construct/"],
    never: ["lib/operator/", "bin/", "dev/", "__tests__/"],
  },
  {
    rule: "the job runner, which the local target starts at deploy, uses no day-two tool",
    from: ["lib/jobs/"],
    never: ["lib/operator/", "bin/", "dev/", "__tests__/"],
  },
  {
    rule: "the settings both sides declare stand alone: the handlers bundle them",
    from: ["lib/shared/"],
    never: ["lib/construct/", "lib/jobs/", "lib/operator/", "lib/entry-points.ts", "bin/", "dev/", "__tests__/"],
  },
  {
    rule: "a handler is bundled alone: of lib/ it may use only the shared settings",
    from: ["handlers/"],
    never: ["lib/construct/", "lib/jobs/", "lib/operator/", "lib/entry-points.ts", "bin/", "dev/", "__tests__/"],
  },
  {
    rule: "product code never imports a test rig or a test",
    from: ["main.ts", "lib/", "handlers/", "providers/", "bin/"],
    never: ["dev/", "__tests__/"],
  },
  { rule: "the rigs never import a test", from: ["dev/"], never: ["__tests__/"] },
];

const under = (file: string, prefixes: string[]) => prefixes.some((p) => file === p || file.startsWith(p));

/** Each import that breaks a direction: "rule: from -> to". */
function directionBreaks(): string[] {
  return DIRECTIONS.flatMap(({ rule, from, never }) =>
    [...graph]
      .filter(([file]) => under(file, from))
      .flatMap(([file, imports]) => imports.filter((to) => under(to, never)).map((to) => `${rule}: ${file} -> ${to}`)),
  );
}

/** Every cycle's smallest witness: a path from a file back to itself, found by depth-first search. */
function cycles(): string[] {
  const found = new Set<string>();
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (f: string) => {
    state.set(f, "open");
    stack.push(f);
    for (const next of graph.get(f) ?? []) {
      if (state.get(next) === "open") found.add([...stack.slice(stack.indexOf(next)), next].join(" -> "));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(f, "done");
  };
  for (const f of sources) if (!state.has(f)) visit(f);
  return [...found].sort();
}

function closure(start: string): Set<string> {
  const seen = new Set<string>();
  const todo = [start];
  while (todo.length > 0) {
    const f = todo.pop() as string;
    if (seen.has(f)) continue;
    seen.add(f);
    todo.push(...(graph.get(f) ?? []));
  }
  return seen;
}

describe("layout", () => {
  it("reads the imports it checks (a resolver that found none would pass everything)", () => {
    expect(graph.get("main.ts")).toEqual(expect.arrayContaining(["lib/construct/stack.ts"]));
    expect(graph.get("bin/invoke.ts")).toEqual(expect.arrayContaining(["lib/jobs/invoke-args.ts"]));
    expect(closure("main.ts").size).toBeGreaterThan(30);
  });

  it("has no import cycle in the shipped source", () => {
    expect(cycles()).toEqual([]);
  });

  it("finds a cycle when there is one (the checker itself)", () => {
    graph.set("lib/construct/a.ts", ["lib/construct/b.ts"]);
    graph.set("lib/construct/b.ts", ["lib/construct/a.ts"]);
    sources.push("lib/construct/a.ts", "lib/construct/b.ts");
    try {
      expect(cycles()).toContain("lib/construct/a.ts -> lib/construct/b.ts -> lib/construct/a.ts");
    } finally {
      graph.delete("lib/construct/a.ts");
      graph.delete("lib/construct/b.ts");
      sources.splice(sources.indexOf("lib/construct/a.ts"), 2);
    }
  });

  it("keeps the construct library (all main.ts reaches) free of the operator tools, scripts and test rigs", () => {
    const outside = [...closure("main.ts")].filter((f) => under(f, ["lib/operator/", "bin/", "dev/", "__tests__/"]));
    expect(outside).toEqual([]);
  });

  it("keeps every direction the architecture names", () => {
    expect(directionBreaks()).toEqual([]);
  });

  it("finds an import against a direction when there is one (the checker itself)", () => {
    const planted: [string, string][] = [
      ["lib/construct/stack.ts", "lib/operator/exit-codes.ts"],
      ["handlers/common/exec.ts", "lib/construct/cdktf.ts"],
      ["lib/operator/exit-codes.ts", "dev/sandbox/index.ts"],
      ["dev/bench/support.ts", "__tests__/support/synth.ts"],
    ];
    for (const [from] of planted) expect(graph.get(from)).toBeDefined();
    const saved = planted.map(([from]) => [from, graph.get(from) as string[]] as const);
    try {
      for (const [from, to] of planted) graph.set(from, [...(graph.get(from) ?? []), to]);
      const breaks = directionBreaks();
      for (const [from, to] of planted) expect(breaks.some((b) => b.endsWith(`: ${from} -> ${to}`))).toBe(true);
    } finally {
      for (const [from, imports] of saved) graph.set(from, imports);
    }
  });

  it("has the design card's top level, plus bin/, docs/ and the rigs' dev/", () => {
    const top = [...new Set(tracked.map((f) => f.split("/")[0]))].filter((f) => !f.startsWith(".")).sort();
    expect(top).toEqual(
      [
        "README.md",
        "__tests__",
        "bin",
        "biome.jsonc",
        "cdktf.json",
        "dev",
        "docs",
        "handlers",
        "jest.config.js",
        "lib",
        "main.ts",
        "package-lock.json",
        "package.json",
        "providers",
        "tsconfig.json",
        "vm-install.schema.json",
      ].sort(),
    );
  });

  it("names the project's own programs only in lib/entry-points.ts, and each one exists", () => {
    for (const file of Object.values(ENTRY_POINTS)) expect(fs.existsSync(file)).toBe(true);
    const names = Object.values(ENTRY_POINTS).map((f) => path.basename(f));
    const spelled = sources
      .filter((f) => f !== "lib/entry-points.ts" && !f.startsWith("bin/"))
      .flatMap((f) => {
        const text = fs.readFileSync(path.join(PROJECT_ROOT, f), "utf8");
        // A path put together from pieces: path.join(..., "bin", "cdktf") or a literal "bin/invoke.ts".
        const pieces = [...text.matchAll(/["'`]bin["'`]\s*,\s*["'`]([\w.-]+)["'`]|["'`][^"'`\n]*bin\/([\w.-]+)["'`]/g)];
        return pieces.filter((m) => names.includes(m[1] ?? m[2])).map((m) => `${f}: ${m[0]}`);
      });
    expect(spelled).toEqual([]);
  });

  it("lists every folder of the tree (two levels deep) in docs/architecture.md", () => {
    const page = fs.readFileSync(path.join(PROJECT_ROOT, "docs", "architecture.md"), "utf8");
    const end = page.indexOf("\n## ");
    const section = end < 0 ? page : page.slice(0, end);
    const block = section.slice(section.indexOf("```\n") + 4, section.lastIndexOf("```"));
    // An entry: a line that starts at column 0 (its folders, then two spaces or more) and its continuation lines.
    const entries = block.split(/\n(?=\S)/).map((e) => ({ keys: e.split(/\s{2,}/)[0].split(/,\s*/), text: e }));
    const folders = [
      ...new Set(
        tracked.flatMap((f) => {
          const parts = f.split("/").slice(0, -1);
          return [parts.slice(0, 1), parts.slice(0, 2)].filter((p) => p.length > 0).map((p) => p.join("/"));
        }),
      ),
    ].sort();
    expect(folders.length).toBeGreaterThan(30);
    const unlisted = folders.filter((folder) => {
      const [top, sub] = folder.split("/");
      return !entries.some(
        (e) =>
          e.keys.includes(`${folder}/`) ||
          (sub !== undefined && e.keys.includes(`${top}/`) && new RegExp(`(^|[\\s(,]|${top}/)${sub}/`).test(e.text)),
      );
    });
    expect(unlisted).toEqual([]);
  });

  it("cites no path outside the repository (another machine has no /work, no sibling folders)", () => {
    const self = path.relative(PROJECT_ROOT, __filename); // its own samples below cite such paths on purpose
    const text = tracked.filter(
      (f) => /\.(ts|js|md|json|sh)$|^bin\/|^\.ci\//.test(f) && !f.includes("generated") && f !== self,
    );
    const escapes = text.flatMap((f) => pathsOutside(f, fs.readFileSync(path.join(PROJECT_ROOT, f), "utf8")));
    expect(escapes).toEqual([]);
  });

  it("knows a cited path outside the repository when it sees one", () => {
    expect(pathsOutside("bench/x.ts", "// see /work/shared/DESIGN.md\n")).toEqual(["bench/x.ts:1"]);
    expect(pathsOutside("x.ts", "const a = 1;\n// the design (../shared/DESIGN.md)\n")).toEqual(["x.ts:2"]);
    expect(pathsOutside("bench/x.ts", "// the notes (../shared/NOTES.md)\n")).toEqual(["bench/x.ts:1"]);
    expect(pathsOutside("README.md", "See ../../other-repo/README.md.\n")).toEqual(["README.md:1"]);
    expect(pathsOutside("bin/setup", "# from ../vm-install-seed/keys\n")).toEqual(["bin/setup:1"]);
    // A file of the repository, from the citing file's folder; or a path in code (a Terraform file() relative
    // to the synthesized stack): fine.
    expect(pathsOutside("__tests__/e2e/trixie/x.test.ts", "// follows it (../support/release.ts).\n")).toEqual([]);
    expect(pathsOutside("lib/construct/bundling/stubs/x.js", " * see SSH2_REPLACEMENTS in ../bundle.ts\n")).toEqual([]);
    expect(pathsOutside("__tests__/x.test.ts", 'const t = `file("../../../k.pub")`;\n')).toEqual([]);
  });
});

/**
 * The lines of `file` that cite a path only this machine has: /work/..., anywhere; or, in a comment or
 * Markdown, a relative path that names nothing in the repository from the citing file's folder (it climbs
 * out, like ../shared/DESIGN.md written from the root, or names a file that is not there).
 */
function pathsOutside(file: string, text: string): string[] {
  const root = path.resolve(PROJECT_ROOT);
  const cited = (line: string) =>
    [...line.matchAll(/(?<![\w.])(?:\.\.\/)+[\w./-]*/g)].some((m) => {
      const before = line.slice(0, m.index);
      if (!file.endsWith(".md") && !/^\s*(\/\/|\*|#|\/\*)|\s\/\/\s/.test(before)) return false;
      const target = path.resolve(root, path.dirname(file), m[0].replace(/\.+$/, ""));
      return !target.startsWith(`${root}${path.sep}`) || !fs.existsSync(target);
    });
  return text
    .split("\n")
    .map((line, i) => ({ line, n: i + 1 }))
    .filter(({ line }) => /\/work\//.test(line) || cited(line))
    .map(({ n }) => `${file}:${n}`);
}
