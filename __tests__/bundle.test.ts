import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { bundleHandler, esbuildRunCount } from "../lib/construct/bundling/bundle";
import { INSTALLERS } from "../lib/construct/installers/catalog";
import { PROJECT_ROOT } from "../lib/entry-points";
import { ENCRYPTED_KEY_PASSPHRASE, testKey } from "./handlers/support/test-keys";
import { context, synth, tempDir } from "./support/synth";

/**
 * A tripwire, not a design constraint (DESIGN.md, turn 4 contracts: 2 MB): a bundle that suddenly grows by
 * megabytes pulled in something it should not. install-postgres was ~397 KB before issue 30's login check
 * (its own wire client and SCRAM, ~410 KB), against the 400 KB cap of issue 21; ~806 KB since it issues
 * certificates through @peculiar/x509 (issue 34; ~448 KB with its DER written by hand).
 */
const MAX_BUNDLE_BYTES = 2 * 1024 * 1024;

describe.each(INSTALLERS.map((i) => i.handler))("bundle of %s", (handler) => {
  const bundle = bundleHandler({ handler, cacheDir: tempDir("bundles") });

  test(`is at most ${MAX_BUNDLE_BYTES / 1024} KB`, () => {
    expect(fs.statSync(path.join(bundle.dir, "handler.js")).size).toBe(bundle.bytes);
    // Over the limit: run esbuild with metafile: true on handlers/<name>/handler.ts to see what grew.
    expect(bundle.bytes).toBeLessThanOrEqual(MAX_BUNDLE_BYTES);
  });

  test("is one self-contained CommonJS handler.js exporting install, runnable from an empty directory", () => {
    expect(fs.readdirSync(bundle.dir)).toEqual(["handler.js"]);
    const empty = tempDir("empty");
    fs.copyFileSync(path.join(bundle.dir, "handler.js"), path.join(empty, "handler.js"));
    // A fresh node with no NODE_PATH and cwd in the empty folder: nothing outside handler.js can be found.
    const out = execFileSync(
      process.execPath,
      ["-e", 'const m = require("./handler.js"); console.log(typeof m.install)'],
      {
        cwd: empty,
        env: { PATH: process.env.PATH ?? "" },
        encoding: "utf8",
      },
    );
    expect(out.trim()).toBe("function");
  });

  test("loads the X.509 library only to issue a certificate (its Reflect polyfill is not there after require)", () => {
    // ~300 ms of require a run that issues nothing would pay (x509-issue.ts loads it on first use).
    const out = execFileSync(
      process.execPath,
      ["-e", 'require("./handler.js"); console.log(typeof Reflect.getMetadata)'],
      { cwd: bundle.dir, env: { PATH: process.env.PATH ?? "" }, encoding: "utf8" },
    );
    expect(out.trim()).toBe("undefined");
  });

  test("keeps ssh2's native modules out", () => {
    const code = fs.readFileSync(path.join(bundle.dir, "handler.js"), "utf8");
    expect(code).not.toMatch(/\0/);
    if (code.includes("sshcrypto")) expect(code).toMatch(/require\(["'][^"']*sshcrypto\.node["']\)/);
  });

  test("is byte-identical when built again", () => {
    const again = bundleHandler({ handler, cacheDir: tempDir("bundles") });
    expect(again.sha256).toBe(bundle.sha256);
    expect(
      fs.readFileSync(path.join(again.dir, "handler.js")).equals(fs.readFileSync(path.join(bundle.dir, "handler.js"))),
    ).toBe(true);
  });
});

