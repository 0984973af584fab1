// `npm run sandbox [up|down|list|image] ...`: a sandbox VM for the no-cloud demo and for poking at by
// hand. Progress goes to stderr, so `up --json` prints exactly one JSON line on stdout.
import * as fs from "node:fs";
import * as path from "node:path";
import { type CommandOptions, optionsSynopsis, parseOptions } from "../../lib/operator/command-options";
import { BadUsage, type CommandSpec, EXIT, runCommand } from "../../lib/operator/exit-codes";
import { streamLog } from "../../lib/shared/progress-line";
import { loginUserCloudConfig, multipartUserData, userDataKind } from "./cloud-init";
import { ensureBaseRootfs } from "./image";
import {
  type CloudInitOptions,
  listSandboxes,
  newSandboxName,
  sandboxSupportProblems,
  startSandbox,
  stopSandbox,
} from "./index";

import { DEFAULT_RELEASE, RELEASE_ENV, RELEASES, releaseOption } from "./release";
import { runDirOf } from "./state";

const UP = {
  json: { type: "boolean" },
  release: { type: "string", multiple: true, arg: "R" },
  "user-data": { type: "string", arg: "FILE" },
  user: { type: "string", arg: "NAME" },
} as const;
const DOWN = { all: { type: "boolean" } } as const;
const IMAGE = { rebuild: { type: "boolean" }, release: { type: "string", multiple: true, arg: "R" } } as const;

const USAGE = `usage: npm run sandbox -- [command] [options]
  up [name] ${optionsSynopsis(UP)}
                                     boot a sandbox VM (default command); it keeps running after this exits.
                                     --user-data: boot it with cloud-init, as a cloud would: NAME (default
                                     ubuntu) with the sandbox's key, then FILE (#cloud-config, #! or MIME multipart)
  down <name> | --all                remove one sandbox, or with --all every sandbox on this machine (the tests'
                                     and other people's too)
  list                               show sandboxes: name, status, address, release
  image ${optionsSynopsis(IMAGE).padEnd(28)} build (or rebuild) the cached base image of a release
releases (R): ${Object.entries(RELEASES)
  .map(([r, v]) => `${r} (Debian ${v})`)
  .join(", ")}; default ${DEFAULT_RELEASE}, or $${RELEASE_ENV} when set`;

const err = (l: string) => process.stderr.write(`${l}\n`);
/** The library's progress; on a terminal the image build is one updating line. */
const progress = streamLog(process.stderr, "sandbox: ");

const COMMAND: CommandSpec = { name: "sandbox", usage: USAGE };

/** One line naming what is missing on a machine that cannot run sandboxes, and the error exit code. */
function requireSupport(): void {
  const problems = sandboxSupportProblems();
  if (problems.length) {
    err(`sandbox: cannot run here: ${problems.join("; ")}`);
    process.exit(EXIT.error);
  }
}

/** `command`'s options and at most `positionals` arguments, parsed with its table; BadUsage names the command. */
function parsed<const T extends CommandOptions>(command: string, options: T, args: string[], positionals: number) {
  try {
    return parseOptions(options, args, positionals);
  } catch (e) {
    throw new BadUsage(`${command}: ${(e as Error).message}`);
  }
}

/** `--user-data FILE`: the platform's part (the login user with the sandbox's key), then the file's. */
function cloudInitOf(file: string | undefined, user: string): CloudInitOptions | undefined {
  if (file === undefined) return undefined;
  const text = fs.readFileSync(file, "utf8");
  if (!userDataKind(text)) {
    throw new BadUsage(`up: ${file} is not user-data: start it with #cloud-config, #! or MIME multipart headers`);
  }
  return {
    userData: (pub) =>
      multipartUserData([
        { text: loginUserCloudConfig(user, pub), filename: "sandbox-login.cfg" },
        { text, filename: path.basename(file) },
      ]),
  };
}

/** `--release` of up and image, else $VM_INSTALL_SANDBOX_RELEASE, else bookworm; a bad name is a usage error. */
function releaseArg(values: readonly string[] | undefined): ReturnType<typeof releaseOption> {
  try {
    return releaseOption(values);
  } catch (e) {
    throw new BadUsage((e as Error).message);
  }
}

