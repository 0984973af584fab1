// The production shape of the stack against the local twin of Nubes and sless: one `nubes` VM (the twin
// boots a sandbox for it), the host-key probe and all three installers as sless jobs, through real
// `cdktf deploy`; the same outputs as a real deploy.
//   npm run demo -- --twin          install the twin, deploy, print the outputs (rerun: changes nothing)
//   npm run demo -- down --twin     destroy (delete_mode delete removes the VM) and remove the folder
// Its cdktf project lives in .demo-twin/ (gitignored), with its own VM key pair and twin installation.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { PROJECT_ROOT } from "../../lib/entry-points";
import { sandboxSupportProblems } from "../sandbox/index";
import { TWIN_CDKTF_FLAGS, twinDeployEnv } from "../twin/deploy-env";
import { installTwin } from "../twin/install";
import { demoPassword, runCdktf, writeCdktfProject } from "./project";

const TWIN_DEMO_DIR = path.join(PROJECT_ROOT, ".demo-twin");
const KEY = path.join(TWIN_DEMO_DIR, "vm_key");

const say = (line: string) => process.stderr.write(`demo (twin): ${line}\n`);

/** The production defaults (kind nubes, jobTarget sless), with every installer on. */
export function twinDemoContext() {
  return {
    stackName: "vm-install-twin-demo",
    nubes: { vdcUid: "twin-vdc", nsxtUid: "twin-nsxt", deleteMode: "delete" },
    installers: {
      packages: { enabled: true, packages: ["git", "curl", "jq", "htop", "unzip"] },
      // The twin's VMs reach Debian's mirror only: the distribution's Docker, verified without a registry.
      docker: { enabled: true, channel: "distro", verify: "daemon", compose: false },
      postgres: { enabled: true, passwordVariable: "pg_password", dbName: "demo", dbUser: "demo_user" },
    },
    vms: [{ name: "demo", publicKeyPath: `${KEY}.pub`, privateKeyPath: KEY }],
  };
}

async function cdktf(args: string[]): Promise<number> {
  const env = {
    ...twinDeployEnv(installTwin(path.join(TWIN_DEMO_DIR, ".twin"))),
    TF_VAR_pg_password: demoPassword(TWIN_DEMO_DIR),
  };
  return (await runCdktf(TWIN_DEMO_DIR, [...args, ...TWIN_CDKTF_FLAGS], { env, echo: true })).code;
}

export async function twinUp(): Promise<number> {
  const problems = sandboxSupportProblems();
  if (problems.length) {
    say(`cannot run here (the twin's VMs are sandboxes): ${problems.join("; ")}`);
    return 2;
  }
  fs.mkdirSync(TWIN_DEMO_DIR, { recursive: true });
  if (!fs.existsSync(KEY))
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "vm-install-twin-demo", "-f", KEY]);
  writeCdktfProject(TWIN_DEMO_DIR, twinDemoContext());
  say("cdktf deploy against the twin: vApp + VM (a sandbox boots), host-key probe, packages -> docker -> postgres");
  const code = await cdktf(["deploy", "--auto-approve"]);
  if (code !== 0) {
    say(
      `deploy failed (exit ${code}); read the job's message above, fix, and run \`npm run demo -- --twin\` again, ` +
        "or `npm run demo -- down --twin`",
    );
    return code;
  }
  await cdktf(["output"]);
  say(`done. ssh: ssh -i ${KEY} ubuntu@<demo_address above>; remove everything: npm run demo -- down --twin`);
  return 0;
}

export async function twinDown(): Promise<number> {
  if (!fs.existsSync(path.join(TWIN_DEMO_DIR, "cdktf.json"))) {
    say("nothing deployed (no .demo-twin/cdktf.json)");
    return 0;
  }
  say("cdktf destroy against the twin (delete_mode delete: the VM's sandbox is removed)");
  const code = await cdktf(["destroy", "--auto-approve"]);
  if (code === 0) fs.rmSync(TWIN_DEMO_DIR, { recursive: true, force: true });
  else say(`destroy failed (exit ${code}); ${TWIN_DEMO_DIR} kept for a look`);
  return code;
}