describe("asset hash", () => {
  const ctx = context({ installers: { docker: { enabled: true } } });
  const sourceDirs = (tf: any) =>
    Object.fromEntries(Object.entries<any>(tf.resource.sless_job).map(([k, j]) => [k, j.source_dir]));

  test("identical sources give an identical asset hash (and source_dir) in separate synths", () => {
    const a = sourceDirs(synth(ctx).tf);
    const b = sourceDirs(synth(ctx).tf);
    expect(a).toEqual(b);
    expect(a.vm1_packages).not.toBe(a.vm1_docker);
  });

  test("the asset directory in cdktf.out holds the bundle", () => {
    const { tf, stackDir } = synth(ctx);
    const dir = path.join(stackDir, tf.resource.sless_job.vm1_packages.source_dir);
    expect(fs.readdirSync(dir)).toEqual(["handler.js"]);
    const bundle = bundleHandler({ handler: "install-packages" });
    expect(
      fs.readFileSync(path.join(dir, "handler.js")).equals(fs.readFileSync(path.join(bundle.dir, "handler.js"))),
    ).toBe(true);
  });

  test("a code change changes the bundle hash", () => {
    const handlers = tempDir("handlers");
    fs.mkdirSync(path.join(handlers, "probe"));
    const write = (body: string) =>
      fs.writeFileSync(
        path.join(handlers, "probe", "handler.ts"),
        `export async function install() { return ${body}; }\n`,
      );
    write('"one"');
    const one = bundleHandler({ handler: "probe", handlersDir: handlers, cacheDir: tempDir("bundles") });
    write('"two"');
    const two = bundleHandler({ handler: "probe", handlersDir: handlers, cacheDir: tempDir("bundles") });
    write('"one"');
    const oneAgain = bundleHandler({ handler: "probe", handlersDir: handlers, cacheDir: tempDir("bundles") });
    expect(two.sha256).not.toBe(one.sha256);
    expect(oneAgain.sha256).toBe(one.sha256);
  });

  test("a missing handler or a compile error names the file", () => {
    const handlers = tempDir("handlers");
    expect(() => bundleHandler({ handler: "nope", handlersDir: handlers })).toThrow(
      /bundling nope: .*nope\/handler\.ts does not exist/,
    );
    fs.mkdirSync(path.join(handlers, "broken"));
    fs.writeFileSync(path.join(handlers, "broken", "handler.ts"), "export async function install( {\n");
    expect(() => bundleHandler({ handler: "broken", handlersDir: handlers, cacheDir: tempDir("bundles") })).toThrow(
      /bundling broken with esbuild failed:\n .*broken\/handler\.ts:\d+: /,
    );
  });

  test("bundles do not depend on the checkout folder", () => {
    const code = fs.readFileSync(path.join(bundleHandler({ handler: "install-packages" }).dir, "handler.js"), "utf8");
    expect(code).not.toContain(PROJECT_ROOT);
  });
});

describe("bundling once", () => {
  const allInstallers = {
    installers: {
      packages: { enabled: true },
      docker: { enabled: true },
      postgres: { enabled: true, passwordVariable: "pg_password" },
    },
    vms: ["vm1", "vm2", "vm3", "vm4"].map((name, i) => ({ name, kind: "existing", address: `10.0.0.${i + 1}` })),
  };

  test("a synth of several VMs runs esbuild once per handler and writes one asset per handler", () => {
    // A fresh module registry: this file's earlier tests have already bundled in this one.
    jest.isolateModules(() => {
      const bundling = require("../lib/construct/bundling/bundle") as typeof import("../lib/construct/bundling/bundle");
      const { synth: isolatedSynth } = require("./support/synth") as typeof import("./support/synth");
      const { tf, stackDir } = isolatedSynth(context(allInstallers));
      const jobs = Object.values<any>(tf.resource.sless_job);
      // Per VM: its installers and the host-key probe (no VM is pinned), so the handlers are the installers' and the probe's.
      const handlers = INSTALLERS.length + 1;
      expect(jobs).toHaveLength(4 * handlers);
      // At most once per handler (none when an earlier process left the same bundles), never per VM.
      expect(bundling.esbuildRunCount()).toBeLessThanOrEqual(handlers);
      expect(fs.readdirSync(path.join(stackDir, "assets"))).toHaveLength(handlers);
      expect(new Set(jobs.map((j) => j.source_dir)).size).toBe(handlers);
    });
  });

  /** A one-file handler "probe" returning "one", in its own handlers and cache folders; `write` edits it. */
  const probeHandler = () => {
    const handlers = tempDir("handlers");
    const cacheDir = tempDir("bundles");
    fs.mkdirSync(path.join(handlers, "probe"));
    const write = (body: string) =>
      fs.writeFileSync(
        path.join(handlers, "probe", "handler.ts"),
        `export async function install() { return ${body}; }\n`,
      );
    write('"one"');
    return { handlers, cacheDir, write };
  };

  test("a second call with the same sources reuses the bundle; an edit bundles again", () => {
    const { handlers, cacheDir, write } = probeHandler();
    const before = esbuildRunCount();
    const one = bundleHandler({ handler: "probe", handlersDir: handlers, cacheDir });
    expect(bundleHandler({ handler: "probe", handlersDir: handlers, cacheDir })).toEqual(one);
    expect(esbuildRunCount()).toBe(before + 1);
    write('"two"');
    const two = bundleHandler({ handler: "probe", handlersDir: handlers, cacheDir });
    expect(esbuildRunCount()).toBe(before + 2);
    expect(two.sha256).not.toBe(one.sha256);
  });

  test("the next process reuses the bundle while its inputs are unchanged (the manifest beside it), not after an edit", () => {
    const { handlers, cacheDir, write } = probeHandler();
    const first = bundleHandler({ handler: "probe", handlersDir: handlers, cacheDir });
    // A fresh module registry stands for the next process: nothing memoised in memory.
    const fresh = () =>
      require("../lib/construct/bundling/bundle") as typeof import("../lib/construct/bundling/bundle");
    jest.isolateModules(() => {
      const next = fresh();
      expect(next.bundleHandler({ handler: "probe", handlersDir: handlers, cacheDir })).toEqual(first);
      expect(next.esbuildRunCount()).toBe(0);
    });
    write('"two"');
    jest.isolateModules(() => {
      const next = fresh();
      expect(next.bundleHandler({ handler: "probe", handlersDir: handlers, cacheDir }).sha256).not.toBe(first.sha256);
      expect(next.esbuildRunCount()).toBe(1);
    });
  });
});