async function up(argv: string[]): Promise<void> {
  const { values, positionals } = parsed("up", UP, argv, 1);
  const release = releaseArg(values.release);
  const userData = values["user-data"];
  const user = values.user;
  if (user && !userData) {
    throw new BadUsage("up: --user goes with --user-data (without it the login user is the image's ubuntu)");
  }
  const cloudInit = cloudInitOf(userData, user ?? "ubuntu");
  const json = values.json === true;
  requireSupport();
  const name = positionals[0] ?? newSandboxName();
  // ^C during the boot leaves nothing half-made; once `up` has returned, only `down` removes it.
  const abort = (sig: NodeJS.Signals) => {
    err(`sandbox: ${sig} while starting ${name}: removing it`);
    stopSandbox(name).finally(() => process.exit(130));
  };
  process.once("SIGINT", abort);
  process.once("SIGTERM", abort);
  const sb = await startSandbox({ name, persistent: true, release, log: progress, user, cloudInit });
  process.removeListener("SIGINT", abort);
  process.removeListener("SIGTERM", abort);
  if (json) {
    const { address, port, user, privateKeyPath, hostKeySha256, name, release } = sb;
    process.stdout.write(`${JSON.stringify({ address, port, user, privateKeyPath, hostKeySha256, name, release })}\n`);
    return;
  }
  const t = sb.timings;
  process.stdout.write(
    [
      `sandbox ${sb.name} (Debian ${RELEASES[sb.release]}, ${sb.release}) is up ` +
        `(boot to SSH ${(t.bootToSsh / 1000).toFixed(1)} s, total ${(t.total / 1000).toFixed(1)} s)`,
      `  address          ${sb.address}`,
      `  port             ${sb.port}`,
      `  user             ${sb.user}`,
      `  private key      ${sb.privateKeyPath}`,
      `  host key         ${sb.hostKeySha256}`,
      `  host side        ${sb.hostAddress} (the target reaches the host here)`,
      `  ssh              ssh -i ${sb.privateKeyPath} -o UserKnownHostsFile=${sb.knownHostsPath} ` +
        `-o StrictHostKeyChecking=yes ${sb.user}@${sb.address}`,
      `  remove           npm run sandbox down ${sb.name}`,
      "",
    ].join("\n"),
  );
}

async function down(args: string[]): Promise<void> {
  const { values, positionals: named } = parsed("down", DOWN, args, 1);
  const all = values.all === true;
  if (all && named.length > 0) throw new BadUsage(`down: expected one name or --all, got ${args.join(" ")}`);
  // Every sandbox on the machine is more than a forgotten name should remove: the tests' and other people's.
  if (!all && named.length === 0)
    throw new BadUsage(
      "down: which sandbox? name it (npm run sandbox -- list shows them), or pass --all for every one",
    );
  requireSupport();
  const names = all ? listSandboxes().map((s) => s.name) : named;
  if (!names.length) {
    err("sandbox: nothing to remove");
    return;
  }
  for (const name of names) {
    const t = Date.now();
    if (!fs.existsSync(runDirOf(name))) {
      // Still swept: a claim or namespace by that name may outlive its run directory after a crash.
      await stopSandbox(name);
      err(`sandbox: no sandbox named ${name} (no ${runDirOf(name)}): nothing to remove`);
      continue;
    }
    await stopSandbox(name);
    err(`sandbox: removed ${name} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
  }
}

function list(args: string[]): void {
  parsed("list", {}, args, 0);
  const all = listSandboxes();
  if (!all.length) {
    err("sandbox: none running");
    return;
  }
  const rows = all.map((s) => [
    s.name,
    s.alive ? s.status : `${s.status} (dead)`,
    s.address ?? "-",
    s.release ?? "-",
    s.persistent ? "cli" : "test",
    s.pid ? String(s.pid) : "-",
    s.createdAt ?? "-",
  ]);
  const head = ["NAME", "STATUS", "ADDRESS", "RELEASE", "OWNER", "PID", "CREATED"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  for (const r of [head, ...rows])
    process.stdout.write(
      `${r
        .map((c, i) => c.padEnd(widths[i]))
        .join("  ")
        .trimEnd()}\n`,
    );
}

async function image(argv: string[]): Promise<void> {
  const { values } = parsed("image", IMAGE, argv, 0);
  const release = releaseArg(values.release);
  const rebuild = values.rebuild === true;
  requireSupport();
  const t = Date.now();
  const img = await ensureBaseRootfs(progress, { rebuild, release });
  process.stdout.write(`${img.tarball}\n`);
  err(`sandbox: ${release} base image ready in ${((Date.now() - t) / 1000).toFixed(1)} s (rootfs ${img.rootfs})`);
}

async function main(argv: string[]): Promise<void> {
  const [first, ...rest] = argv;
  // `npm run sandbox` alone, or `npm run sandbox -- --json` / `-- myname`, mean `up`.
  const commands = ["up", "down", "list", "image", "help"];
  const cmd = first && commands.includes(first) ? first : first === "-h" || first === "--help" ? "help" : "up";
  const args = cmd === "up" && first !== "up" ? argv : rest;
  switch (cmd) {
    case "up":
      return up(args);
    case "down":
      return down(args);
    case "list":
      return list(args);
    case "image":
      return image(args);
    default:
      process.stdout.write(`${USAGE}\n`);
  }
}

runCommand(COMMAND, process.argv.slice(2), async (argv) => {
  try {
    await main(argv);
    return EXIT.ok;
  } catch (e) {
    if (e instanceof BadUsage) throw e;
    err(`sandbox: ${(e as Error).message}`);
    // At once: a half-started sandbox's children and timers would keep this process alive.
    process.exit(EXIT.error);
  }
});
