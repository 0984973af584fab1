// The no-cloud demo: boots a sandbox VM, deploys the stack with all three installers against it through
// real `cdktf deploy` (local job target, existing host: only Terraform built-ins), prints the outputs.
//   npm run demo            up: sandbox + deploy + outputs (rerun: deploys again, changes nothing)
//   npm run demo -- down    destroy the stack, remove the sandbox and the demo folder
//   npm run demo -- --twin  the production shape (nubes VM, sless jobs) against the local twin (demo/twin-demo.ts)
// The demo's own cdktf project lives in .demo/ (gitignored); its app is this checkout's main.ts.
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_ROOT } from "../lib/bundling/bundle";
import { readStatus } from "../lib/status/deployed-status";
import { renderStatusTable } from "../lib/status/status-table";
import { getSandbox, listSandboxes, type Sandbox, sandboxSupportProblems, startSandbox, stopSandbox } from "../sandbox";
import { demoPassword, existingHost, runCdktf, writeCdktfProject } from "./project";
import { twinDown, twinUp } from "./twin-demo";

export const DEMO_DIR = path.join(PROJECT_ROOT, ".demo");
const SANDBOX_NAME = "vm-install-demo";

const say = (line: string) => process.stderr.write(`demo: ${line}\n`);

/** The demo's cdktf.json context: one existing host (the sandbox), every installer, jobs run locally. */
export function demoContext(sb: { address: string; port: number; user: string; privateKeyPath: string; hostKeySha256: string }) {
  return {
    stackName: "vm-install-demo",
    jobTarget: "local",
    installers: {
      packages: { enabled: true, packages: ["git", "curl", "jq", "htop", "unzip"] },
      // The sandbox reaches Debian's mirror only: the distribution's Docker, verified without a registry.
      // Debian 12's own compose is v1 (Python, ~40 more packages): left out here; channel "official" brings v2.
      docker: { enabled: true, channel: "distro", verify: "daemon", compose: false },
      postgres: { enabled: true, passwordVariable: "pg_password", dbName: "demo", dbUser: "demo_user" },
    },
    vms: [existingHost("demo", sb)],
  };
}

async function cdktf(args: string[], env: Record<string, string> = {}): Promise<number> {
  return (await runCdktf(DEMO_DIR, args, { env, echo: true })).code;
}

async function up(): Promise<number> {
  const problems = sandboxSupportProblems();
  if (problems.length) {
    say(`cannot run here: ${problems.join("; ")}`);
    return 2;
  }
  const existing = listSandboxes().find((s) => s.name === SANDBOX_NAME);
  let sb: Sandbox;
  if (existing?.alive && existing.status === "running") {
    sb = getSandbox(SANDBOX_NAME);
    say(`reusing sandbox ${SANDBOX_NAME} at ${sb.address}`);
  } else {
    if (existing) await stopSandbox(SANDBOX_NAME);
    say("booting the sandbox VM (the first run builds the Debian base image, about a minute)");
    sb = await startSandbox({ name: SANDBOX_NAME, persistent: true, log: (l) => say(l) });
    say(`sandbox ${sb.name} up at ${sb.address}:${sb.port}, host key ${sb.hostKeySha256}`);
  }
  writeCdktfProject(DEMO_DIR, demoContext(sb));
  say("cdktf deploy (packages -> docker -> postgres, each job's progress below)");
  const code = await cdktf(["deploy", "--auto-approve"], { TF_VAR_pg_password: demoPassword(DEMO_DIR) });
  if (code !== 0) {
    say(`deploy failed (exit ${code}); fix what the job said above and run \`npm run demo\` again, or \`npm run demo -- down\``);
    return code;
  }
  // The deployed state as a table (the raw JSON: cdktf output in .demo, or npm run status -- --json there).
  process.stdout.write(`${renderStatusTable(readStatus(DEMO_DIR), process.stdout.isTTY === true && !process.env.NO_COLOR)}\n`);
  say(`done. ssh: ssh -i ${sb.privateKeyPath} -p ${sb.port} ${sb.user}@${sb.address}; remove everything: npm run demo -- down`);
  return 0;
}

async function down(): Promise<number> {
  let code = 0;
  if (fs.existsSync(path.join(DEMO_DIR, "cdktf.json"))) {
    say("cdktf destroy");
    code = await cdktf(["destroy", "--auto-approve"], { TF_VAR_pg_password: demoPassword(DEMO_DIR) });
  }
  await stopSandbox(SANDBOX_NAME);
  say(`sandbox ${SANDBOX_NAME} removed`);
  if (code === 0) fs.rmSync(DEMO_DIR, { recursive: true, force: true });
  else say(`destroy failed (exit ${code}); ${DEMO_DIR} kept for a look`);
  return code;
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const twin = args.includes("--twin");
  const rest = args.filter((a) => a !== "--twin");
  const command = rest[0] ?? "up";
  const run = command === "up" ? (twin ? twinUp : up) : command === "down" ? (twin ? twinDown : down) : undefined;
  if (!run || rest.length > 1) {
    say(`unknown arguments ${JSON.stringify(rest.join(" "))}; usage: npm run demo [-- up|down] [--twin]`);
    process.exit(2);
  }
  run().then(
    (code) => process.exit(code),
    (err) => {
      say(`failed: ${(err as Error).message}`);
      process.exit(1);
    },
  );
}