describe("ssh2 stand-ins", () => {
  // Inside the project, so that "ssh2" resolves from node_modules as it does for handlers/.
  const fixtureHandlers = () => fs.mkdtempSync(path.join(PROJECT_ROOT, ".cache", "test-handlers-"));
  let created: string[] = [];
  const handlersWith = (name: string, source: string): string => {
    fs.mkdirSync(path.join(PROJECT_ROOT, ".cache"), { recursive: true });
    const dir = fixtureHandlers();
    created.push(dir);
    fs.mkdirSync(path.join(dir, name));
    fs.writeFileSync(path.join(dir, name, "handler.ts"), source);
    return dir;
  };
  afterEach(() => {
    for (const dir of created) fs.rmSync(dir, { recursive: true, force: true });
    created = [];
  });

  const run = (dir: string): string =>
    execFileSync(
      process.execPath,
      [
        "-e",
        'require("./handler.js").install().then((r) => console.log(JSON.stringify(r)), (e) => console.log("threw: " + e.message))',
      ],
      {
        cwd: dir,
        env: { PATH: process.env.PATH ?? "" },
        encoding: "utf8",
      },
    ).trim();

  test("a handler importing a part of ssh2 left out fails to bundle, naming the stand-in", () => {
    const handlers = handlersWith(
      "server",
      'import { Server } from "ssh2";\nexport async function install() { return typeof Server; }\n',
    );
    expect(() => bundleHandler({ handler: "server", handlersDir: handlers, cacheDir: tempDir("bundles") })).toThrow(
      /No matching export .*"Server".*lib\/construct\/bundling\/stubs\/ssh2-index\.js/,
    );
  });

  test("the client and parseKey are there; other utils, SFTP and key decryption fail by name", () => {
    const handlers = handlersWith(
      "probe",
      [
        'import { Client, utils } from "ssh2";',
        "const attempt = (f: () => unknown) => { try { return String(f()); } catch (e) { return (e as Error).message; } };",
        "export async function install() {",
        "  return {",
        "    client: typeof Client,",
        '    parsed: attempt(() => (utils.parseKey("not a key") as Error).message),',
        '    keygen: attempt(() => (utils as any).generateKeyPairSync("ed25519")),',
        "    sftp: attempt(() => new Client().sftp(() => undefined)),",
        `    encrypted: attempt(() => (utils.parseKey(ENCRYPTED_KEY, ${JSON.stringify(ENCRYPTED_KEY_PASSPHRASE)}) as Error).message),`,
        "  };",
        "}",
        `const ENCRYPTED_KEY = ${JSON.stringify(testKey("encrypted_ed25519").private)};`,
      ].join("\n"),
    );
    const bundle = bundleHandler({ handler: "probe", handlersDir: handlers, cacheDir: tempDir("bundles") });
    const result = JSON.parse(run(bundle.dir));
    expect(result.client).toBe("function");
    expect(result.parsed).toMatch(/Unsupported key format/);
    expect(result.keygen).toMatch(
      /ssh2 utils\.generateKeyPairSync is not in the handler bundle: lib\/construct\/bundling\/stubs\/ssh2-index\.js/,
    );
    expect(result.sftp).toMatch(/SFTP is left out of handler bundles/);
    expect(result.encrypted).toMatch(/passphrase-protected SSH key is left out of handler bundles/);
  });
});
