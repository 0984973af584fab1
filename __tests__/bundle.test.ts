import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { bundleHandler, PROJECT_ROOT } from "../lib/bundling/bundle";
import { INSTALLERS } from "../lib/installers/catalog";
import { context, synth, tempDir } from "./support/synth";

describe.each(INSTALLERS.map((i) => i.handler))("bundle of %s", (handler) => {
  const bundle = bundleHandler({ handler, cacheDir: tempDir("bundles") });

  test("is one self-contained CommonJS handler.js exporting install, runnable from an empty directory", () => {
    expect(fs.readdirSync(bundle.dir)).toEqual(["handler.js"]);
    const empty = tempDir("empty");
    fs.copyFileSync(path.join(bundle.dir, "handler.js"), path.join(empty, "handler.js"));
    // A fresh node with no NODE_PATH and cwd in the empty folder: nothing outside handler.js can be found.
    const out = execFileSync(process.execPath, ["-e", 'const m = require("./handler.js"); console.log(typeof m.install)'], {
      cwd: empty,
      env: { PATH: process.env.PATH ?? "" },
      encoding: "utf8",
    });
    expect(out.trim()).toBe("function");
  });

  test("keeps ssh2's native modules out", () => {
    const code = fs.readFileSync(path.join(bundle.dir, "handler.js"), "utf8");
    expect(code).not.toMatch(/\0/);
    if (code.includes("sshcrypto")) expect(code).toMatch(/require\(["'][^"']*sshcrypto\.node["']\)/);
  });

  test("is byte-identical when built again", () => {
    const again = bundleHandler({ handler, cacheDir: tempDir("bundles") });
    expect(again.sha256).toBe(bundle.sha256);
    expect(fs.readFileSync(path.join(again.dir, "handler.js")).equals(fs.readFileSync(path.join(bundle.dir, "handler.js")))).toBe(true);
  });
});

describe("asset hash", () => {
  const ctx = context({ installers: { docker: { enabled: true } } });
  const sourceDirs = (tf: any) => Object.fromEntries(Object.entries<any>(tf.resource.sless_job).map(([k, j]) => [k, j.source_dir]));

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
    expect(fs.readFileSync(path.join(dir, "handler.js")).equals(fs.readFileSync(path.join(bundle.dir, "handler.js")))).toBe(true);
  });

  test("a code change changes the bundle hash", () => {
    const handlers = tempDir("handlers");
    fs.mkdirSync(path.join(handlers, "probe"));
    const write = (body: string) => fs.writeFileSync(path.join(handlers, "probe", "handler.ts"), `export async function install() { return ${body}; }\n`);
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
    expect(() => bundleHandler({ handler: "nope", handlersDir: handlers })).toThrow(/bundling nope: .*nope\/handler\.ts does not exist/);
    fs.mkdirSync(path.join(handlers, "broken"));
    fs.writeFileSync(path.join(handlers, "broken", "handler.ts"), "export async function install( {\n");
    expect(() => bundleHandler({ handler: "broken", handlersDir: handlers, cacheDir: tempDir("bundles") })).toThrow(/bundling broken with esbuild failed:\n .*broken\/handler\.ts:\d+: /);
  });

  test("bundles do not depend on the checkout folder", () => {
    const code = fs.readFileSync(path.join(bundleHandler({ handler: "install-packages" }).dir, "handler.js"), "utf8");
    expect(code).not.toContain(PROJECT_ROOT);
  });
});
