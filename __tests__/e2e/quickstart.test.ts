// The README's quickstart, deployed as printed: its existing-host cdktf.json (only the address, user and key
// path it says to replace are a sandbox's), in a project laid out as the checkout it tells the reader to use,
// by its own no-terminal deploy command, then its `npm run status`: every installer ok. One sandbox, one deploy.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { Sandbox } from "../../dev/sandbox/index";
import { PROJECT_ROOT } from "../../lib/entry-points";
import { forHost, quickstartCommand, quickstartFiles } from "../support/quickstart";
import { tempDir } from "../support/synth";
import { describeE2E, sandboxPerSuite } from "./support/e2e";

/** What of the checkout the quickstart's commands use from the project folder (the project is the checkout). */
const CHECKOUT = ["package.json", "bin", "main.ts", "node_modules", "vm-install.schema.json"];

/** `npm run ...` in `dir` with no terminal (stdin closed), as CI or a script runs it. */
function npm(dir: string, command: string[], env: Record<string, string>): Promise<{ code: number; output: string }> {
  const [program, ...args] = command;
  return new Promise((resolve) => {
    const child = spawn(program, args, {
      cwd: dir,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString("utf8")));
    child.stderr.on("data", (c: Buffer) => (output += c.toString("utf8")));
    child.on("close", (code) => resolve({ code: code ?? 1, output }));
  });
}

describeE2E("the README's quickstart: the existing-host cdktf.json, deployed as printed", () => {
  let sb: Sandbox;
  let dir: string;
  const env = { TF_VAR_pg_password: "quickstart's long password" };

  sandboxPerSuite((s) => (sb = s));
  beforeAll(() => {
    dir = tempDir("quickstart");
    for (const name of CHECKOUT) fs.symlinkSync(path.join(PROJECT_ROOT, name), path.join(dir, name));
    const printed = quickstartFiles().existingHost;
    const file = forHost(printed, { address: sb.address, user: sb.user, privateKeyPath: sb.privateKeyPath });
    fs.writeFileSync(path.join(dir, "cdktf.json"), `${JSON.stringify(file, null, 2)}\n`);
  });
  afterAll(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test("its no-terminal deploy command deploys every installer, and npm run status shows each ok", async () => {
    const deploy = await npm(dir, quickstartCommand("npm run deploy", "--auto-approve"), env);
    expect({ code: deploy.code, tail: deploy.code === 0 ? "" : deploy.output.slice(-4000) }).toEqual({
      code: 0,
      tail: "",
    });

    const status = await npm(dir, quickstartCommand("npm run status"), env);
    const vm = quickstartFiles().existingHost.context.vmInstall.vms[0].name as string;
    const rows = status.output
      .split("\n")
      .filter((l) => l.startsWith(`${vm} `))
      .map((l) => l.split(/\s{2,}/).slice(1, 3));
    expect(rows).toEqual([
      ["install-packages", "ok"],
      ["install-docker", "ok"],
      ["install-postgres", "ok"],
    ]);
    expect(status.code).toBe(0);
  }, 900_000);
});
