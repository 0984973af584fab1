// Installs the twin providers without a network: a filesystem mirror holding one launcher per provider
// (a small shell script that runs this checkout's TypeScript), and a Terraform CLI configuration whose
// provider_installation takes exactly those two source addresses from the mirror. Terraform then
// `init`s, checks version constraints and records the lock file as it would for the real providers;
// the production stack is not changed in any way (only TF_CLI_CONFIG_FILE points elsewhere).
//   npm run twin -- install [--dir DIR]     prints the TF_CLI_CONFIG_FILE line to export

import * as fs from "node:fs";
import * as path from "node:path";
import { ENTRY_POINTS, PROJECT_ROOT } from "../../lib/entry-points";
import { optionsSynopsis, parseOptions } from "../../lib/operator/command-options";
import { BadUsage, type CommandSpec, EXIT, runCommand } from "../../lib/operator/exit-codes";
import { quote } from "../../lib/shared/shell-quote";
import { twinDeployEnv } from "./deploy-env";
import { loadProviderSchema } from "./protocol/schema";

const DEFAULT_TWIN_DIR = path.join(PROJECT_ROOT, ".cache", "twin");

/** The versions the twins announce: nubes is the public build the stack pins; sless has no published one. */
const TWIN_PROVIDERS = [
  { name: "nubes", version: "2.0.0", entry: "nubes-provider.ts" },
  { name: "sless", version: "1.0.0", entry: "sless-provider.ts" },
] as const;

function platform(): string {
  const arch = { x64: "amd64", arm64: "arm64", ia32: "386" }[process.arch as string] ?? process.arch;
  return `${process.platform}_${arch}`;
}

function launcher(entry: string, source: string): string {
  return [
    "#!/bin/sh",
    `# The vm-install twin of ${source}, written by \`npm run twin -- install\`: runs the TypeScript provider`,
    "# of this checkout (dev/twin/) with the Node that installed it.",
    `exec ${quote(process.execPath)} -r ${quote(ENTRY_POINTS.tsRegister)} ` +
      `${quote(path.join(PROJECT_ROOT, "dev", "twin", entry))} "$@"`,
    "",
  ].join("\n");
}

export interface TwinInstallation {
  /** The CLI configuration to use: TF_CLI_CONFIG_FILE=<this>. */
  cliConfig: string;
  mirror: string;
  /** Source address -> version, as served. */
  providers: Record<string, string>;
}

/** Writes (or rewrites, identically) the mirror and the CLI configuration under `dir`. */
export function installTwin(dir = DEFAULT_TWIN_DIR): TwinInstallation {
  const mirror = path.join(dir, "mirror");
  const providers: Record<string, string> = {};
  for (const p of TWIN_PROVIDERS) {
    const source = loadProviderSchema(p.name).source;
    const pkg = path.join(mirror, source, p.version, platform());
    fs.mkdirSync(pkg, { recursive: true });
    const file = path.join(pkg, `terraform-provider-${p.name}_v${p.version}`);
    const text = launcher(p.entry, source);
    if (!fs.existsSync(file) || fs.readFileSync(file, "utf8") !== text) fs.writeFileSync(file, text);
    fs.chmodSync(file, 0o755);
    providers[source] = p.version;
  }
  const sources = Object.keys(providers).map((s) => JSON.stringify(s));
  const cliConfig = path.join(dir, "terraformrc");
  fs.writeFileSync(
    cliConfig,
    [
      "# Written by `npm run twin -- install`: the Nubes and sless providers come from the twin's mirror,",
      "# anything else from its usual place.",
      "provider_installation {",
      "  filesystem_mirror {",
      `    path    = ${JSON.stringify(mirror)}`,
      `    include = [${sources.join(", ")}]`,
      "  }",
      "  direct {",
      `    exclude = [${sources.join(", ")}]`,
      "  }",
      "}",
      "",
    ].join("\n"),
  );
  return { cliConfig, mirror, providers };
}

const OPTIONS = { dir: { type: "string", arg: "DIR" } } as const;
const COMMAND: CommandSpec = { name: "twin", usage: `usage: npm run twin -- install ${optionsSynopsis(OPTIONS)}` };

/** `install [--dir DIR]`: the folder to install into (undefined: the default); BadUsage for anything else. */
function parseTwinArgs(args: readonly string[]): { dir?: string } {
  const { values, positionals } = parseOptions(OPTIONS, args, 1);
  const [command] = positionals;
  if (command !== "install") throw new BadUsage(command ? `unknown command ${command}` : "which command? install");
  return values.dir === undefined ? {} : { dir: path.resolve(values.dir) };
}

function main(args: string[]): number {
  const done = installTwin(parseTwinArgs(args).dir);
  for (const [source, version] of Object.entries(done.providers))
    process.stderr.write(`twin: ${source} ${version} -> ${done.mirror}\n`);
  process.stderr.write("twin: use it with:\n");
  // The deploy environment without the placeholder tokens (docs/twin.md's by-hand lines set those).
  const env = twinDeployEnv(done);
  const names = ["TF_CLI_CONFIG_FILE", "CDKTF_DISABLE_PLUGIN_CACHE_ENV", "TF_PLUGIN_CACHE_DIR"] as const;
  process.stdout.write(`export ${names.map((n) => `${n}=${env[n]}`).join(" ")}\n`);
  return EXIT.ok;
}

if (require.main === module) runCommand(COMMAND, process.argv.slice(2), main);
