// What is generated from the installers' definitions is committed as generated: the docs/ pages' tables
// and vm-install.schema.json (npm run docs). And the JSON Schema an editor applies to cdktf.json
// agrees with synth's own check on the project's config and on typical mistakes.

import * as fs from "node:fs";
import * as path from "node:path";
import Ajv2020 from "ajv/dist/2020";
import { SCHEMA_FILE, schemaText, withReference } from "../bin/docs";
import { VM_LOOKS } from "../handlers/vm-looks";
import { parseConfig } from "../lib/construct/config/parse";
import { INSTALLERS } from "../lib/construct/installers/catalog";
import { PROJECT_ROOT } from "../lib/entry-points";
import { docPages, installerPage } from "../lib/operator/reference/doc-sections";
import { context } from "./support/synth";

const read = (file: string) => fs.readFileSync(path.join(PROJECT_ROOT, file), "utf8");

describe("generated reference", () => {
  it.each(docPages())("%s's tables are what the definitions generate (run npm run docs)", (page) => {
    const text = read(page);
    expect(withReference(page, text)).toBe(text);
  });

  it(`${SCHEMA_FILE} is what the definitions generate (run npm run docs), and cdktf.json points at it`, () => {
    expect(read(SCHEMA_FILE)).toBe(schemaText());
    expect(JSON.parse(read("cdktf.json")).$schema).toBe(`./${SCHEMA_FILE}`);
  });

  it("lists every setting of every installer, with its event key", () => {
    for (const def of INSTALLERS) {
      const page = read(installerPage(def));
      for (const [key, s] of Object.entries(def.settings)) {
        if (!s.eventOnly) expect(page).toContain(`| \`${key}\` | `);
        if (s.event) expect(page).toContain(`\`${s.event}\``);
      }
    }
  });
});

describe("the audit of what the installers read from the VM", () => {
  const sources = (dir: string): string[] =>
    fs.readdirSync(path.join(PROJECT_ROOT, dir), { withFileTypes: true }).flatMap((e) => {
      const rel = path.join(dir, e.name);
      return e.isDirectory() ? sources(rel) : e.name.endsWith(".ts") ? [rel] : [];
    });

  it("lists every look the handlers declare (defineLook) in handlers/vm-looks.ts, so the table has it", () => {
    const declared = sources("handlers").flatMap((f) =>
      [...read(f).matchAll(/defineLook\(\s*"([^"]+)"/g)].map((m) => m[1]),
    );
    expect(declared.length).toBeGreaterThan(5);
    const listed = new Set(VM_LOOKS.map((l) => l.look));
    expect(declared.filter((what) => !listed.has(what))).toEqual([]);
  });

  it("has a row for every probe, with its writer", () => {
    const page = read("docs/vm-facts.md");
    for (const l of VM_LOOKS) for (const p of l.probes) expect(page).toContain(`| \`${p.name}\` | `);
  });
});

describe("the JSON Schema an editor checks cdktf.json with", () => {
  const validate = new Ajv2020({ allErrors: true, strict: false }).compile(JSON.parse(read(SCHEMA_FILE)));
  const asCdktfJson = (vmInstall: unknown) => ({ language: "typescript", app: "x", context: { vmInstall } });

  it("accepts the project's cdktf.json, as synth does", () => {
    const cdktf = JSON.parse(read("cdktf.json"));
    expect(() => parseConfig(cdktf.context.vmInstall)).not.toThrow();
    expect(validate(cdktf)).toBe(true);
  });

  it.each([
    ["a misspelt installer setting", { installers: { packages: { pakages: ["git"] } } }],
    ["a package name with shell syntax", { installers: { packages: { packages: ["git;id"] } } }],
    ["a cache_valid_sec beyond a month", { installers: { docker: { cacheValidSec: 31 * 86400 } } }],
    ["an unknown Docker channel", { vms: [{ name: "vm1", installers: { docker: { channel: "edge" } } }] }],
    ["a reserved database name", { installers: { postgres: { dbName: "template1" } } }],
    ["an sshRetry out of range", { vms: [{ name: "vm1", sshRetry: { attempts: 0 } }] }],
    ["a VM without a name", { vms: [{}] }],
  ])("refuses %s, as synth does", (_what, patch) => {
    const ctx = context(patch);
    expect(() => parseConfig(ctx)).toThrow();
    expect(validate(asCdktfJson(ctx))).toBe(false);
  });
});
