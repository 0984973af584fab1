// The no-cloud demo: boots a sandbox VM, deploys the stack with all three installers against it through
// real `cdktf deploy` (local job target, existing host: only Terraform built-ins), prints the outputs.
//   npm run demo            up: sandbox + deploy + outputs (rerun: deploys again, changes nothing)
//   npm run demo -- down    destroy the stack, remove the sandbox and the demo folder
//   npm run demo -- --twin  the production shape (nubes VM, sless jobs) against the local twin (dev/demo/twin-demo.ts)
// The demo's own cdktf project lives in .demo/ (gitignored); its app is this checkout's main.ts.
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_ROOT } from "../../lib/entry-points";
import { optionsSynopsis, parseOptions } from "../../lib/operator/command-options";
import { BadUsage, type CommandSpec, EXIT, runCommand } from "../../lib/operator/exit-codes";
import { readStatus } from "../../lib/operator/status/deployed-status";
import { renderStatusTable } from "../../lib/operator/status/status-table";
import { progressLineOnly, streamLog } from "../../lib/shared/progress-line";
import {
  getSandbox,
  listSandboxes,
  type Sandbox,
  sandboxSupportProblems,
  startSandbox,
  stopSandbox,
} from "../sandbox/index";
import { DeploySummary } from "./deploy-summary";
import { demoPassword, existingHost, runCdktf, writeCdktfProject } from "./project";
import { twinDown, twinUp } from "./twin-demo";

const DEMO_DIR = path.join(PROJECT_ROOT, ".demo");
const SANDBOX_NAME = "vm-install-demo";

/** Progress on stderr; on a terminal, long steps (the image build, the deploy) show one updating line. */
const say = streamLog(process.stderr, "demo: ");

/** A path as the person can use it from where they are: relative when under the current folder. */
function shown(file: string): string {
  const rel = path.relative(process.cwd(), file);
  return rel.startsWith("..") || path.isAbsolute(rel) ? file : rel;
}

/** The demo's cdktf.json context: one existing host (the sandbox), every installer, jobs run locally. */
export function demoContext(sb: {
  address: string;
  port: number;
  user: string;
  privateKeyPath: string;
  hostKeySha256: string;
}) {
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

/**
 * `cdktf <command> --auto-approve` in the demo folder, summarized (dev/demo/deploy-summary.ts): a line for the
 * plan, each job's result and the outcome; on a failure Terraform's error. The whole output goes to
 * .demo/cdktf-<command>.log, which the first line names.
 */
async function cdktf(command: "deploy" | "destroy", what: string, env: Record<string, string> = {}): Promise<number> {
  const logFile = path.join(DEMO_DIR, `cdktf-${command}.log`);
  say(`cdktf ${command} (${what}); its full output: ${shown(logFile)}`);
  const progress = progressLineOnly(say);
  const summary = new DeploySummary(readStackName(), command, say, progress);
  const { code } = await runCdktf(DEMO_DIR, [command, "--auto-approve"], {
    env,
    logFile,
    onLine: (l) => summary.line(l),
  });
  progress.end();
  summary.finish(code);
  if (code !== 0) for (const line of summary.failure()) say(`  ${line}`);
  return code;
}

function readStackName(): string {
  return JSON.parse(fs.readFileSync(path.join(DEMO_DIR, "cdktf.json"), "utf8")).context.vmInstall.stackName;
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
    sb = await startSandbox({ name: SANDBOX_NAME, persistent: true, log: say });
    say(`sandbox ${sb.name} up at ${sb.address}:${sb.port}, host key ${sb.hostKeySha256}`);
  }
  writeCdktfProject(DEMO_DIR, demoContext(sb));
  const code = await cdktf("deploy", "packages -> docker -> postgres", { TF_VAR_pg_password: demoPassword(DEMO_DIR) });
  if (code !== 0) {
    say(
      `deploy failed (exit ${code}); fix what it said above and run \`npm run demo\` again, ` +
        "or `npm run demo -- down`",
    );
    return code;
  }
  say(
    `deployed. ssh: ssh -i ${sb.privateKeyPath} -p ${sb.port} ${sb.user}@${sb.address}; ` +
      "remove everything: npm run demo -- down",
  );
  // The deployed state as a table, last (the raw JSON: cdktf output in .demo, or npm run status -- --json there).
  process.stdout.write(
    `${renderStatusTable(readStatus(DEMO_DIR), process.stdout.isTTY === true && !process.env.NO_COLOR)}\n`,
  );
  return 0;
}

async function down(): Promise<number> {
  let code = 0;
  if (fs.existsSync(path.join(DEMO_DIR, "cdktf.json"))) {
    code = await cdktf("destroy", "the jobs' records; the sandbox goes next", {
      TF_VAR_pg_password: demoPassword(DEMO_DIR),
    });
  }
  await stopSandbox(SANDBOX_NAME);
  say(`sandbox ${SANDBOX_NAME} removed`);
  if (code === 0) fs.rmSync(DEMO_DIR, { recursive: true, force: true });
  else say(`destroy failed (exit ${code}); ${DEMO_DIR} kept for a look`);
  return code;
}

const OPTIONS = { twin: { type: "boolean" } } as const;
const COMMAND: CommandSpec = { name: "demo", usage: `usage: npm run demo [-- up|down] ${optionsSynopsis(OPTIONS)}` };

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseOptions(OPTIONS, argv, 1);
  const command = positionals[0] ?? "up";
  const twin = values.twin === true;
  const run = command === "up" ? (twin ? twinUp : up) : command === "down" ? (twin ? twinDown : down) : undefined;
  if (!run) throw new BadUsage(`unknown command ${JSON.stringify(command)}`);
  try {
    return await run();
  } catch (err) {
    say(`failed: ${(err as Error).message}`);
    return EXIT.error;
  }
}

if (require.main === module) runCommand(COMMAND, process.argv.slice(2), main, { exit: true });
