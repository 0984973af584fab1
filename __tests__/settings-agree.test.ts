// Config and handler accept and refuse exactly the same values, for every setting that has both a
// cdktf.json key and an event key: each probe value goes through parseConfig (synth) and through the
// handler's own event check (runHandler, stopped before it would connect). And every stack setting is
// in the JSON Schema (description, default) and docs/configuration.md's table, and parse accepts its default.

import * as fs from "node:fs";
import * as path from "node:path";
import { type HandlerSpec, runHandler } from "../handlers/common/handler-kit";
import type { InstallerReport } from "../handlers/common/installer-result";
import { handler as dockerHandler } from "../handlers/install-docker/handler";
import { handler as packagesHandler } from "../handlers/install-packages/handler";
import { handler as postgresHandler } from "../handlers/install-postgres/handler";
import { configSchema, parseConfig } from "../lib/construct/config/parse";
import { STACK_RULES, stackSettings } from "../lib/construct/config/stack-settings";
import { INSTALLERS } from "../lib/construct/installers/catalog";
import { PROJECT_ROOT } from "../lib/entry-points";
import { keyPaths } from "../lib/operator/reference/configuration-reference";
import { cdktfJsonSchema } from "../lib/operator/reference/settings-reference";
import { SecretScrubber } from "../lib/shared/secrets";
import type { Setting, Settings } from "../lib/shared/settings";
import { SSH_RETRY_SETTINGS } from "../lib/shared/ssh-retry";
import type { JsonSchema } from "../lib/shared/validate";
import { TEST_ENV } from "./handlers/support/run-scripted";
import { context } from "./support/synth";

const PROBES: unknown[] = [
  true,
  false,
  null,
  0,
  -1,
  1,
  1.5,
  3,
  29,
  30,
  300,
  301,
  3600,
  86400,
  7 * 86400 + 1,
  30 * 86400,
  30 * 86400 + 1,
  "",
  " ",
  "x",
  "ab",
  "git",
  "git=1:2.39.2-1",
  "git;id",
  "Git",
  "*",
  "localhost",
  "localhost,10.0.0.1",
  "10.0.0.1",
  "10.0.0.0/8",
  "::1/128",
  "10.0.0.0/33",
  "official",
  "distro",
  "hello-world",
  "daemon",
  "15",
  "9",
  "100",
  "myapp",
  "app_user",
  "postgres",
  "all",
  "public",
  "pg_x",
  "a-b",
  "https://download.docker.com/linux",
  "http://mirror.local:8080/pg",
  "ftp://x",
  "https://x/?q=1",
  "https://x/a b",
  "B97B0AFCAA1A47F044F244A07FCC7D46ACCC4CF8",
  "b97b0afcaa1a47f044f244a07fcc7d46accc4cf8",
  "pg_password",
  "Pg",
  "ubuntu",
  "root",
  [],
  ["git"],
  ["git", "git"],
  ["git", "git=1"],
  ["git;id"],
  ["10.0.0.0/8"],
  ["10.0.0.0/8", "10.0.0.0/8"],
  ["bad"],
  ["ubuntu"],
  ["ubuntu", "ubuntu"],
  ["Bad User"],
  {},
  { a: 1 },
];

const HANDLERS: Record<string, HandlerSpec<Settings, InstallerReport>> = {
  "install-packages": packagesHandler as never,
  "install-docker": dockerHandler as never,
  "install-postgres": postgresHandler as never,
};

/** What the stack always sends (eventRequired settings), so a probe of one key is judged on that key alone. */
const BASE_EVENT: Record<string, Record<string, unknown>> = {
  "install-packages": { packages: ["git"] },
  "install-docker": {},
  "install-postgres": { db_name: "myapp", db_user: "app_user", db_password: "correct-horse-battery" },
};

function configAccepts(where: Record<string, unknown>): boolean {
  try {
    parseConfig(context(where));
    return true;
  } catch {
    return false;
  }
}

async function handlerAccepts(handler: string, event: Record<string, unknown>): Promise<boolean> {
  const stop = new Error("validation passed");
  const outcome = await runHandler(HANDLERS[handler], event, {
    env: TEST_ENV,
    connect: async () => {
      throw stop;
    },
    write: () => undefined,
    secrets: new SecretScrubber(),
  }).catch((err: Error) => err);
  if (!(outcome instanceof Error)) throw new Error("the handler ran without connecting");
  return outcome.message.includes(stop.message);
}

const word = (accepts: boolean) => (accepts ? "accepts" : "refuses");
const verdict = (value: unknown, atSynth: boolean, inHandler: boolean) =>
  `${JSON.stringify(value)}: synth ${word(atSynth)}, handler ${word(inHandler)}`;

const both = (settings: Settings) =>
  Object.entries(settings).filter(
    (entry): entry is [string, Setting & { event: string }] => !!entry[1].event && !entry[1].eventOnly,
  );

describe.each(INSTALLERS.map((def) => [def.handler, def] as const))(
  "%s: config and handler agree on every value",
  (handler, def) => {
    it.each(both(def.settings).map(([key, s]) => [key, s.event] as const))("%s (event %s)", async (key, eventKey) => {
      const verdicts: string[] = [];
      let accepted = 0;
      for (const value of [...PROBES, def.settings[key].default]) {
        if (value === undefined) continue;
        const atSynth = configAccepts({ installers: { [def.key]: { enabled: false, [key]: value } } });
        const inHandler = await handlerAccepts(handler, { ...BASE_EVENT[handler], [eventKey]: value });
        if (atSynth !== inHandler) verdicts.push(verdict(value, atSynth, inHandler));
        if (atSynth) accepted++;
      }
      expect(verdicts).toEqual([]);
      // Not vacuous: each setting accepts some probe and refuses others.
      expect(accepted).toBeGreaterThan(0);
      expect(accepted).toBeLessThan(PROBES.length);
    });
  },
);

