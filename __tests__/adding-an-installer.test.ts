// "Adding an installer is one folder plus one catalog line": a fixture installer (its definition.ts and
// handler.ts in __tests__/fixtures/installers/install-hello) goes in through the same path the built-in
// ones take. Its settings are checked at synth, its job is synthesized after the others, and its bundle
// runs through the job runner against an in-process SSH server, check mode included with no code for it.
import * as fs from "node:fs";
import * as path from "node:path";
import { BOOT_LOOK } from "../handlers/common/boot-look";
import { bundleHandler } from "../lib/construct/bundling/bundle";
import { parseConfig } from "../lib/construct/config/parse";
import { type CatalogEntry, INSTALLERS } from "../lib/construct/installers/catalog";
import { runJob } from "../lib/jobs/run-job";
import { helloDefinition } from "./fixtures/installers/install-hello/definition";
import { answerLook } from "./handlers/support/look-answers";
import { startServer } from "./handlers/support/ssh-server";
import { testKey } from "./handlers/support/test-keys";
import { unwrapLine } from "./handlers/support/wire";
import { context, synth, tempDir } from "./support/synth";

const HANDLERS_DIR = path.join(__dirname, "fixtures", "installers");
const CATALOG: CatalogEntry[] = [...INSTALLERS, { ...helloDefinition, handlersDir: HANDLERS_DIR }];

describe("a fixture installer plugged in through the catalog", () => {
  it("is configured from cdktf.json like the others: defaults, overrides, and its own rules", () => {
    const cfg = parseConfig(context({ installers: { hello: { enabled: true, times: 2 } } }), CATALOG);
    expect(cfg.vms[0].installers.hello).toEqual({ enabled: true, waitTimeoutSec: 60, greeting: "hello", times: 2 });
    expect(() => parseConfig(context({ installers: { hello: { times: 9 } } }), CATALOG)).toThrow(
      /installers\.hello\.times: expected a whole number from 1 to 3, got number 9/,
    );
    // Without the catalog line, the key is unknown.
    expect(() => parseConfig(context({ installers: { hello: {} } }))).toThrow(
      /installers\.hello: unknown key; allowed here: packages, docker, postgres/,
    );
  });

  it("synthesizes its job after the built-in ones, with its event from its settings", () => {
    const { tf, stackDir } = synth(
      context({
        jobTarget: "local",
        vms: [{ name: "vm1", kind: "existing", address: "10.0.0.5" }],
        installers: { hello: { enabled: true, greeting: "hi there" } },
      }),
      tempDir("hello"),
      CATALOG,
    );
    const job = tf.resource.terraform_data.vm1_hello;
    expect(job).toBeDefined();
    expect(JSON.parse(job.triggers_replace.event)).toEqual({
      cache_valid_sec: 900,
      greeting: "hi there",
      times: 1,
      time_budget_sec: 45,
    });
    expect(job.lifecycle.replace_triggered_by).toEqual(["terraform_data.vm1_packages"]);
    expect(tf.output.vm1_hello_result).toBeDefined();
    const bundleDir = path.join(stackDir, job.triggers_replace.source_dir);
    expect(fs.readFileSync(path.join(bundleDir, "handler.js"), "utf8")).toContain("/tmp/hello");
  });

  it("runs its bundle through the job runner over real SSH: a check changes nothing and foresees the run's words", async () => {
    const key = testKey("client_ed25519");
    const seen: string[] = [];
    let file = ""; // /tmp/hello on the double's VM
    const server = await startServer({
      authorizedKey: key.public,
      onExec: (line) => {
        seen.push(line);
        const script = unwrapLine(line).script.replace(/^(export [A-Z_]+=\S*; )+/, "");
        if (script === BOOT_LOOK.script) {
          const os = 'ID=debian\nVERSION_CODENAME=bookworm\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n';
          return { stdout: answerLook(script, { os_release: os }) };
        }
        if (line.includes("cat /tmp/hello")) return { stdout: file };
        if (line.includes("> /tmp/hello")) file = "hi\nhi\n";
        return { stdout: "" };
      },
    });
    try {
      const bundle = bundleHandler({
        handler: "install-hello",
        handlersDir: HANDLERS_DIR,
        cacheDir: tempDir("hello-bundle"),
      });
      const env = { VM_IP: "127.0.0.1", SSH_PORT: String(server.port), SSH_USER: "ubuntu", SSH_KEY: key.private };
      const runIt = (event: Record<string, unknown>) => runJob({ dir: bundle.dir, env, event, timeoutSec: 60 });
      const writes = () => seen.filter((l) => l.includes("> /tmp/hello"));

      // Check mode with no code for it: the kit runs the model and stops before apply.
      const check = await runIt({ greeting: "hi", times: 2, check: true });
      expect(check.phase).toBe("Succeeded");
      const foreseen = JSON.parse(check.message);
      expect(foreseen).toMatchObject({ changed: false, changes: [], would_change: ["wrote /tmp/hello"] });
      expect(writes()).toEqual([]);
      expect(file).toBe("");

      const job = await runIt({ greeting: "hi", times: 2 });
      expect(job.phase).toBe("Succeeded");
      const result = JSON.parse(job.message);
      expect(Object.keys(result).slice(0, 8)).toEqual([
        "status",
        "changed",
        "changes",
        "summary",
        "warnings",
        "host_key_sha256",
        "os",
        "timings_ms",
      ]);
      expect(result).toMatchObject({
        status: "ok",
        changed: true,
        changes: foreseen.would_change,
        warnings: [],
        host_key_sha256: server.hostKeySha256,
        written: ["hi", "hi"],
      });
      expect(writes()).toEqual(["sh -c 'printf '\\''%s\\n'\\'' hi hi > /tmp/hello'"]);

      // In place now: a check foresees nothing, a run changes nothing.
      const clean = await runIt({ greeting: "hi", times: 2, check: true });
      expect(JSON.parse(clean.message)).toMatchObject({ would_change: [] });
      const again = await runIt({ greeting: "hi", times: 2 });
      expect(JSON.parse(again.message)).toMatchObject({ changed: false, changes: [] });
      expect(writes()).toHaveLength(1);

      const refused = await runIt({ greeting: "Hi!" });
      expect(refused.phase).toBe("Failed");
      expect(refused.message).toMatch(/event greeting: "Hi!" is not allowed; expected lowercase words/);
    } finally {
      await server.close();
    }
  });
});