describe("sshRetry (cdktf.json) and ssh (every event) agree on every value", () => {
  it.each(Object.entries(SSH_RETRY_SETTINGS).map(([key, s]) => [key, s.event] as const))(
    "%s (event ssh.%s)",
    async (key, eventKey) => {
      const verdicts: string[] = [];
      for (const value of PROBES) {
        const atSynth = configAccepts({ vms: [{ name: "vm1", sshRetry: { [key]: value } }] });
        const inHandler = await handlerAccepts("install-docker", { ssh: { [eventKey]: value } });
        if (atSynth !== inHandler) verdicts.push(verdict(value, atSynth, inHandler));
      }
      expect(verdicts).toEqual([]);
    },
  );
});

describe("the stack's own settings: declared once, in the schema, docs/configuration.md and parse alike", () => {
  const settings = stackSettings();
  const declared = keyPaths(settings);
  const page = fs.readFileSync(path.join(PROJECT_ROOT, "docs", "configuration.md"), "utf8");
  const schema = configSchema() as JsonSchema;

  /** The schema of the key at a docs key path ("vms[].sshRetry.attempts"). */
  function schemaAt(keyPath: string): JsonSchema | undefined {
    let at: JsonSchema | undefined = schema;
    keyPath.split(".").forEach((part, i, parts) => {
      at = (at?.properties as Record<string, JsonSchema> | undefined)?.[part.replace(/\[\]$/, "")];
      if (part.endsWith("[]") && i < parts.length - 1) at = at?.items as JsonSchema | undefined;
    });
    return at;
  }

  /** A context with `value` at `keyPath`, everything else minimal (a VM, the nubes section). */
  function withValue(keyPath: string, value: unknown): Record<string, unknown> {
    const [first, ...rest] = keyPath.split(".");
    const key = first.replace(/\[\]$/, "");
    if (first.endsWith("[]")) return context({ [key]: [{ name: "vm1", ...nested(rest, value) }] });
    const base = key === "nubes" ? { vdcUid: "vdc-1", nsxtUid: "nsxt-1" } : {};
    return context({ [key]: rest.length ? { ...base, ...nested(rest, value) } : value });
  }
  const nested = (parts: string[], value: unknown): Record<string, unknown> =>
    parts.length === 1 ? { [parts[0]]: value } : { [parts[0]]: nested(parts.slice(1), value) };

  /** The resolved value at a key path, in the first VM for vms[] keys. */
  function resolvedAt(config: unknown, keyPath: string): unknown {
    return keyPath
      .split(".")
      .reduce<unknown>(
        (at, part) =>
          part.endsWith("[]")
            ? (at as Record<string, unknown[]>)[part.slice(0, -2)][0]
            : (at as Record<string, unknown> | undefined)?.[part],
        config,
      );
  }

  it("declares the keys it did (a guard against losing one in the move)", () => {
    expect(declared.length).toBeGreaterThanOrEqual(50);
  });

  it.each(declared.map(([keyPath, s]) => [keyPath, s] as const))(
    "%s: in the schema with a description and its default, and a row of docs/configuration.md's table",
    (keyPath, s) => {
      const at = schemaAt(keyPath);
      expect(at).toBeDefined();
      expect(at?.description).toContain(s.doc);
      if (s.default !== undefined && !s.list) expect(at?.default).toEqual(s.default);
      else expect(at?.description).toMatch(s.required ? / Required\.$/ : / Default: .+\.$/);
      expect(page).toContain(`| \`${keyPath}\` | `);
    },
  );

  it.each(declared.filter(([, s]) => s.default !== undefined).map(([keyPath, s]) => [keyPath, s] as const))(
    "%s: parse accepts its default, and fills it in when the key is left out",
    (keyPath, s) => {
      expect(() => parseConfig(withValue(keyPath, s.default))).not.toThrow();
      const underAsGiven = declared.some(([p, g]) => g.asGiven && keyPath.startsWith(`${p}.`));
      // A group's default is resolved key by key (each key has its own row here).
      if (!s.resolve && !s.settings && !underAsGiven)
        expect(resolvedAt(parseConfig(context()), keyPath)).toEqual(s.default);
    },
  );

  it("describes every key of the published schema, nested and per-installer keys included", () => {
    const undescribed: string[] = [];
    const walk = (at: JsonSchema, where: string) => {
      for (const [key, sub] of Object.entries((at.properties ?? {}) as Record<string, JsonSchema>)) {
        if (typeof sub.description !== "string" || !sub.description) undescribed.push(`${where}${key}`);
        walk(sub, `${where}${key}.`);
        if (sub.items) walk(sub.items as JsonSchema, `${where}${key}[].`);
      }
    };
    walk(cdktfJsonSchema() as JsonSchema, "");
    expect(undescribed).toEqual([]);
  });

  it("lists every rule across settings under the table", () => {
    const rules = [...STACK_RULES, ...declared.flatMap(([, s]) => s.rules ?? [])];
    expect(rules.length).toBeGreaterThanOrEqual(8);
    for (const rule of rules) expect(page).toContain(`: ${rule.doc}.`);
  });
});
